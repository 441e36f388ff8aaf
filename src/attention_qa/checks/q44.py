"""The checker of q44's exercise: ``check_continuous_schedule``."""

from __future__ import annotations

from typing import Callable

from attention_qa.checks.common import as_answer, call_learner, first_slip, whole_numbers
from attention_qa.serving import schedule


def schedule_variant(requests, max_batch, bug: str | None = None) -> list[tuple[int, int]]:
    """Continuous batching's (first_token_step, last_token_step) per request, or the answer
    of one known slip."""
    if bug == "static":
        return schedule(requests, max_batch, "static")
    if bug == "no_limit":
        return schedule(requests, len(requests), "continuous")
    if bug == "next_step":  # a request joins one step after it arrives
        late = [(a + 1, n) for a, n in requests]
        return schedule(late, max_batch, "continuous")
    if bug == "last_plus_one":  # the last token put one step after the right one
        return [(f, last + 1) for f, last in schedule(requests, max_batch, "continuous")]
    if bug == "slot_late":  # a finished request frees its slot a step late
        longer = [(a, n + 1) for a, n in requests]
        return [(f, last - 1) for f, last in schedule(longer, max_batch, "continuous")]
    if bug == "list_order":  # admitted in list order, the arrival steps never sorted
        return _in_list_order(requests, max_batch)
    if bug == "by_length":  # shortest output first instead of first come, first served
        order = sorted(range(len(requests)), key=lambda i: (requests[i][0], requests[i][1], i))
        out = schedule([requests[i] for i in order], max_batch, "continuous")
        result = [None] * len(requests)
        for k, i in enumerate(order):
            result[i] = out[k]
        return result
    return schedule(requests, max_batch, "continuous")


def _in_list_order(requests, max_batch) -> list[tuple[int, int]]:
    waiting = list(range(len(requests)))  # in list order, not sorted by arrival
    left = [n for _, n in requests]
    result: list = [None] * len(requests)
    running: list[int] = []
    t = 0
    while waiting or running:
        while waiting and len(running) < max_batch and requests[waiting[0]][0] <= t:
            running.append(waiting.pop(0))
        if not running:
            t = requests[waiting[0]][0]
            continue
        for i in running:
            result[i] = (t if result[i] is None else result[i][0], t)
            left[i] -= 1
        running = [i for i in running if left[i] > 0]
        t += 1
    return result


SCHEDULE_SLIPS = {
    "static": (
        "this is static batching: a waiting request joined only when the whole batch was "
        "done. Continuous batching lets it join at any step where fewer than max_batch are "
        "running"
    ),
    "no_limit": "more than max_batch requests ran in one step: admit only while there is room",
    "next_step": (
        "a request joined one step after it arrived: one with arrival_step ≤ t may join at "
        "the start of step t and emits its first token in that step"
    ),
    "last_plus_one": (
        "the last token is one step late: a request of n tokens that starts at step f "
        "ends at step f + n − 1 when it runs every step"
    ),
    "slot_late": (
        "a finished request freed its slot one step late: it leaves after its last token, "
        "so a waiting request may join at the very next step"
    ),
    "list_order": (
        "requests were admitted in list order: sort the waiting requests by arrival step "
        "first (a request listed later may have arrived earlier), then by position"
    ),
    "by_length": (
        "requests that arrived together were admitted shortest first: admit in order of "
        "arrival, then of position in the list"
    ),
}


def check_continuous_schedule(fn: Callable) -> None:
    """Check ``fn(requests, max_batch)``: continuous (iteration-level) batching, each request
    ``(arrival_step, output_tokens)`` → ``(first_token_step, last_token_step)`` in input
    order. A list of pairs, a NumPy array or tensor of shape (len(requests), 2) passes."""
    cases = [
        ("four requests, max_batch=2", [(0, 3), (0, 1), (1, 2), (1, 4)], 2),
        ("one request at a time (max_batch=1)", [(0, 2), (0, 2), (3, 1)], 1),
        ("a gap with nothing running", [(0, 2), (5, 3), (5, 1), (12, 2)], 2),
        ("ties at one arrival step", [(2, 5), (2, 1), (2, 3), (2, 2), (3, 1)], 3),
        ("twelve requests, max_batch=4",
         [(0, 7), (0, 3), (1, 12), (1, 1), (2, 4), (4, 9), (4, 2), (6, 5), (7, 1),
          (9, 6), (10, 11), (10, 2)], 4),
        ("more room than requests", [(1, 4), (3, 2)], 8),
        ("requests not listed in arrival order, max_batch=1", [(4, 2), (0, 3), (0, 1), (2, 2)],
         1),
    ]
    for case, requests, max_batch in cases:
        expected = schedule_variant(requests, max_batch)
        result = call_learner(fn, case, [tuple(r) for r in requests], max_batch)
        got = as_answer(result, case, "the schedule")
        if tuple(got.shape) != (len(requests), 2):
            raise AssertionError(
                f"on {case}, the schedule has shape {tuple(got.shape)}: return one pair "
                f"(first_token_step, last_token_step) per request, shape ({len(requests)}, 2)"
            )
        pairs = [tuple(whole_numbers(row, case, "the schedule")) for row in got.tolist()]
        if pairs == expected:
            continue
        first_slip(pairs, case, SCHEDULE_SLIPS,
                   lambda bug, r=requests, b=max_batch: schedule_variant(r, b, bug), expected)
        wrong = next(i for i, (g, e) in enumerate(zip(pairs, expected, strict=True)) if g != e)
        raise AssertionError(
            f"on {case}, request {wrong} {requests[wrong]} got (first, last) = {pairs[wrong]} "
            f"but continuous batching gives {expected[wrong]}"
        )
