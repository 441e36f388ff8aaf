import pytest
import torch

from attention_qa.explorers.head_layout import (
    LAYOUTS,
    head_layout,
    head_layout_explorer,
    head_layout_frame,
)
from attention_qa.panel import Frame


@pytest.fixture(scope="module")
def explorer():
    return head_layout_explorer()


def test_every_combination_computes(explorer):
    for settings in explorer.settings():
        assert isinstance(explorer.frame(**settings), Frame), settings


def test_figures_follow_pytorch():
    x = torch.arange(32).view(1, 4, 8)
    view = x.view(1, 4, 2, 4)
    transposed = view.transpose(1, 2)
    expected = {LAYOUTS[0]: view, LAYOUTS[1]: transposed, LAYOUTS[2]: transposed.contiguous()}
    for layout, t in expected.items():
        figures = head_layout_frame(2, 4, layout).figures
        assert figures["shape"] == str(tuple(t.shape))
        assert figures["stride"] == str(t.stride())
        assert figures["is_contiguous()"] == str(t.is_contiguous())


def test_transpose_scatters_head_0_and_contiguous_gathers_it():
    scattered = head_layout_frame(2, 4, LAYOUTS[1]).figures["head 0 reads memory cells"]
    gathered = head_layout_frame(2, 4, LAYOUTS[2]).figures["head 0 reads memory cells"]
    assert scattered == "0–3, 8–11, 16–19, 24–27" and gathered == "0–15"
    # One head owns all of memory; more heads cut it finer.
    assert head_layout_frame(1, 3, LAYOUTS[1]).figures["head 0 reads memory cells"] == "0–23"
    assert head_layout_frame(8, 2, LAYOUTS[1]).figures["head 0 reads memory cells"] == "0, 8"


def test_read_order_matches_the_tensor():
    for h in (1, 2, 4, 8):
        info = head_layout(h, 5, LAYOUTS[1])
        assert torch.equal(info["address"], info["tensor"].flatten())
        # Reading in logical order visits head 0 first, then head 1, ...
        assert torch.equal(info["heads_in_order"], torch.arange(h).repeat_interleave(40 // h))
    with pytest.raises(ValueError, match="layout must be one of"):
        head_layout(2, 4, "sideways")
