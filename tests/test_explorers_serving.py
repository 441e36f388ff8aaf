import numpy as np

from attention_qa.explorers.serving import (
    DECODE,
    PREFILL,
    STEPS,
    WAITING,
    serving_explorer,
)
from attention_qa.serving import schedule, simulate, workload


def test_the_picture_follows_the_schedule():
    explorer = serving_explorer()
    frame = explorer.frame(rate=0.25, max_batch=4, policy="continuous", prefix="off")
    w = workload(0.25, 24)
    timeline = schedule(w["requests"], 4)
    picture = frame.data["picture"]
    for row, ((arrival, _n), (first, last)) in enumerate(zip(w["requests"], timeline,
                                                            strict=True)):
        assert picture[row, first] == PREFILL
        assert (picture[row, first + 1:last + 1] == DECODE).all()
        assert (picture[row, arrival:first] == WAITING).all()
        assert (picture[row, :, None] > 0).sum() == last + 1 - arrival
    # every step is never more than the batch limit
    assert ((picture == PREFILL) | (picture == DECODE)).sum(0).max() <= 4
    assert picture.shape == (24, STEPS) and explorer.num_frames == 36 <= 200


def test_prefix_caching_reuses_blocks_and_shortens_the_first_token():
    explorer = serving_explorer()
    off = explorer.frame(rate=0.5, max_batch=16, policy="continuous", prefix="off")
    on = explorer.frame(rate=0.5, max_batch=16, policy="continuous", prefix="on")
    w = workload(0.5, 24)
    run = simulate(w["requests"], w["prompts"], 16, prefix_caching=True)
    assert on.figures["blocks reused from the prefix cache"] == f"{run['blocks_reused']:,}"
    assert off.figures["blocks reused from the prefix cache"] == "0"
    assert np.nansum(on.data["step_ms"]) < np.nansum(off.data["step_ms"])


def test_batch_one_is_the_same_under_both_policies_and_static_waits():
    explorer = serving_explorer()
    a = explorer.frame(rate=0.25, max_batch=1, policy="static", prefix="off")
    b = explorer.frame(rate=0.25, max_batch=1, policy="continuous", prefix="off")
    assert np.array_equal(a.data["picture"], b.data["picture"])
    static = explorer.frame(rate=0.25, max_batch=16, policy="static", prefix="off")
    cont = explorer.frame(rate=0.25, max_batch=16, policy="continuous", prefix="off")
    assert (static.data["picture"] == WAITING).sum() > (cont.data["picture"] == WAITING).sum()


def test_the_chapter_runs_every_setting_of_the_explorer():
    # q44's "Check it" loops over these values written out; keep the two in step
    from attention_qa.explorers.serving import BATCHES, RATES
    assert RATES == (0.1, 0.25, 0.5) and BATCHES == (1, 4, 16)
