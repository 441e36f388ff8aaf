"""The checker of q11's exercise: ``check_attention_flops``."""

from __future__ import annotations

from functools import partial
from typing import Callable

from attention_qa.checks.common import _number, call_learner, first_slip


def flops_variant(batch: int, n: int, m: int, d: int, h: int, bug: str | None = None) -> float:
    """Matrix-product FLOPs of multi-head attention with one known slip (None: no slip)."""
    d_k = d // h
    projections = 2 * batch * (2 * n * d * d + 2 * m * d * d)  # W_Q, W_O on n; W_K, W_V on m
    if bug == "no_output_projection":
        projections -= 2 * batch * n * d * d
    if bug == "all_on_n":
        projections = 2 * batch * 4 * n * d * d
    attention = 2 * batch * 2 * n * m * d  # Q Kᵀ and weights × V, all heads together
    if bug == "per_head_d_k_squared":
        attention = 2 * batch * 2 * n * m * d_k  # one head's width counted once
    if bug == "full_width_heads":
        projections, attention = h * projections, h * attention
    if bug == "scores_only":
        attention //= 2
    total = projections + attention
    if bug == "multiply_adds":
        total //= 2
    return total


FLOPS_SLIPS = {
    "multiply_adds": (
        "you counted multiply-adds: a multiply-add is 2 FLOPs (one multiply, one add), so a "
        "(p × q) @ (q × r) product costs 2·p·q·r FLOPs"
    ),
    "full_width_heads": (
        "the count grows h-fold: each head works in d_k = d_model / h, so the h heads together "
        "cost what one full-width head costs"
    ),
    "per_head_d_k_squared": (
        "the attention products are counted for one head only: Q Kᵀ and weights × V cost "
        "2·B·n·m·d_k per head, times h heads = 2·B·n·m·d_model each"
    ),
    "no_output_projection": "the output projection W_O (2·B·n·d_model²) is missing",
    "scores_only": "only Q Kᵀ is counted: the weights × V product costs as much again",
    "all_on_n": (
        "every projection is counted on the n queries: W_K and W_V run on the m keys and "
        "values (2·B·m·d_model² each)"
    ),
}


def check_attention_flops(fn: Callable) -> None:
    """Check ``fn(batch, n, m, d_model, num_heads) -> FLOPs`` of one multi-head attention.

    The reference is ``attention_qa.multihead.attention_flops``: matrix products only,
    a multiply-add counting as 2 FLOPs, as ``torch.utils.flop_counter.FlopCounterMode``
    counts them. The answer must not depend on ``num_heads``.
    """
    from attention_qa.multihead import attention_flops

    cases = [
        ("batch=1, n=m=4, d_model=8, num_heads=4", 1, 4, 4, 8, 4),
        ("batch=2, n=3, m=5, d_model=12, num_heads=3 (cross-attention)", 2, 3, 5, 12, 3),
        ("batch=3, n=m=16, d_model=64, num_heads=8", 3, 16, 16, 64, 8),
        ("batch=1, n=7, m=2, d_model=32, num_heads=1", 1, 7, 2, 32, 1),
    ]
    for case, batch, n, m, d, h in cases:
        expected = attention_flops(batch, n, m, d)
        got = call_learner(fn, case, batch, n, m, d, h)
        got = _number(got, case)  # a Python, NumPy or one-element tensor number
        if got == expected:
            continue
        # a slip that gives the right number on this case (full-width heads when h = 1)
        # is skipped
        first_slip(got, case, FLOPS_SLIPS, partial(flops_variant, batch, n, m, d, h), expected)
        raise AssertionError(
            f"on {case}, got {got:,} FLOPs but one multi-head attention costs {expected:,}: "
            f"projections 2·B·(2n + 2m)·d_model², plus Q Kᵀ and weights × V at "
            f"2·B·n·m·d_model each"
        )
