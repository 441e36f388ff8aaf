"""q32's explorer draws objective_layout, which agrees with the masks and corruptions."""

import pytest
import torch

from attention_qa.explorers.objectives import objective_explorer
from attention_qa.masks import causal_mask
from attention_qa.objectives import (
    EXAMPLE,
    EXAMPLE_PREFIX,
    EXAMPLE_SPANS,
    OBJECTIVES,
    objective_layout,
    prefix_lm_mask,
    span_corrupt,
)


def test_each_objective_s_mask_and_loss():
    n = len(EXAMPLE)
    causal = objective_layout("causal LM")
    assert torch.equal(causal["mask"], causal_mask(n)) and causal["loss"].all()
    assert causal["targets"][:-1] == EXAMPLE[1:]  # each position predicts the next word
    prefix = objective_layout("prefix LM")
    assert torch.equal(prefix["mask"], prefix_lm_mask(n, EXAMPLE_PREFIX))
    assert int(prefix["loss"].sum()) == len(prefix["targets"])  # one loss per prediction
    masked = objective_layout("masked LM")
    assert masked["mask"].all() and masked["inputs"].count("[MASK]") == int(masked["loss"].sum())
    assert [EXAMPLE[i] for i in torch.nonzero(masked["loss"]).flatten().tolist()] == \
        masked["targets"]
    span = objective_layout("span corruption")
    assert (span["inputs"], span["targets"]) == span_corrupt(EXAMPLE, EXAMPLE_SPANS)
    assert span["loss"] is None and span["mask"].all()


@pytest.mark.parametrize("objective", OBJECTIVES)
def test_every_frame_is_the_layout(objective):
    frame = objective_explorer().frame(objective=objective)
    layout = objective_layout(objective)
    assert torch.equal(frame.data["mask"], layout["mask"])
    assert frame.figures["the model reads"] == " ".join(layout["inputs"])


def test_an_unknown_objective_is_refused():
    with pytest.raises(ValueError, match="objective must be one of"):
        objective_layout("next sentence prediction")
