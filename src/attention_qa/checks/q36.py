"""The checker of q36's exercise: ``check_merge_partials``."""

from __future__ import annotations

import math
from functools import partial
from typing import Callable

import torch

from attention_qa.checks.common import as_real_tensor, call_learner, diagnose, require_shape
from attention_qa.parallel import merge_partials

MERGE_SLIPS = {
    "average": (
        "the two outputs are averaged; weigh each by its share of the softmax mass, "
        "e^(lse_a − lse) and e^(lse_b − lse) with lse = log(e^lse_a + e^lse_b)"
    ),
    "unnormalised": (
        "each output is weighed by e^lse, not by e^lse divided by the total: divide by "
        "e^lse_a + e^lse_b (or subtract the merged lse inside the exponential)"
    ),
    "swapped": "the weights are swapped: out_a takes e^(lse_a − lse), out_b e^(lse_b − lse)",
    "lse_ratio": (
        "the outputs are weighed by lse_a / (lse_a + lse_b); lse is a logarithm, so the "
        "weights are e^lse_a / (e^lse_a + e^lse_b)"
    ),
}


LSE_SLIPS = {
    "max": (
        "the merged lse is max(lse_a, lse_b); the log-sum-exp of both sets is "
        "log(e^lse_a + e^lse_b) = torch.logaddexp(lse_a, lse_b), larger than the max"
    ),
    "sum": (
        "the merged lse is lse_a + lse_b, the log of a product; the sums of exponentials "
        "add, so lse = log(e^lse_a + e^lse_b)"
    ),
}


OVERFLOW_HINT = (
    "e^lse overflows when the scores are large (e^800 is inf even in float64); subtract the "
    "merged lse (or the larger of the two) before taking the exponential"
)


def merge_variant(out_a, lse_a, out_b, lse_b, bug: str | None = None):
    """The merged output with one slip (or none); the lse is always right here."""
    if bug == "average":
        return (out_a + out_b) / 2
    if bug == "unnormalised":
        return torch.exp(lse_a).unsqueeze(-1) * out_a + torch.exp(lse_b).unsqueeze(-1) * out_b
    if bug == "lse_ratio":
        total = (lse_a + lse_b).unsqueeze(-1)
        return lse_a.unsqueeze(-1) / total * out_a + lse_b.unsqueeze(-1) / total * out_b
    out, _ = merge_partials(out_a, lse_a, out_b, lse_b)
    if bug == "swapped":
        out, _ = merge_partials(out_a, lse_b, out_b, lse_a)
    return out


def lse_variant(lse_a, lse_b, bug: str | None = None):
    if bug == "max":
        return torch.maximum(lse_a, lse_b)
    if bug == "sum":
        return lse_a + lse_b
    return torch.logaddexp(lse_a, lse_b)


def merge_cases():
    """(description, out_a, lse_a, out_b, lse_b) in float64, as the checker passes them."""
    g = torch.Generator().manual_seed(36)

    def part(shape, centre):
        out = torch.randn((*shape, 4), generator=g, dtype=torch.float64)  # (..., n, d_v)
        lse = centre + 2 * torch.randn(shape, generator=g, dtype=torch.float64)  # (..., n)
        if centre > 100:  # multiples of 1/2, held exactly even by float16 near 800
            lse = torch.round(2 * lse) / 2
        return out, lse

    cases = []
    for case, shape, centres in (
        ("out of shape (5, 4), lse of shape (5,)", (5,), (0.0, 1.0)),
        ("out of shape (2, 3, 6, 4), lse of shape (2, 3, 6)", (2, 3, 6), (1.0, -1.0)),
        ("large scores: lse near 800 and 795, out (4, 4)", (4,), (800.0, 795.0)),
    ):
        cases.append((case, *part(shape, centres[0]), *part(shape, centres[1])))
    out_a, lse_a = part((4,), 0.5)
    out_b, lse_b = part((4,), 0.0)
    lse_b[1:3] = -math.inf  # those queries saw no key in block b (the causal mask hid it)
    out_b[1:3] = 0.0
    cases.append(("rows 1 and 2 of block b masked (lse_b = −inf, out_b = 0), out (4, 4)",
                  out_a, lse_a, out_b, lse_b))
    # one leading dim, between the cases above with none and two
    cases.append(("out of shape (3, 5, 4), lse of shape (3, 5)", *part((3, 5), 0.0),
                  *part((3, 5), 2.0)))
    return cases


def check_merge_partials(fn: Callable) -> None:
    """Check ``fn(out_a, lse_a, out_b, lse_b) -> (out, lse)``: merge two attentions of the
    same queries over disjoint key sets, out (..., n, d_v) and lse (..., n), compared with
    ``attention_qa.parallel.merge_partials``. The cases are float64 (``merge_cases``); any
    floating dtype is held to its own precision."""
    for case, out_a, lse_a, out_b, lse_b in merge_cases():
        expected_out, expected_lse = merge_partials(out_a, lse_a, out_b, lse_b)
        got = call_learner(fn, case, out_a.clone(), lse_a.clone(), out_b.clone(),
                           lse_b.clone())
        if not isinstance(got, (tuple, list)) or len(got) != 2:
            raise AssertionError(f"on {case}, return a pair (out, lse), got "
                                 f"{type(got).__name__}")
        got_out = require_shape(as_real_tensor(got[0], case, "out"), expected_out.shape,
                                case, "out")
        got_lse = require_shape(as_real_tensor(got[1], case, "lse"), expected_lse.shape,
                                case, "lse")
        diagnose(got_out, expected_out, case, "out",
                 "e^(lse_a − lse)·out_a + e^(lse_b − lse)·out_b", MERGE_SLIPS,
                 partial(merge_variant, out_a, lse_a, out_b, lse_b), nan_hint=OVERFLOW_HINT)
        diagnose(got_lse, expected_lse, case, "lse", "log(e^lse_a + e^lse_b)", LSE_SLIPS,
                 partial(lse_variant, lse_a, lse_b), nan_hint=OVERFLOW_HINT)
