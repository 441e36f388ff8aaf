"""The checker of q01's exercise: ``check_pooling_weights``."""

from __future__ import annotations

from functools import partial
from typing import Callable

import torch

from attention_qa.checks.common import as_answer, call_learner, diagnose, require_shape


def pooling_variant(queries, keys, bandwidth, bug: str | None = None):
    """Gaussian-kernel pooling weights (n, m) with one known slip switched on."""
    diffs = queries.unsqueeze(1) - keys.unsqueeze(0)  # (n, m)
    h = bandwidth
    scores = {
        "no_minus": diffs**2 / (2 * h**2),
        "not_squared": -diffs.abs() / (2 * h**2),
        "no_two": -(diffs**2) / h**2,
        "bandwidth_not_squared": -(diffs**2) / (2 * h),
    }.get(bug, -(diffs**2) / (2 * h**2))
    if bug == "not_normalised":
        return torch.exp(scores)
    return torch.softmax(scores, dim=0 if bug == "softmax_over_queries" else -1)


POOLING_SLIPS = {
    "softmax_over_queries": (
        "the softmax runs over the queries (dim=0): each query's weights must sum to 1 over "
        "the keys, so normalise along dim=-1"
    ),
    "no_minus": (
        "the minus sign is missing: near keys must get the largest weights, so the score is "
        "−(x − x_j)² / (2h²)"
    ),
    "not_squared": (
        "the distance is not squared: the Gaussian kernel uses (x − x_j)², not |x − x_j|"
    ),
    "no_two": "the factor 2 is missing: the score is −(x − x_j)² / (2h²), not −(x − x_j)² / h²",
    "bandwidth_not_squared": "the bandwidth is not squared: divide by 2h², not by 2h",
    "not_normalised": (
        "the weights are not normalised: exp(score) must be divided by its sum over the keys "
        "(that is what softmax does)"
    ),
}


def check_pooling_weights(fn: Callable) -> None:
    """Check ``fn(queries, keys, bandwidth) -> weights`` of Gaussian-kernel pooling.

    queries (n,), keys (m,), bandwidth a positive float; the weights are (n, m) with
    ``weights[i, j] = softmax_j(−(queries[i] − keys[j])² / (2·bandwidth²))``, the weights of
    ``attention.attention_pooling`` (Nadaraya, 1964; Watson, 1964).
    """
    from attention_qa.attention import attention_pooling

    g = torch.Generator().manual_seed(7)
    cases = [
        (
            "3 queries, 5 keys, bandwidth 0.5",
            torch.rand(3, generator=g) * 4,
            torch.rand(5, generator=g) * 4,
            0.5,
        ),
        (
            "1 query, 4 keys, bandwidth 2.0",
            torch.tensor([1.5]),
            torch.tensor([0.0, 1.0, 2.5, 4.0]),
            2.0,
        ),
        (
            "4 queries, 6 keys, one query far from every key, bandwidth 0.1",
            torch.tensor([0.0, 1.2, 2.6, 20.0]),
            torch.tensor([-3.0, 0.5, 1.0, 2.0, 6.0, 9.0]),
            0.1,
        ),
    ]
    for case, queries, keys, bandwidth in cases:
        _, expected = attention_pooling(queries, keys, torch.zeros_like(keys), bandwidth)
        n, m = queries.shape[0], keys.shape[0]
        got = call_learner(fn, case, queries.clone(), keys.clone(), bandwidth)
        got = as_answer(got, case, "the weights")
        if isinstance(got, torch.Tensor) and tuple(got.shape) == (m, n) and n != m:
            raise AssertionError(
                f"on {case}, the weights have shape {(m, n)} = (m, n): they should be "
                f"(n, m) = {(n, m)}, one row per query"
            )
        got = require_shape(got, (n, m), case, "the weights")
        diagnose(
            got, expected, case, "the weights", "softmax(−(x − x_j)² / (2h²)) over the keys",
            POOLING_SLIPS, partial(pooling_variant, queries, keys, bandwidth),
            nan_hint="exp of very negative scores underflows to 0 and 0/0 follows; use "
            "torch.softmax, which subtracts the largest score first",
        )
