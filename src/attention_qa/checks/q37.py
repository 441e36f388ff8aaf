"""The checker of q37's exercise: ``check_window_attention``."""

from __future__ import annotations

import math
from functools import partial
from typing import Callable

import torch

from attention_qa.checks.common import call_learner, diagnose, require_shape
from attention_qa.vision import window_attention

WINDOW_SLIPS = {
    "global": (
        "every patch attends to every patch: this is global attention; restrict each patch "
        "to the M × M window it lies in"
    ),
    "strips": (
        "the windows are runs of M² consecutive patches in row-major order (a reshape without "
        "the permute): a window is M rows by M columns, so split h into (h/M, M) and w into "
        "(w/M, M) and bring the two window indices together before flattening"
    ),
    "no_scale": "the scores are not divided by √d_k",
    "softmax_over_queries": (
        "the softmax runs over the queries (dim=-2); normalise each query's weights over the "
        "keys of its window (dim=-1)"
    ),
}


def window_attention_variant(q, k, v, window: int, bug: str | None = None):
    """Window attention on (B, h, w, d) grids, with one known slip switched on."""
    B, h, w, d = q.shape
    M = window
    if bug == "global":
        scores = q.reshape(B, h * w, d) @ k.reshape(B, h * w, d).transpose(-2, -1)
        out = (scores / math.sqrt(d)).softmax(-1) @ v.reshape(B, h * w, -1)
        return out.reshape(B, h, w, -1)
    if bug == "strips":
        qs, ks, vs = (x.reshape(B, -1, M * M, x.shape[-1]) for x in (q, k, v))
        out = (qs @ ks.transpose(-2, -1) / math.sqrt(d)).softmax(-1) @ vs
        return out.reshape(B, h, w, -1)
    flat = [x.reshape(B, h * w, x.shape[-1]) for x in (q, k, v)]
    if bug in ("no_scale", "softmax_over_queries"):
        return _by_hand(*flat, h, w, M, bug).reshape(B, h, w, -1)
    return window_attention(*flat, (h, w), M).reshape(B, h, w, -1)


def _by_hand(q, k, v, h, w, M, bug):
    B = q.shape[0]

    def part(x):  # (B, h·w, d) → (B, nW, M², d)
        x = x.reshape(B, h // M, M, w // M, M, -1).permute(0, 1, 3, 2, 4, 5)
        return x.reshape(B, -1, M * M, x.shape[-1])

    scores = part(q) @ part(k).transpose(-2, -1)
    if bug != "no_scale":
        scores = scores / math.sqrt(q.shape[-1])
    weights = scores.softmax(-2 if bug == "softmax_over_queries" else -1)
    out = (weights @ part(v)).reshape(B, h // M, w // M, M, M, -1).permute(0, 1, 3, 2, 4, 5)
    return out.reshape(B, h * w, -1)


def check_window_attention(fn: Callable) -> None:
    """Check ``fn(q, k, v, window) -> output``: q, k (B, h, w, d_k) and v (B, h, w, d_v) grids
    of patches, window M dividing h and w; output (B, h, w, d_v), each patch attending only to
    the patches of its own M × M window, compared with ``attention_qa.vision.window_attention``."""
    g = torch.Generator().manual_seed(37)
    cases = (
        ("a 4 × 4 grid, window 2, d_k = d_v = 8", (1, 4, 4), 8, 8, 2),
        ("a 6 × 9 grid, window 3, d_k = 4, d_v = 5", (2, 6, 9), 4, 5, 3),
        ("an 8 × 4 grid, window 4, d_k = d_v = 6", (1, 8, 4), 6, 6, 4),
    )
    for case, (B, h, w), d_k, d_v, window in cases:
        q = torch.randn(B, h, w, d_k, generator=g, dtype=torch.float64)
        k = torch.randn(B, h, w, d_k, generator=g, dtype=torch.float64)
        v = torch.randn(B, h, w, d_v, generator=g, dtype=torch.float64)
        expected = window_attention_variant(q, k, v, window)
        got = call_learner(fn, case, q.clone(), k.clone(), v.clone(), window)
        got = require_shape(got, expected.shape, case, "output")
        diagnose(got, expected, case, "output", "attention within each M × M window",
                 WINDOW_SLIPS, partial(window_attention_variant, q, k, v, window))
