"""The checker of q22's exercise: ``check_previous_token_score``."""

from __future__ import annotations

from functools import partial
from typing import Callable

import torch

from attention_qa.checks.common import call_learner, diagnose, require_shape

PREVIOUS_TOKEN_SLIPS = {
    "self": "this is the weight on the token itself, w[i, i]: the previous token is w[i, i − 1]",
    "next": (
        "this is the weight on the next token, w[i, i + 1] (rows and columns swapped): "
        "query i is row i, and its previous token is column i − 1"
    ),
    "divide_by_n": (
        "the mean counts query 0, which has no previous token: average over the n − 1 "
        "queries i = 1 … n − 1"
    ),
}


def previous_token_variant(weights, bug: str | None = None):
    n = weights.shape[-1]
    if bug == "self":
        return weights.diagonal(dim1=-2, dim2=-1).mean(dim=-1)
    if bug == "next":
        return weights.diagonal(offset=1, dim1=-2, dim2=-1).mean(dim=-1)
    sub = weights.diagonal(offset=-1, dim1=-2, dim2=-1)  # (..., n − 1)
    return sub.sum(dim=-1) / n if bug == "divide_by_n" else sub.mean(dim=-1)


def check_previous_token_score(fn: Callable) -> None:
    """Check ``fn(weights)``: (..., n, n) maps → (...) mean over i ≥ 1 of w[i, i − 1]."""
    g = torch.Generator().manual_seed(22)

    def maps(*shape):
        return torch.softmax(torch.randn(*shape, generator=g, dtype=torch.float64), dim=-1)

    shift = torch.zeros(5, 5, dtype=torch.float64)
    shift[0, 0] = 1.0
    shift[torch.arange(1, 5), torch.arange(4)] = 1.0  # a perfect previous-token head
    cases = [
        ("one map of shape (6, 6)", maps(6, 6)),
        ("a perfect previous-token head of shape (5, 5)", shift),
        ("maps of shape (2, 3, 4, 4)", maps(2, 3, 4, 4)),
        ("maps of shape (3, 5, 5)", maps(3, 5, 5)),
    ]
    for case, weights in cases:
        expected = previous_token_variant(weights)
        got = call_learner(fn, case, weights.clone())
        if isinstance(got, float) and expected.ndim == 0:
            got = torch.tensor(got, dtype=torch.float64)
        got = require_shape(got, expected.shape, case, "the score")
        diagnose(
            got, expected, case, "the score", "the mean of w[i, i − 1]",
            PREVIOUS_TOKEN_SLIPS, partial(previous_token_variant, weights),
        )
