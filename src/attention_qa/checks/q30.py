"""The checker of q30's exercise: ``check_sink_window_mask``."""

from __future__ import annotations

from typing import Callable

import torch

from attention_qa.checks.common import call_learner, compare_masks


def sink_window_variant(n: int, window: int, sinks: int, bug: str | None = None):
    """The (n, n) StreamingLLM mask, True = may attend, with one known slip switched on."""
    i = torch.arange(n).unsqueeze(1)  # (n, 1)
    j = torch.arange(n).unsqueeze(0)  # (1, n)
    last = {"window_plus_one": window + 1, "window_minus_one": window - 1,
            "sinks_inside_window": window - sinks}.get(bug, window)
    recent = (i - j >= 0) & (i - j < last)  # (n, n)
    if bug == "two_sided":
        recent = (i - j).abs() < window
    sink = j < sinks  # (1, n)
    if bug != "sinks_see_the_future":
        sink = sink & (j <= i)  # (n, n)
    if bug == "no_sinks":
        sink = torch.zeros(n, n, dtype=torch.bool)
    mask = recent | sink
    return ~mask if bug == "inverted" else mask


SINK_WINDOW_SLIPS = {
    "inverted": "the mask is inverted: True must mean may attend (kept in the cache)",
    "window_plus_one": (
        "the window keeps window + 1 recent keys: it counts the query's own key, so query i "
        "keeps keys i − window + 1 … i (i − j < window)"
    ),
    "window_minus_one": (
        "the window keeps window − 1 recent keys: the query's own key is one of the window, "
        "so query i keeps keys i − window + 1 … i, i itself included"
    ),
    "sinks_inside_window": (
        "the sinks are counted inside the window: the cache holds sinks + window keys, the "
        "first `sinks` plus the last `window`"
    ),
    "two_sided": (
        "the window looks ahead: a query may not see later keys (j ≤ i); only the last "
        "window keys up to the query itself are kept"
    ),
    "sinks_see_the_future": (
        "an early query sees a later sink key: the sinks are keys 0 … sinks − 1 but only "
        "those with j ≤ i, the mask stays causal"
    ),
    "no_sinks": "the sink keys are missing: key j < sinks must be kept (when j ≤ i)",
}


def check_sink_window_mask(fn: Callable) -> None:
    """Check ``fn(n, window, sinks) -> (n, n)`` boolean, True = may attend.

    Query i keeps key j when j ≤ i and (j < sinks or i − j < window): the first ``sinks``
    keys and the last ``window`` keys, its own included (StreamingLLM).
    """
    cases = [
        ("n=8, window=3, sinks=2", 8, 3, 2),
        ("n=10, window=4, sinks=1", 10, 4, 1),
        ("n=7, window=2, sinks=0", 7, 2, 0),
        ("n=5, window=6, sinks=2", 5, 6, 2),
    ]
    for case, n, window, sinks in cases:
        expected = sink_window_variant(n, window, sinks)
        got = call_learner(fn, case, n, window, sinks)
        compare_masks(
            got,
            expected,
            case,
            {
                msg: sink_window_variant(n, window, sinks, bug)
                for bug, msg in SINK_WINDOW_SLIPS.items()
            },
            "i, j",
        )
