"""check_continuous_schedule: right answers in several forms pass, each slip is named."""

import numpy as np
import pytest
import torch

from attention_qa.checks import check_continuous_schedule
from attention_qa.checks.q44 import SCHEDULE_SLIPS, schedule_variant


def by_slots(requests, max_batch):
    """Step by step with a list of slots, each holding (request, tokens left)."""
    order = sorted(range(len(requests)), key=lambda i: (requests[i][0], i))
    result = [None] * len(requests)
    slots, t, started = [], 0, {}
    while order or slots:
        while order and len(slots) < max_batch and requests[order[0]][0] <= t:
            i = order.pop(0)
            slots.append([i, requests[i][1]])
            started[i] = t
        if not slots:
            t = requests[order[0]][0]
            continue
        for slot in slots:
            slot[1] -= 1
            if slot[1] == 0:
                result[slot[0]] = (started[slot[0]], t)
        slots = [s for s in slots if s[1] > 0]
        t += 1
    return result


def by_event_times(requests, max_batch):
    """No step loop: a request starts when it has arrived and a slot is free, the slots'
    free times kept in a list (FCFS), and ends n − 1 steps later."""
    order = sorted(range(len(requests)), key=lambda i: (requests[i][0], i))
    free = [0] * max_batch  # the step from which each slot is free
    result = [None] * len(requests)
    for i in order:
        arrival, n = requests[i]
        k = min(range(max_batch), key=lambda s: free[s])
        start = max(arrival, free[k])
        result[i] = (start, start + n - 1)
        free[k] = start + n
    return result


def as_tensor(fn):
    return lambda r, b: torch.tensor(fn(r, b))


def as_array(fn):
    return lambda r, b: np.array(fn(r, b))


def as_lists(fn):
    return lambda r, b: [list(p) for p in fn(r, b)]


def as_float32(fn):
    return lambda r, b: torch.tensor(fn(r, b), dtype=torch.float32)


@pytest.mark.parametrize("right", [by_slots, by_event_times])
@pytest.mark.parametrize("form", [lambda f: f, as_tensor, as_array, as_lists, as_float32])
def test_right_answers_pass_in_every_form(right, form):
    check_continuous_schedule(form(right))


@pytest.mark.parametrize("bug", sorted(SCHEDULE_SLIPS))
def test_each_slip_is_named(bug):
    with pytest.raises(AssertionError) as err:
        check_continuous_schedule(lambda r, b: schedule_variant(r, b, bug))
    assert SCHEDULE_SLIPS[bug] in str(err.value)


def test_wrong_shapes_and_fractions_are_refused():
    with pytest.raises(AssertionError, match="shape"):
        check_continuous_schedule(lambda r, b: [f for f, _ in by_slots(r, b)])
    with pytest.raises(AssertionError, match="whole numbers"):
        check_continuous_schedule(lambda r, b: np.array(by_slots(r, b)) + 0.5)
    with pytest.raises(AssertionError, match="continuous batching gives"):
        check_continuous_schedule(lambda r, b: [(0, 0)] * len(r))


def test_admitting_in_list_order_is_named():
    """A learner's loop that never sorts by arrival: right whenever the list is in arrival
    order, wrong on the case that is not."""

    def in_list_order(requests, max_batch):
        waiting, left = list(range(len(requests))), [n for _, n in requests]
        result, running, t = [None] * len(requests), [], 0
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

    assert in_list_order([(5, 1), (0, 2)], 1) == [(5, 5), (6, 7)]
    assert schedule_variant([(5, 1), (0, 2)], 1) == [(5, 5), (0, 1)]
    with pytest.raises(AssertionError) as err:
        check_continuous_schedule(in_list_order)
    assert SCHEDULE_SLIPS["list_order"] in str(err.value)
