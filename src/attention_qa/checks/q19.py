"""The checker of q19's exercise: ``check_layer_flops``."""

from __future__ import annotations

from functools import partial
from typing import Callable

from attention_qa.checks.common import as_pair, call_learner, first_slip

LAYER_FLOPS_SLIPS = {
    "halved": "the counts are half the right ones: a multiply-add is 2 FLOPs",
    "swapped": "the two counts are swapped: attention is O(n²·d), recurrence O(n·d²)",
    "scores_only": (
        "the attention count covers only the scores QKᵀ; the weighted sum of the values "
        "costs as much again"
    ),
    "no_input_term": (
        "the recurrent count covers only hₜ₋₁W; every step also multiplies the input, xₜU"
    ),
}


def layer_flops_variant(n: int, d: int, bug: str | None = None) -> tuple[int, int]:
    attention, recurrent = 4 * n * n * d, 4 * n * d * d
    if bug == "halved":
        return attention // 2, recurrent // 2
    if bug == "swapped":
        return recurrent, attention
    if bug == "scores_only":
        return attention // 2, recurrent
    if bug == "no_input_term":
        return attention, recurrent // 2
    return attention, recurrent


def check_layer_flops(fn: Callable) -> None:
    """Check ``fn(n, d) -> (attention_flops, recurrent_flops)``: 4·n²·d and 4·n·d²."""
    for n, d in ((10, 64), (300, 32), (7, 7)):
        case = f"n={n}, d={d}"
        got = call_learner(fn, case, n, d)
        got = as_pair(got, case, "(attention_flops, recurrent_flops)")
        if got == layer_flops_variant(n, d):
            continue
        first_slip(got, case, LAYER_FLOPS_SLIPS, partial(layer_flops_variant, n, d),
                   layer_flops_variant(n, d))
        raise AssertionError(
            f"on {case}, got {got} but expected {layer_flops_variant(n, d)}: "
            f"self-attention 4·n²·d, recurrent 4·n·d²"
        )
