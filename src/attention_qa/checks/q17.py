"""The checker of q17's exercise: ``check_layer_norm``."""

from __future__ import annotations

from functools import partial
from typing import Callable

import torch

from attention_qa.checks.common import call_learner, diagnose, require_shape

LAYER_NORM_SLIPS = {
    "unbiased": (
        "the variance is the unbiased one (divided by d_model − 1); LayerNorm divides by d_model "
        "(var(..., unbiased=False) or correction=0)"
    ),
    "no_mean": ("the mean is not subtracted: x / √(mean(x²) + eps) is RMSNorm, not LayerNorm"),
    "eps_outside": (
        "eps is added to the standard deviation, (x − mean) / (std + eps); it belongs inside "
        "the square root, (x − mean) / √(var + eps)"
    ),
    "wrong_axis": (
        "the statistics are taken over the sequence axis (dim −2); LayerNorm normalises each "
        "position's features, over the last axis"
    ),
    "batch_axis": (
        "the statistics are taken over the batch axis (dim 0), as BatchNorm does; LayerNorm "
        "normalises each position's features, over the last axis"
    ),
    "no_affine": "weight and bias are not applied: the result must be x̂ · weight + bias",
}


def layer_norm_variant(x, weight, bias, eps, bug: str | None = None):
    dim = {"wrong_axis": -2, "batch_axis": 0}.get(bug, -1)
    mean = x.mean(dim=dim, keepdim=True)
    var = x.var(dim=dim, unbiased=(bug == "unbiased"), keepdim=True)
    if bug == "no_mean":
        x_hat = x / torch.sqrt(x.pow(2).mean(dim=-1, keepdim=True) + eps)
    elif bug == "eps_outside":
        x_hat = (x - mean) / (torch.sqrt(var) + eps)
    else:
        x_hat = (x - mean) / torch.sqrt(var + eps)
    return x_hat if bug == "no_affine" else x_hat * weight + bias


def check_layer_norm(fn: Callable) -> None:
    """Check ``fn(x, weight, bias, eps)`` against ``torch.nn.functional.layer_norm`` over the
    last axis, on inputs of shape (..., d_model) with 0 to 3 leading dims, including a nearly
    constant row."""
    g = torch.Generator().manual_seed(17)
    cases = []
    for case, shape, eps in (
        ("x of shape (2, 3, 8), eps 1e-5", (2, 3, 8), 1e-5),
        ("x of shape (3, 4, 6) with a nearly constant row, eps 0.1", (3, 4, 6), 0.1),
        # (..., d_model) with no, one and two leading dims besides (B, n)
        ("x of shape (8,), eps 1e-5", (8,), 1e-5),
        ("x of shape (5, 6), eps 1e-5", (5, 6), 1e-5),
        ("x of shape (2, 2, 3, 4), eps 1e-3", (2, 2, 3, 4), 1e-3),
    ):
        x = torch.randn(shape, generator=g, dtype=torch.float64) * 3 + 2
        if "constant" in case:
            x[0, 0] = 0.5 + 0.01 * torch.randn(shape[-1], generator=g, dtype=torch.float64)
        weight = torch.randn(shape[-1], generator=g, dtype=torch.float64)
        bias = torch.randn(shape[-1], generator=g, dtype=torch.float64)
        cases.append((case, x, weight, bias, eps))
    for case, x, weight, bias, eps in cases:
        expected = torch.nn.functional.layer_norm(x, x.shape[-1:], weight, bias, eps)
        got = call_learner(fn, case, x.clone(), weight.clone(), bias.clone(), eps)
        got = require_shape(got, expected.shape, case, "the output")
        diagnose(
            got, expected, case, "the output",
            "(x − mean) / √(var + eps) · weight + bias over the last axis",
            LAYER_NORM_SLIPS, partial(layer_norm_variant, x, weight, bias, eps),
        )
