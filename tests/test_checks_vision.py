"""check_window_attention (q37): independent right answers pass in float32 and float64,
each slip is named."""

import re

import pytest
import torch
import torch.nn.functional as F

from attention_qa.checks import check_window_attention
from attention_qa.checks.vision import WINDOW_SLIPS, window_attention_variant


def by_masked_sdpa(q, k, v, window):
    """Global attention under a mask that keeps pairs whose row // M and col // M agree."""
    B, h, w, _ = q.shape
    rows = torch.arange(h).repeat_interleave(w) // window  # (h·w,)
    cols = torch.arange(w).repeat(h) // window
    mask = (rows[:, None] == rows[None, :]) & (cols[:, None] == cols[None, :])
    out = F.scaled_dot_product_attention(q.flatten(1, 2), k.flatten(1, 2), v.flatten(1, 2),
                                         attn_mask=mask)
    return out.reshape(B, h, w, -1)


def by_window_loop(q, k, v, window):
    """One small attention per window, by slicing the grid."""
    out = torch.empty(*q.shape[:3], v.shape[-1], dtype=q.dtype)
    M = window
    for r in range(0, q.shape[1], M):
        for c in range(0, q.shape[2], M):
            qs, ks, vs = (x[:, r:r + M, c:c + M].flatten(1, 2) for x in (q, k, v))
            weights = torch.softmax(qs @ ks.transpose(-2, -1) / qs.shape[-1] ** 0.5, dim=-1)
            out[:, r:r + M, c:c + M] = (weights @ vs).unflatten(1, (M, M))
    return out


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
@pytest.mark.parametrize("right", [by_masked_sdpa, by_window_loop])
def test_right_answers_pass(right, dtype):
    check_window_attention(lambda q, k, v, w: right(q.to(dtype), k.to(dtype), v.to(dtype), w))


@pytest.mark.parametrize("bug", list(WINDOW_SLIPS))
def test_each_slip_is_named(bug):
    with pytest.raises(AssertionError, match=re.escape(WINDOW_SLIPS[bug])):
        check_window_attention(lambda q, k, v, w: window_attention_variant(q, k, v, w, bug))


def test_other_wrong_answers_fail():
    with pytest.raises(AssertionError, match="shape"):
        check_window_attention(lambda q, k, v, w: by_window_loop(q, k, v, w).flatten(1, 2))
    with pytest.raises(AssertionError, match="off by"):
        check_window_attention(lambda q, k, v, w: by_window_loop(q, k, v, w) * 0.9)
    with pytest.raises(AssertionError, match="raised"):
        check_window_attention(lambda q, k, v, w: q.reshape(-1, 7))
