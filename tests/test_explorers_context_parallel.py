"""q36's explorer draws the schedule of attention_qa.parallel.ring_schedule."""

import pytest

from attention_qa.explorers.context_parallel import DEVICES, context_parallel_explorer
from attention_qa.parallel import ring_schedule


@pytest.mark.parametrize("devices", DEVICES)
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("order", ["contiguous", "zigzag"])
def test_every_frame_draws_the_schedule(devices, causal, order):
    frame = context_parallel_explorer().frame(devices=devices, causal=causal, order=order)
    schedule = ring_schedule(devices, causal, order)
    grid = frame.data["grid"]
    assert grid.shape == (2 * devices, 2 * devices)
    computed = {(a, b) for step in schedule for e in step for a, b in e["pairs"]}
    assert computed == {(a, b) for a in range(2 * devices) for b in range(2 * devices)
                        if grid[a, b]}
    if causal:  # exactly the tiles on or below the diagonal
        assert computed == {(a, b) for a in range(2 * devices) for b in range(a + 1)}
    work = [sum(step[r]["work"] for step in schedule) for r in range(devices)]
    assert frame.data["work"] == work
    assert frame.data["time"] >= max(work)


def test_only_the_causal_contiguous_ring_is_unbalanced():
    e = context_parallel_explorer()
    for devices in DEVICES:
        for causal in (False, True):
            for order in ("contiguous", "zigzag"):
                ratio = float(e.frame(devices=devices, causal=causal,
                                      order=order).figures["busiest device / average"])
                assert (ratio > 1.3) == (causal and order == "contiguous")
