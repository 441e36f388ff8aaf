"""attention_qa.serving against direct computations written another way."""

import math
import random

import numpy as np
import pytest

from attention_qa.inference import LLAMA_CONFIGS, roofline_seconds, step_costs
from attention_qa.serving import (
    PrefixCache,
    chunked_prefill,
    latencies,
    percentile,
    schedule,
    simulate,
    step_seconds,
    workload,
)


def random_requests(seed: int, n: int = 15):
    rng = random.Random(seed)
    return [(rng.randrange(0, 20), rng.randrange(1, 9)) for _ in range(n)]


def running_at(timeline, t):
    return [i for i, (f, last) in enumerate(timeline) if f <= t <= last]


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("max_batch", [1, 2, 3, 5])
def test_continuous_is_the_work_conserving_first_come_first_served_schedule(seed, max_batch):
    requests = random_requests(seed)
    timeline = schedule(requests, max_batch)
    order = sorted(range(len(requests)), key=lambda i: (requests[i][0], i))
    end = max(last for _, last in timeline)
    for (a, n), (f, last) in zip(requests, timeline, strict=True):
        assert f >= a and last - f + 1 == n  # runs every step from its first token
    for t in range(end + 1):
        run = running_at(timeline, t)
        assert len(run) <= max_batch
        waiting = [i for i in order if requests[i][0] <= t and timeline[i][0] > t]
        if waiting:  # someone arrived and waits only while the batch is full
            assert len(run) == max_batch
    # first come, first served: an earlier request never starts after a later one
    firsts = [timeline[i][0] for i in order]
    assert firsts == sorted(firsts)


@pytest.mark.parametrize("seed", range(8))
def test_static_batches_start_together_and_wait_for_the_longest(seed):
    requests = random_requests(seed)
    timeline = schedule(requests, 3, "static")
    starts = sorted({f for f, _ in timeline})
    for s in starts:
        batch = [i for i, (f, _) in enumerate(timeline) if f == s]
        assert len(batch) <= 3
        done = max(timeline[i][1] for i in batch)
        # no batch starts before the previous one is done
        later = [f for f in starts if f > s]
        if later:
            assert later[0] > done
    for (a, n), (f, last) in zip(requests, timeline, strict=True):
        assert f >= a and last - f + 1 == n


def test_worked_example_and_batch_one():
    requests = [(0, 3), (0, 1), (1, 2), (1, 4)]
    assert schedule(requests, 2) == [(0, 2), (0, 0), (1, 2), (3, 6)]
    assert schedule(requests, 2, "static") == [(0, 2), (0, 0), (3, 4), (3, 6)]
    assert schedule(requests, 1) == schedule(requests, 1, "static") == [
        (0, 2), (3, 3), (4, 5), (6, 9)]
    assert schedule([(5, 2)], 4) == [(5, 6)]  # idle until the first arrival


@pytest.mark.parametrize("bad, match", [
    (([], 2), "empty"), (([(0, 0)], 2), "output_tokens"), (([(-1, 2)], 2), "arrival_step"),
    (([(0, 2, 1)], 2), "pair"), (([(0, 2)], 0), "max_batch"), (([(0.5, 2)], 1), "arrival"),
])
def test_schedule_refuses_bad_input(bad, match):
    with pytest.raises(ValueError, match=match):
        schedule(*bad)
    with pytest.raises(ValueError, match="policy"):
        schedule([(0, 1)], 1, "greedy")


def test_prefix_cache_against_a_set_of_whole_block_prefixes():
    rng = random.Random(0)
    b = 4
    cache, reference = PrefixCache(b), set()
    stored = []
    for _ in range(60):
        base = rng.choice(stored) if stored and rng.random() < 0.6 else []
        tokens = base[:rng.randrange(0, len(base) + 1)] + [rng.randrange(5)
                                                           for _ in range(rng.randrange(0, 14))]
        # match: the longest whole-block prefix already stored, as a set of prefixes sees it
        expect = 0
        for end in range(b, len(tokens) + 1, b):
            if tuple(tokens[:end]) not in reference:
                break
            expect = end
        assert cache.match(tokens) == expect
        new = {tuple(tokens[:end]) for end in range(b, len(tokens) + 1, b)} - reference
        assert cache.insert(tokens) == len(new)
        reference |= new
        stored.append(tokens)
        assert cache.num_blocks == len(reference)


def test_a_block_is_known_by_its_prefix_and_partial_blocks_are_not_stored():
    cache = PrefixCache(4)
    assert cache.insert([1, 2, 3, 4, 5, 6, 7, 8, 9]) == 2  # 9 is a partial block
    assert cache.match([1, 2, 3, 4, 5, 6, 7, 8, 9]) == 8
    assert cache.match([0, 0, 0, 0, 5, 6, 7, 8]) == 0  # the same block after another prefix
    assert cache.match([1, 2, 3]) == 0 and cache.match([1, 2, 3, 4, 0]) == 4
    import torch
    assert cache.match(torch.tensor([1, 2, 3, 4])) == 4
    with pytest.raises(ValueError, match="block_size"):
        PrefixCache(0)
    with pytest.raises(ValueError, match="integer ids"):
        cache.match([1.5, 2])
    with pytest.raises(ValueError, match="1-D"):
        cache.match(torch.ones(2, 2, dtype=torch.long))


def test_latencies_in_steps_and_with_step_times():
    requests = [(0, 3), (1, 1), (2, 4)]
    timeline = schedule(requests, 2)
    assert timeline == [(0, 2), (1, 1), (2, 5)]  # request 1 leaves after step 1
    steps = latencies(requests, timeline)
    assert steps["ttft"] == [1.0, 1.0, 1.0] and steps["tpot"][0] == 1.0
    assert math.isnan(steps["tpot"][1])
    ends = np.cumsum([2.0, 3.0, 1.0, 5.0, 1.0, 1.0, 1.0]).tolist()
    timed = latencies(requests, timeline, ends)
    assert timed["ttft"] == [2.0, 3.0, ends[2] - ends[1]]
    assert timed["tpot"][2] == (ends[5] - ends[2]) / 3


def test_step_seconds_is_the_roofline_of_the_weight_matrices():
    layers, d, heads, kv_heads, d_ff, vocab = LLAMA_CONFIGS["Llama-3-8B"]
    d_head = d // heads
    P = layers * (2 * d * d + 2 * d * kv_heads * d_head + 3 * d * d_ff) + vocab * d
    for tokens in (1, 64, 300, 4096):
        assert step_seconds(tokens) == pytest.approx(roofline_seconds(2 * P * tokens, 2 * P))
    # q33's step_costs adds attention's 4·layers·d FLOPs per key for one token of context one
    one = step_costs("Llama-3-8B", 1, 1, 1)
    assert one["flops"] - 4 * layers * d == 2 * P
    with pytest.raises(ValueError, match="tokens"):
        step_seconds(0)


def test_chunked_prefill():
    assert chunked_prefill(2000, 512) == [512, 512, 512, 464]
    chunks = chunked_prefill(2000, 512, 16)
    assert sum(chunks) == 2000 and max(chunks) == 496 and len(chunks) == math.ceil(2000 / 496)
    with pytest.raises(ValueError, match="no room"):
        chunked_prefill(10, 8, 8)


def test_percentile_matches_numpy():
    values = [3.0, 1.0, 7.5, 2.0, math.nan, 10.0]
    finite = [v for v in values if not math.isnan(v)]
    for q in (0, 50, 90, 100):
        assert percentile(values, q) == pytest.approx(np.percentile(finite, q))
    with pytest.raises(ValueError, match="finite"):
        percentile([math.nan], 50)


def test_simulate_counts_tokens_and_reused_blocks():
    w = workload(0.25, 10)
    plain = simulate(w["requests"], w["prompts"], 4)
    cached = simulate(w["requests"], w["prompts"], 4, prefix_caching=True)
    assert plain["timeline"] == cached["timeline"] == schedule(w["requests"], 4)
    assert sum(plain["prefill_tokens"]) == sum(len(p) for p in w["prompts"])
    # the first step's joiners miss; every later joiner reuses the 1,024-token system prompt
    first = min(f for f, _ in plain["timeline"])
    misses = sum(1 for f, _ in plain["timeline"] if f == first)
    assert cached["blocks_reused"] == (10 - misses) * 1024 // 16
    assert sum(plain["prefill_tokens"]) - sum(cached["prefill_tokens"]) == (
        (10 - misses) * 1024)
    decodes = sum(n for _, n in w["requests"])
    assert sum(plain["step_tokens"]) == decodes + sum(plain["prefill_tokens"]) - 10
    assert cached["step_end"][-1] < plain["step_end"][-1]
    with pytest.raises(ValueError, match="prompts"):
        simulate(w["requests"], w["prompts"][:3], 4)


def test_workload_is_seeded_and_checked():
    assert workload(0.5) == workload(0.5)
    with pytest.raises(ValueError, match="rate"):
        workload(0)
