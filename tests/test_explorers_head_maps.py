import pytest
import torch

from attention_qa.explorers.head_maps import (
    HEAD_COUNTS,
    INPUTS,
    head_inputs,
    head_maps_explorer,
    head_weights,
)
from attention_qa.panel import Frame
from attention_qa.positional import sinusoidal_encoding


@pytest.fixture(scope="module")
def explorer():
    return head_maps_explorer()


def test_every_combination_computes(explorer):
    for settings in explorer.settings():
        frame = explorer.frame(**settings)
        assert isinstance(frame, Frame), settings
        h = settings["num_heads"]
        assert frame.data["weights"].shape == (h, 8, 8)
        assert frame.figures["d_k"] == str(32 // h)


def test_maps_are_attention_weights_and_heads_differ(explorer):
    for h in HEAD_COUNTS:
        weights = explorer.frame(num_heads=h, kind=INPUTS[0], seed=0).data["weights"]
        assert torch.allclose(weights.sum(-1), torch.ones(h, 8), atol=1e-5)
        if h > 1:
            assert (weights[0] - weights[1]).abs().max() > 0.05  # heads see it differently


def test_controls_change_the_maps():
    base = head_weights(4, INPUTS[0], 0)
    assert not torch.allclose(base, head_weights(4, INPUTS[0], 1))
    assert not torch.allclose(base, head_weights(4, INPUTS[1], 0))


def test_repeated_input_repeats_its_first_half():
    x = head_inputs("a sequence said twice")[0]  # (n, d_model)
    tokens = x - sinusoidal_encoding(8, 32)
    assert torch.allclose(tokens[:4], tokens[4:])
    with pytest.raises(ValueError, match="kind must be one of"):
        head_inputs("nonsense")


def test_fewer_heads_get_larger_maps():
    explorer = head_maps_explorer()
    sizes = []
    for h in HEAD_COUNTS:
        explorer.render(explorer.frame(num_heads=h, kind=INPUTS[0], seed=0))
        shown = [ax for ax in explorer.figure.axes if ax.get_visible() and ax.images]
        assert len(shown) == h
        sizes.append(shown[0].get_window_extent().width)
    assert sizes == sorted(sizes, reverse=True) and sizes[0] > 2 * sizes[-1]
