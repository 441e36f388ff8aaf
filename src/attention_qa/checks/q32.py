"""The checker of q32's exercise: ``check_prefix_lm_mask``."""

from __future__ import annotations

from typing import Callable

import torch

from attention_qa.checks.common import call_learner, require_shape
from attention_qa.objectives import prefix_lm_mask

PREFIX_SLIPS = {
    "inverted": "True marks the blocked keys; the book's masks use True = may attend",
    "causal_only": "the prefix is ignored: inside the prefix every position sees the whole prefix",
    "prefix_sees_all": (
        "a prefix position sees keys after the prefix; only the prefix is bidirectional, "
        "nothing may see a later position outside it"
    ),
    "off_by_one": (
        "the prefix is one position too long: positions 0 … prefix_len − 1 form the prefix"
    ),
    "full": "every position sees every position; after the prefix attention is causal",
}


def prefix_mask_variant(n: int, prefix_len: int, bug: str | None = None) -> torch.Tensor:
    i = torch.arange(n).unsqueeze(1)  # (n, 1)
    j = torch.arange(n).unsqueeze(0)  # (1, n)
    if bug == "causal_only":
        return j <= i
    if bug == "prefix_sees_all":
        return (j <= i) | (i < prefix_len)
    if bug == "off_by_one":
        return (j <= i) | (j <= prefix_len)
    if bug == "full":
        return torch.ones(n, n, dtype=torch.bool)
    mask = (j <= i) | (j < prefix_len)
    return ~mask if bug == "inverted" else mask


def check_prefix_lm_mask(fn: Callable) -> None:
    """Check ``fn(n, prefix_len) -> (n, n)`` mask, True = may attend: query i sees key j
    when j ≤ i or j < prefix_len. Bool or 0/1 tensors of any dtype are accepted."""
    for n, prefix_len in ((6, 3), (5, 0), (4, 4), (8, 1), (7, 5)):
        case = f"n = {n}, prefix_len = {prefix_len}"
        got = require_shape(call_learner(fn, case, n, prefix_len), (n, n), case, "the mask")
        if not ((got == 0) | (got == 1)).all():
            raise AssertionError(f"on {case}, the mask should hold only True/False (or 1/0)")
        got = got.bool()
        if torch.equal(got, prefix_lm_mask(n, prefix_len)):
            continue
        for bug, message in PREFIX_SLIPS.items():
            if torch.equal(got, prefix_mask_variant(n, prefix_len, bug)):
                raise AssertionError(f"on {case}, {message}")
        raise AssertionError(f"on {case}, the mask differs from j ≤ i or j < prefix_len")
