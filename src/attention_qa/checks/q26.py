"""The checker of q26's exercise: ``check_rms_norm``."""

from __future__ import annotations

from functools import partial
from typing import Callable

import torch

from attention_qa.checks.common import call_learner, diagnose, require_shape

RMS_NORM_SLIPS = {
    "mean": (
        "the mean is subtracted: that is LayerNorm without its bias; RMSNorm divides x itself "
        "by its root mean square, x / √(mean(x²) + eps)"
    ),
    "eps_outside": (
        "eps is added after the square root, x / (√mean(x²) + eps); it belongs inside it, "
        "x / √(mean(x²) + eps)"
    ),
    "no_weight": "the weight is not applied: the result must be x / √(mean(x²) + eps) · weight",
    "l2_norm": (
        "x is divided by its length √(sum(x²)); RMSNorm divides by the root *mean* square "
        "√(mean(x²)), √d_model times smaller"
    ),
    "no_sqrt": "x is divided by mean(x²) + eps; take its square root first",
    "wrong_axis": (
        "the mean square is taken over the sequence axis (dim −2); RMSNorm normalises each "
        "position's features, over the last axis"
    ),
}


def rms_norm_variant(x, weight, eps, bug: str | None = None):
    dim = -2 if bug == "wrong_axis" else -1
    if bug == "mean":
        x = x - x.mean(dim=-1, keepdim=True)
    mean_square = x.pow(2).mean(dim=dim, keepdim=True)  # (..., 1)
    if bug == "eps_outside":
        x_hat = x / (mean_square.sqrt() + eps)
    elif bug == "l2_norm":
        x_hat = x / torch.sqrt(x.pow(2).sum(dim=-1, keepdim=True) + eps)
    elif bug == "no_sqrt":
        x_hat = x / (mean_square + eps)
    else:
        x_hat = x / torch.sqrt(mean_square + eps)
    return x_hat if bug == "no_weight" else x_hat * weight


def check_rms_norm(fn: Callable) -> None:
    """Check ``fn(x, weight, eps)`` against ``torch.nn.functional.rms_norm`` over the last
    axis, on inputs of shape (..., d_model) with 0 to 3 leading
    dims, a non-zero mean and a small row."""
    g = torch.Generator().manual_seed(26)
    for case, shape, eps in (
        ("x of shape (2, 3, 8), eps 1e-6", (2, 3, 8), 1e-6),
        ("x of shape (3, 4, 6) with a small row, eps 0.1", (3, 4, 6), 0.1),
        # (..., d_model) with no, one and two leading dims besides (B, n)
        ("x of shape (8,), eps 1e-6", (8,), 1e-6),
        ("x of shape (5, 6), eps 1e-6", (5, 6), 1e-6),
        ("x of shape (2, 2, 3, 4), eps 1e-3", (2, 2, 3, 4), 1e-3),
    ):
        x = torch.randn(shape, generator=g, dtype=torch.float64) * 2 + 1
        if "small" in case:
            x[0, 0] = 0.05 * torch.randn(shape[-1], generator=g, dtype=torch.float64)
        weight = torch.randn(shape[-1], generator=g, dtype=torch.float64)
        expected = torch.nn.functional.rms_norm(x, x.shape[-1:], weight, eps)
        got = call_learner(fn, case, x.clone(), weight.clone(), eps)
        got = require_shape(got, expected.shape, case, "the output")
        diagnose(
            got, expected, case, "the output", "x / √(mean(x²) + eps) · weight over the last axis",
            RMS_NORM_SLIPS, partial(rms_norm_variant, x, weight, eps),
        )
