"""The checker of q05's exercise: ``check_additive_scores``."""

from __future__ import annotations

from functools import partial
from typing import Callable

import torch

from attention_qa.checks.common import as_answer, call_learner, diagnose, require_shape

ADDITIVE_SLIPS = {
    "no_tanh": (
        "the tanh is missing: without it w_vᵀ(W_q q + W_k k) splits into a query part plus a "
        "key part, and the query part cancels in the softmax; apply tanh before w_v"
    ),
    "tanh_after_w_v": (
        "the tanh is applied after w_v: the score is w_vᵀ tanh(W_q q + W_k k), tanh on the "
        "(..., n, m, d_hidden) features, then the dot product with w_v"
    ),
    "no_w_v": (
        "w_v is not used: the hidden features are summed instead of weighted by w_v; "
        "the score is w_vᵀ tanh(W_q q + W_k k)"
    ),
    "projections_swapped": (
        "W_q and W_k are swapped: the queries go through W_q and the keys through W_k"
    ),
    "weights_not_transposed": (
        "the projections are applied as q @ W_q instead of q @ W_qᵀ: W_q has shape "
        "(d_hidden, d_query), like an nn.Linear weight"
    ),
    "scores_transposed": (
        "the scores are transposed: they must be (..., n, m), one row per query, so "
        "broadcast the queries over the key axis (q_h.unsqueeze(-2) + k_h.unsqueeze(-3))"
    ),
}


def additive_variant(q, k, W_q, W_k, w_v, bug: str | None = None):
    """Additive scores w_vᵀ tanh(W_q q + W_k k) with one known slip switched on (None: none)."""
    if bug == "projections_swapped":
        W_q, W_k = W_k, W_q
    if bug == "weights_not_transposed":
        q_h, k_h = q @ W_q, k @ W_k
    else:
        q_h, k_h = q @ W_q.T, k @ W_k.T  # (..., n, d_hidden), (..., m, d_hidden)
    if bug == "scores_transposed":
        pre = q_h.unsqueeze(-3) + k_h.unsqueeze(-2)  # (..., m, n, d_hidden)
    else:
        pre = q_h.unsqueeze(-2) + k_h.unsqueeze(-3)  # (..., n, m, d_hidden)
    if bug == "no_tanh":
        return pre @ w_v
    if bug == "tanh_after_w_v":
        return torch.tanh(pre @ w_v)
    if bug == "no_w_v":
        return torch.tanh(pre).sum(dim=-1)
    return torch.tanh(pre) @ w_v  # (..., n, m)


def check_additive_scores(fn: Callable) -> None:
    """Check a learner's ``fn(q, k, W_q, W_k, w_v)`` for additive (Bahdanau) scores.

    q: (..., n, d_query), k: (..., m, d_key), W_q: (d_hidden, d_query), W_k:
    (d_hidden, d_key), w_v: (d_hidden,). It must return the scores
    ``w_vᵀ tanh(W_q q + W_k k)`` of shape (..., n, m) (Bahdanau et al., 2015, appendix
    A.1.2), the score of ``attention_qa.attention.AdditiveAttention``. The global random
    state is left untouched.
    """
    g = torch.Generator().manual_seed(5)
    cases = [
        ("q (4, 4), k (4, 4), d_hidden 4 (n = m, d_query = d_key = d_hidden)", (4, 4), (4, 4), 4),
        ("q (3, 6), k (5, 4), d_hidden 8", (3, 6), (5, 4), 8),
        ("q (2, 3, 5), k (2, 4, 5), d_hidden 6 (batch dims)", (2, 3, 5), (2, 4, 5), 6),
        ("q (2, 2, 3, 5), k (2, 2, 4, 7), d_hidden 6 (two batch dims)", (2, 2, 3, 5),
         (2, 2, 4, 7), 6),
    ]
    for case, q_shape, k_shape, d_hidden in cases:
        q = torch.randn(q_shape, generator=g, dtype=torch.float64)
        k = torch.randn(k_shape, generator=g, dtype=torch.float64)
        W_q = torch.randn(d_hidden, q_shape[-1], generator=g, dtype=torch.float64)
        W_k = torch.randn(d_hidden, k_shape[-1], generator=g, dtype=torch.float64)
        w_v = torch.randn(d_hidden, generator=g, dtype=torch.float64)
        m = k_shape[-2]
        expected = additive_variant(q, k, W_q, W_k, w_v)  # (..., n, m)
        got = call_learner(fn, case, q.clone(), k.clone(), W_q.clone(), W_k.clone(), w_v.clone())
        got = as_answer(got, case, "the scores")
        if isinstance(got, torch.Tensor) and got.shape != expected.shape:
            if tuple(got.shape) == (*expected.shape[:-2], m, q_shape[-2]):
                raise AssertionError(f"on {case}, {ADDITIVE_SLIPS['scores_transposed']}")
            if got.ndim == expected.ndim + 1 and got.shape[:-1] == expected.shape:
                raise AssertionError(
                    f"on {case}, the scores have shape {tuple(got.shape)}: the hidden axis "
                    f"(..., n, m, d_hidden) must be reduced by the dot product with w_v"
                )
        got = require_shape(got, expected.shape, case, "the scores")
        diagnose(
            got, expected, case, "the scores", "w_vᵀ tanh(W_q q + W_k k)",
            ADDITIVE_SLIPS, partial(additive_variant, q, k, W_q, W_k, w_v),
        )
