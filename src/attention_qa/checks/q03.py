"""The checker of q03's exercise: ``check_attend_one``."""

from __future__ import annotations

from functools import partial
from typing import Callable

import torch

from attention_qa.checks.common import as_answer, call_learner, diagnose, require_shape


def attend_one_variant(q, k, v, bug: str | None = None):
    """One query's attention output (d_v,) with one known slip switched on."""
    d_k = q.shape[-1]
    scores = k @ q  # (m,)
    scale = {
        "no_scale": 1.0,
        "scale_d_k": 1.0 / d_k,
        "scale_d_v": v.shape[-1] ** -0.5,
        "scale_m": k.shape[0] ** -0.5,
        "scale_after_softmax": 1.0,
    }.get(bug, d_k**-0.5)
    weights = torch.softmax(scores * scale, dim=-1)  # (m,)
    if bug == "scale_after_softmax":
        weights = weights / d_k**0.5
    if bug == "not_normalised":
        weights = torch.exp(scores * scale)
    if bug == "sum_values":
        weights = torch.ones_like(weights)
    if bug == "mean_values":
        weights = torch.full_like(weights, 1.0 / k.shape[0])
    return weights @ v  # (d_v,)


ATTEND_ONE_SLIPS = {
    "no_scale": "the scores are not scaled: divide each q·k_j by √d_k before the softmax",
    "scale_d_k": "the scores are divided by d_k instead of √d_k",
    "scale_d_v": "the scale uses d_v = V.shape[-1]; it must use d_k = len(q)",
    "scale_m": "the scale uses m, the number of keys; it must use d_k = len(q)",
    "scale_after_softmax": (
        "the scale is applied after the softmax: divide the scores by √d_k, then take softmax"
    ),
    "not_normalised": (
        "the weights are exp(score) without dividing by their sum: they must sum to 1"
    ),
    "sum_values": (
        "the output is the plain sum of the values, Σ_j v_j: each value must be multiplied "
        "by its weight first, Σ_j p_j v_j"
    ),
    "mean_values": (
        "the output is the plain mean of the values: the weights must come from the scores"
    ),
}


def check_attend_one(fn: Callable) -> None:
    """Check ``fn(q, k, v) -> output`` for one query written out step by step.

    q (d_k,), k (m, d_k), v (m, d_v); the output is (d_v,) =
    ``Σ_j softmax_j(q·k_j / √d_k) v_j``, compared with ``attention.scaled_dot_product_attention``;
    an (output, weights) pair is taken as its output.
    The last case has scores in the hundreds, which overflow a naive ``exp``.
    """
    from attention_qa.attention import scaled_dot_product_attention

    g = torch.Generator().manual_seed(5)
    cases = [
        ("q (4,), k (3, 4), v (3, 4)", 4, 3, 4, 1.0),
        ("q (6,), k (5, 6), v (5, 2)", 6, 5, 2, 1.0),
        ("q (8,), k (4, 8), v (4, 3) with scores in the hundreds", 8, 4, 3, 60.0),
    ]
    for case, d_k, m, d_v, size in cases:
        q = torch.randn(d_k, generator=g) * size
        k = torch.randn(m, d_k, generator=g)
        v = torch.randn(m, d_v, generator=g)
        expected = scaled_dot_product_attention(q.unsqueeze(0), k, v)[0][0]  # (d_v,)
        got = call_learner(fn, case, q.clone(), k.clone(), v.clone())
        # an (output, weights) pair: the output is asked for (not a tuple of d_v numbers)
        pair = isinstance(got, tuple) and len(got) == 2 and getattr(got[0], "ndim", 0) >= 1
        got = as_answer(got, case, "the output", output_only=pair)
        if isinstance(got, torch.Tensor) and tuple(got.shape) == (m,) and m != d_v:
            raise AssertionError(
                f"on {case}, you returned a vector of length m = {m}, the weights: the output "
                f"is the weighted sum of the values, of length d_v = {d_v}"
            )
        got = require_shape(got, (d_v,), case, "the output")
        diagnose(
            got, expected, case, "the output", "Σ_j softmax_j(q·k_j / √d_k) v_j",
            ATTEND_ONE_SLIPS, partial(attend_one_variant, q, k, v),
            nan_hint="exp of a large score overflows; subtract the largest score from every "
            "score before exp (softmax does)",
        )
