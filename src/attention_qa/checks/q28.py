"""The checker of q28's exercise: ``check_nucleus_probs``."""

from __future__ import annotations

from functools import partial
from typing import Callable

import torch

from attention_qa.checks.common import (
    call_learner,
    diagnose,
    require_shape,
)
from attention_qa.decoding import next_token_probs

NUCLEUS_SLIPS = {
    "crossing_dropped": (
        "the token whose probability crosses top_p is dropped (kept only while the running "
        "sum ≤ top_p); keep it: the nucleus is the smallest set whose mass *reaches* top_p"
    ),
    "unsorted": (
        "the running sum is taken in vocabulary order; sort the probabilities from the "
        "largest down first, so that the nucleus holds the most probable tokens"
    ),
    "ascending": (
        "the probabilities are sorted from the smallest up: the nucleus must start from the "
        "most probable token (sort descending)"
    ),
    "filter_before_temperature": (
        "the nucleus is chosen from softmax(logits) and the temperature applied afterwards; "
        "divide the logits by the temperature first, then choose the nucleus"
    ),
    "no_renormalise": (
        "the kept probabilities do not sum to 1: renormalise them (a softmax over the kept "
        "logits, or divide by their sum)"
    ),
    "no_temperature": "the temperature is ignored: divide the logits by it before the softmax",
    "times_temperature": "the logits are multiplied by the temperature; divide them by it",
}


def nucleus_variant(logits, temperature, top_p, bug: str | None = None):
    scaled = logits * temperature if bug == "times_temperature" else logits / temperature
    if bug == "no_temperature":
        scaled = logits
    chooser = logits if bug == "filter_before_temperature" else scaled
    probs = torch.softmax(chooser, dim=-1)  # (..., V)
    if bug == "unsorted":
        order = torch.arange(logits.shape[-1]).expand_as(probs)
    else:
        order = probs.argsort(dim=-1, descending=(bug != "ascending"), stable=True)
    sorted_probs = probs.gather(-1, order)  # (..., V)
    cumulative = sorted_probs.cumsum(dim=-1)  # (..., V)
    if bug == "crossing_dropped":
        keep_sorted = cumulative <= top_p
        keep_sorted[..., 0] = True
    else:
        keep_sorted = (cumulative - sorted_probs) < top_p
    keep = torch.zeros_like(keep_sorted).scatter_(-1, order, keep_sorted)  # (..., V)
    final = torch.softmax(scaled, dim=-1) * keep  # (..., V)
    return final if bug == "no_renormalise" else final / final.sum(dim=-1, keepdim=True)


def check_nucleus_probs(fn: Callable) -> None:
    """Check ``fn(logits, temperature, top_p) -> probs`` (..., V): divide by the temperature,
    keep the smallest set of most probable tokens whose probability reaches top_p, and
    renormalise; compared with ``attention_qa.decoding.next_token_probs``."""
    g = torch.Generator().manual_seed(28)
    for case, shape, temperature, top_p in (
        ("logits of shape (3, 10), temperature 0.7, top_p 0.8", (3, 10), 0.7, 0.8),
        ("logits of shape (2, 4, 12), temperature 1.6, top_p 0.6", (2, 4, 12), 1.6, 0.6),
        ("logits of shape (16,), temperature 1.0, top_p 0.9", (16,), 1.0, 0.9),
    ):
        logits = torch.randn(shape, generator=g, dtype=torch.float64) * 2
        expected = next_token_probs(logits, temperature, top_p=top_p)
        got = call_learner(fn, case, logits.clone(), temperature, top_p)
        got = require_shape(got, expected.shape, case, "the probabilities")
        diagnose(
            got, expected, case, "the probabilities",
            "softmax(logits / T) restricted to the smallest top set reaching top_p, renormalised",
            NUCLEUS_SLIPS, partial(nucleus_variant, logits, temperature, top_p),
            nan_hint="a row kept no token; the most probable token must always stay",
        )
