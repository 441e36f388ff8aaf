"""q37's explorer agrees with the window mask, the cyclic-shift computation and Swin's costs."""

import pytest
import torch

from attention_qa.explorers.windows import (
    GRIDS,
    PATCHES,
    SEEN,
    SHIFTS,
    WIDTH,
    WINDOWS,
    patch_index,
    window_explorer,
)
from attention_qa.panel import InvalidSetting
from attention_qa.vision import msa_flops, window_attention, window_msa_flops


def attended_by_computation(grid, window, shift, r, c):
    """The keys patch (r, c) puts weight on, read off window_attention with one-hot values."""
    n = grid * grid
    q = torch.zeros(1, n, 1, dtype=torch.float64)
    v = torch.eye(n, dtype=torch.float64).unsqueeze(0)  # value j is the j-th unit vector
    out = window_attention(q, q, v, (grid, grid), window, shift)  # (1, n, n): row = weights
    return (out[0, r * grid + c] > 0).reshape(grid, grid)


@pytest.mark.parametrize("grid", GRIDS)
@pytest.mark.parametrize("window", WINDOWS)
@pytest.mark.parametrize("shift", SHIFTS)
@pytest.mark.parametrize("patch", PATCHES)
def test_every_frame_shows_what_window_attention_attends_to(grid, window, shift, patch):
    frame = window_explorer().frame(grid=grid, window=window, shift=shift, patch=patch)
    if grid % window:
        assert isinstance(frame, InvalidSetting)
        return
    r, c = patch_index(grid, patch)
    s = window // 2 if shift == "on" else 0
    seen = attended_by_computation(grid, window, s, r, c)
    image = torch.tensor(frame.data["image"])
    blue = (image - torch.tensor(SEEN)).abs().sum(-1) < 1e-12
    blue[r, c] = True  # the chosen patch, drawn red, attends to itself
    assert torch.equal(blue, seen)
    assert frame.figures["patches this patch attends to"] == f"{int(seen.sum())} of {grid**2}"
    ratio = window_msa_flops(grid, grid, WIDTH, window) / msa_flops(grid, grid, WIDTH)
    assert frame.data["costs"] == (1.0, ratio) and ratio < 1


def test_a_shift_lets_a_corner_patch_see_only_its_corner_piece():
    frame = window_explorer().frame(grid=8, window=4, shift="on", patch="top-left corner")
    assert frame.figures["patches this patch attends to"] == "4 of 64"
    frame = window_explorer().frame(grid=8, window=4, shift="off", patch="top-left corner")
    assert frame.figures["patches this patch attends to"] == "16 of 64"
