import pytest
import torch

from attention_qa.explorers.induction_heads import HEADS, OFF, induction_explorer, with_head_off
from attention_qa.induction import (
    EVAL_K,
    evaluation_batch,
    induction_scores,
    previous_token_scores,
    trained_model,
)
from attention_qa.panel import Frame


@pytest.fixture(scope="module")
def explorer():
    return induction_explorer()


def test_every_setting_computes(explorer):
    assert explorer.num_frames == len(HEADS) * len(OFF) <= 200
    for settings in explorer.settings():
        frame = explorer.frame(**settings)
        assert isinstance(frame, Frame), settings
        assert frame.data["map"].shape == (24, 24)
        assert torch.allclose(frame.data["map"].sum(-1), torch.ones(24), atol=1e-5)


def test_a_previous_token_head_in_layer_0_and_induction_heads_in_layer_1(explorer):
    prev = {h: float(explorer.frame(head=h, off="none").figures["previous-token score"])
            for h in HEADS}
    induction = {h: float(explorer.frame(head=h, off="none").figures["induction score"])
                 for h in HEADS}
    best = max(prev, key=prev.get)
    assert best[0] == 0 and prev[best] > 0.7
    assert all(induction[1, h] > 0.4 for h in range(4))
    assert all(induction[0, h] < 0.2 for h in range(4))


def test_switching_off_the_previous_token_head_breaks_induction(explorer):
    def accuracy(off):
        return float(explorer.frame(head=(1, 0), off=off).figures["accuracy on the second copy"]
                     .rstrip("%")) / 100

    full = accuracy("none")
    prev_head = max(((0, h) for h in range(4)),
                    key=lambda h: with_head_off("none")["previous-token"][h].item())
    assert full > 0.7 and accuracy(prev_head) < full - 0.4
    assert all(accuracy((1, h)) > full - 0.1 for h in range(4))  # layer 1 shares the work
    after = with_head_off(prev_head)["induction"][1]  # (h,)
    assert (after < 0.5 * with_head_off("none")["induction"][1]).all()


def test_scores_and_maps_are_the_lesson_module_s(explorer):
    model, _ = trained_model()
    x = evaluation_batch()
    with torch.no_grad():
        _, attn = model(x, return_attn=True)  # (layers, B, h, T, T)
    frame = explorer.frame(head=(1, 2), off="none")
    assert frame.figures["induction score"] == f"{induction_scores(attn[1], EVAL_K)[2]:.2f}"
    assert frame.figures["previous-token score"] == f"{previous_token_scores(attn[1])[2]:.2f}"
    assert torch.equal(frame.data["map"], attn[1, 0, 2])
    # a head switched off in layer 1 leaves the layer-1 maps as they were: only layer 0 feeds them
    assert torch.equal(explorer.frame(head=(1, 2), off=(1, 0)).data["map"], attn[1, 0, 2])
    assert not torch.equal(explorer.frame(head=(1, 2), off=(0, 2)).data["map"], attn[1, 0, 2])
