"""The checker of q45's exercise: ``check_gated_cross_attention``."""

from __future__ import annotations

import math
from functools import partial
from typing import Callable

import torch

from attention_qa.checks.common import call_learner, diagnose, require_shape

GATED_CROSS_ATTENTION_SLIPS = {
    "no_tanh": (
        "the gate multiplies by α itself (or by α clipped to [−1, 1], as clamp or hardtanh "
        "would, which equals α on this case); Flamingo squashes it first, tanh(α), so the "
        "gate stays within (−1, 1)"
    ),
    "sigmoid_gate": (
        "the gate is σ(α): at α = 0 that lets half the cross-attention through; tanh(0) = 0 "
        "closes it, which is why the frozen model starts unchanged"
    ),
    "no_residual": (
        "the residual is missing: the layer returns tanh(α) · attention only; it must add "
        "that to x, so a closed gate gives x back"
    ),
    "gate_on_residual": (
        "the gate multiplies the residual too, tanh(α) · (x + attention); only the new "
        "branch is gated: x + tanh(α) · attention"
    ),
    "no_scale": "the scores are not divided by √d (d = the width of w_q's output)",
    "scale_by_d_model": (
        "the scores are divided by √d_model (the width of x); the scale is √d, the width of "
        "w_q's output, the dimension the dot products run over"
    ),
    "softmax_over_queries": (
        "the softmax runs over the text positions (dim −2); each text token's weights must "
        "sum to 1 over the visual tokens, the last dim"
    ),
    "no_output_projection": "the output projection w_o is missing",
}


def gated_cross_attention_variant(x, media, w_q, w_k, w_v, w_o, alpha, bug: str | None = None):
    q = x @ w_q  # (..., n, d)
    k, v = media @ w_k, media @ w_v  # (..., m, d) each
    scores = q @ k.transpose(-2, -1)  # (..., n, m)
    if bug == "scale_by_d_model":
        scores = scores / math.sqrt(x.shape[-1])
    elif bug != "no_scale":
        scores = scores / math.sqrt(q.shape[-1])
    out = scores.softmax(dim=-2 if bug == "softmax_over_queries" else -1) @ v  # (..., n, d)
    if bug != "no_output_projection":
        out = out @ w_o  # (..., n, d_model)
    if bug == "no_tanh":
        gate = alpha
    elif bug == "clamped_gate":
        gate = alpha.clamp(-1, 1)
    elif bug == "sigmoid_gate":
        gate = torch.sigmoid(alpha)
    else:
        gate = torch.tanh(alpha)
    if bug == "no_residual":
        return gate * out
    if bug == "gate_on_residual":
        return gate * (x + out)
    return x + gate * out


CASES = (
    # case, x's shape, media's shape, d, alpha
    ("x (2, 5, 6), media (2, 7, 4), d 6, alpha 0.7", (2, 5, 6), (2, 7, 4), 6, 0.7),
    ("x (4, 6), media (9, 6), d 4, alpha −2.5", (4, 6), (9, 6), 4, -2.5),
    ("x (2, 2, 3, 4), media (2, 2, 5, 3), d 6, alpha 1.3", (2, 2, 3, 4), (2, 2, 5, 3), 6, 1.3),
    ("x (1, 4, 6), media (1, 3, 4), d 8, alpha 0 (a closed gate)", (1, 4, 6), (1, 3, 4), 8, 0.0),
)


def check_gated_cross_attention(fn: Callable) -> None:
    """Check ``fn(x, media, w_q, w_k, w_v, w_o, alpha)`` = x + tanh(α) ·
    softmax((x W_q)(media W_k)ᵀ / √d)(media W_v) W_o, one head, no biases, on x (..., n,
    d_model) and media (..., m, d_media) with 0, 1 and 2 leading dims, alpha a 0-dim tensor
    (0.7, −2.5, 1.3 and 0)."""
    g = torch.Generator().manual_seed(45)
    for case, x_shape, media_shape, d, a in CASES:
        d_model, d_media = x_shape[-1], media_shape[-1]
        x = torch.randn(x_shape, generator=g, dtype=torch.float64)
        media = 2 * torch.randn(media_shape, generator=g, dtype=torch.float64)
        w_q, w_k, w_v = (torch.randn(rows, d, generator=g, dtype=torch.float64)
                         for rows in (d_model, d_media, d_media))
        w_o = torch.randn(d, d_model, generator=g, dtype=torch.float64)
        alpha = torch.tensor(a, dtype=torch.float64)
        args = (x, media, w_q, w_k, w_v, w_o, alpha)
        expected = gated_cross_attention_variant(*args)
        got = call_learner(fn, case, *(t.clone() for t in args))
        got = require_shape(got, expected.shape, case, "the output")
        diagnose(
            got, expected, case, "the output", "x + tanh(α) · attention(x, media) W_o",
            GATED_CROSS_ATTENTION_SLIPS, partial(gated_cross_attention_variant, *args),
        )
