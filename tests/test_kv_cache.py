"""PagedKVCache against a plain torch.cat cache per sequence."""

import math
import random

import pytest
import torch

from attention_qa.kv_cache import PagedKVCache

H, D = 2, 3  # num_heads, d_head


def kv(t, seed):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(H, t, D, generator=g), torch.randn(H, t, D, generator=g)


def test_interleaved_appends_across_block_boundaries_match_torch_cat():
    cache = PagedKVCache(num_blocks=100, block_size=4, num_heads=H, d_head=D)
    reference = {}  # seq_id -> (k, v) grown with torch.cat
    rng = random.Random(0)
    for step in range(60):
        seq = rng.choice(["a", "b", 7])
        k, v = kv(rng.randint(1, 6), seed=step)
        cache.append(seq, k, v)
        if seq in reference:
            ref_k, ref_v = reference[seq]
            reference[seq] = (torch.cat([ref_k, k], dim=1), torch.cat([ref_v, v], dim=1))
        else:
            reference[seq] = (k, v)
        for other, (ref_k, ref_v) in reference.items():  # no sequence disturbs another
            got_k, got_v = cache.get(other)
            assert torch.equal(got_k, ref_k) and torch.equal(got_v, ref_v)
            assert cache.length(other) == ref_k.shape[1]
            assert len(cache.block_table(other)) == math.ceil(ref_k.shape[1] / 4)
    # Interleaving scatters a sequence over the pool: some block table is not one run.
    runs = [cache.block_table(s) for s in reference]
    assert any(t != list(range(t[0], t[0] + len(t))) for t in runs)
    # The sequences share the pool but never a block.
    tables = [set(cache.block_table(s)) for s in reference]
    used = sum(len(t) for t in tables)
    assert len(set.union(*tables)) == used
    assert cache.num_free_blocks == 100 - used


def test_blocks_are_taken_only_when_the_last_one_is_full():
    cache = PagedKVCache(num_blocks=5, block_size=3, num_heads=H, d_head=D)
    counts = []
    for t in (1, 1, 1, 1, 3, 2):  # lengths 1, 2, 3, 4, 7, 9
        cache.append("s", *kv(t, seed=t))
        counts.append(len(cache.block_table("s")))
    assert counts == [1, 1, 1, 2, 3, 3]
    assert cache.num_free_blocks == 2
    assert cache.get("s")[0].shape == (H, 9, D)


def test_memory_error_names_blocks_and_changes_nothing():
    cache = PagedKVCache(num_blocks=3, block_size=2, num_heads=H, d_head=D)
    cache.append("a", *kv(3, seed=1))  # two blocks, one slot left in the second
    before = (cache.get("a"), cache.block_table("a"), cache.num_free_blocks,
              cache.k_pool.clone(), cache.v_pool.clone())
    with pytest.raises(MemoryError, match="needs 2 more blocks .* only 1 blocks are free"):
        cache.append("a", *kv(4, seed=2))  # 7 positions need 4 blocks: 2 more
    with pytest.raises(MemoryError, match="'b' needs 2 more blocks"):
        cache.append("b", *kv(3, seed=3))
    after = (cache.get("a"), cache.block_table("a"), cache.num_free_blocks)
    assert torch.equal(after[0][0], before[0][0]) and torch.equal(after[0][1], before[0][1])
    assert after[1:] == before[1:3]
    assert torch.equal(cache.k_pool, before[3]) and torch.equal(cache.v_pool, before[4])
    with pytest.raises(KeyError):
        cache.length("b")  # the failed append did not register "b"
    cache.append("a", *kv(3, seed=4))  # exactly fits: one slot plus one new block
    assert cache.num_free_blocks == 0 and cache.length("a") == 6


def test_free_returns_blocks_for_reuse():
    cache = PagedKVCache(num_blocks=4, block_size=2, num_heads=H, d_head=D)
    cache.append("a", *kv(4, seed=1))
    b_k, b_v = kv(3, seed=2)
    cache.append("b", b_k, b_v)
    assert cache.num_free_blocks == 0
    freed = cache.block_table("a")
    cache.free("a")
    assert cache.num_free_blocks == 2
    with pytest.raises(KeyError, match="no sequence 'a' in the cache"):
        cache.get("a")
    c_k, c_v = kv(4, seed=3)
    cache.append("c", c_k, c_v)  # reuses a's blocks
    assert sorted(cache.block_table("c")) == sorted(freed)
    assert torch.equal(cache.get("c")[0], c_k) and torch.equal(cache.get("c")[1], c_v)
    assert torch.equal(cache.get("b")[0], b_k) and torch.equal(cache.get("b")[1], b_v)


def test_get_returns_a_copy_and_empty_appends_are_allowed():
    cache = PagedKVCache(num_blocks=2, block_size=2, num_heads=H, d_head=D)
    cache.append("a", torch.zeros(H, 0, D), torch.zeros(H, 0, D))
    assert cache.length("a") == 0 and cache.block_table("a") == []
    assert cache.get("a")[0].shape == (H, 0, D)
    k, v = kv(2, seed=1)
    cache.append("a", k, v)
    got_k, _ = cache.get("a")
    got_k.zero_()
    assert torch.equal(cache.get("a")[0], k)


def test_dtype_is_kept():
    cache = PagedKVCache(2, 4, H, D, dtype=torch.float64)
    k, v = (x.double() for x in kv(3, seed=5))
    cache.append(0, k, v)
    got_k, got_v = cache.get(0)
    assert got_k.dtype == torch.float64 and torch.equal(got_k, k) and torch.equal(got_v, v)


def test_bad_arguments():
    with pytest.raises(ValueError, match="block_size must be a positive integer, got 0"):
        PagedKVCache(4, 0, H, D)
    with pytest.raises(TypeError, match="dtype must be a floating-point torch.dtype"):
        PagedKVCache(4, 2, H, D, dtype=torch.int64)
    cache = PagedKVCache(4, 2, H, D)
    k, v = kv(2, seed=0)
    with pytest.raises(ValueError, match=r"k has shape \(3, 2, 3\) but must be \(2, t, 3\)"):
        cache.append("a", torch.zeros(3, 2, D), v)
    with pytest.raises(ValueError, match=r"v has shape \(2, 2\) but must be \(2, t, 3\)"):
        cache.append("a", k, torch.zeros(2, 2))
    with pytest.raises(ValueError, match=r"v has shape \(2, 1, 3\) but k has shape \(2, 2, 3\)"):
        cache.append("a", k, v[:, :1])
    with pytest.raises(TypeError, match="k has dtype torch.float64 but the cache holds"):
        cache.append("a", k.double(), v)
    with pytest.raises(TypeError, match="v must be a torch.Tensor"):
        cache.append("a", k, v.tolist())
    assert cache.num_free_blocks == 4  # nothing was stored
    with pytest.raises(KeyError, match="no sequence 'a'"):
        cache.free("a")


# --- paged_attention and the block arithmetic ----------------------------------------------


def test_paged_attention_equals_pytorch_attention_on_the_contiguous_cache():
    from attention_qa.kv_cache import paged_attention

    cache = PagedKVCache(num_blocks=20, block_size=3, num_heads=H, d_head=D,
                         dtype=torch.float64)
    g = torch.Generator().manual_seed(3)
    for seq, length in (("a", 7), ("b", 5), ("a", 4), ("c", 1)):  # interleaved appends
        cache.append(seq, torch.randn(H, length, D, generator=g, dtype=torch.float64),
                     torch.randn(H, length, D, generator=g, dtype=torch.float64))
    for seq in ("a", "b", "c"):
        q = torch.randn(H, 2, D, generator=g, dtype=torch.float64)
        k, v = cache.get(seq)
        expected = torch.nn.functional.scaled_dot_product_attention(q, k, v)
        assert torch.allclose(paged_attention(q, cache, seq), expected, atol=1e-12)


def test_paged_attention_refuses_a_wrong_query():
    from attention_qa.kv_cache import paged_attention

    cache = PagedKVCache(num_blocks=2, block_size=2, num_heads=H, d_head=D)
    cache.append("a", *kv(3, seed=0))
    with pytest.raises(ValueError, match=r"q has shape \(2, 1, 4\) but must be \(2, n, 3\)"):
        paged_attention(torch.randn(H, 1, 4), cache, "a")
    with pytest.raises(TypeError, match="dtype"):
        paged_attention(torch.randn(H, 1, D, dtype=torch.float64), cache, "a")


def test_block_arithmetic_matches_the_cache_itself():
    from attention_qa.kv_cache import blocks_needed, requests_that_fit, wasted_slots

    lengths, block_size = [5, 8, 1, 13, 4], 4
    cache = PagedKVCache(num_blocks=100, block_size=block_size, num_heads=H, d_head=D)
    for i, n in enumerate(lengths):
        cache.append(i, *kv(n, seed=i))
    used = 100 - cache.num_free_blocks
    assert blocks_needed(lengths, block_size) == used == sum(
        math.ceil(n / block_size) for n in lengths
    ) == 2 + 2 + 1 + 4 + 1
    assert wasted_slots(lengths, block_size) == used * block_size - sum(lengths) == 9
    assert all(0 <= -n % block_size < block_size for n in lengths)
    # Admission in order: 2 + 2 + 1 blocks fit in 5, the fourth request's 4 more do not.
    assert requests_that_fit(lengths, 5, block_size) == 3
    assert requests_that_fit(lengths, 100, block_size) == len(lengths)
    assert requests_that_fit(lengths, 1, block_size) == 0
    # A contiguous cache reserving 16 positions per request is one 16-slot block each.
    assert requests_that_fit(lengths, 64 // 16, 16) == 4


def test_block_arithmetic_refuses_bad_input():
    from attention_qa.kv_cache import blocks_needed, requests_that_fit

    with pytest.raises(ValueError, match="lengths must be"):
        blocks_needed([3, 0], 4)
    with pytest.raises(ValueError, match="lengths must be"):
        blocks_needed([], 4)
    with pytest.raises(ValueError, match="block_size"):
        blocks_needed([3], 0)
    with pytest.raises(ValueError, match="num_blocks"):
        requests_that_fit([3], 0, 4)


# --- prefix sharing: fork, reference counts, copy-on-write ---------------------------------


def _cat(a, b):
    return tuple(torch.cat([x, y], dim=1) for x, y in zip(a, b, strict=True))


def test_fork_shares_every_block_and_takes_no_memory():
    cache = PagedKVCache(num_blocks=10, block_size=4, num_heads=H, d_head=D)
    cache.append("prompt", *kv(6, seed=1))  # blocks 0 (full) and 1 (2 of 4 slots)
    cache.fork("prompt", "a")
    cache.fork("prompt", "b")
    assert cache.block_table("a") == cache.block_table("b") == cache.block_table("prompt")
    assert [cache.ref_count(b) for b in cache.block_table("a")] == [3, 3]
    assert cache.num_free_blocks == 8
    assert all(torch.equal(x, y) for x, y in zip(cache.get("a"), cache.get("prompt"), strict=True))


def test_writing_into_a_shared_partial_block_copies_it_first():
    cache = PagedKVCache(num_blocks=10, block_size=4, num_heads=H, d_head=D)
    prompt, own_a, own_b = kv(6, seed=1), kv(3, seed=2), kv(1, seed=3)
    cache.append("prompt", *prompt)
    cache.fork("prompt", "a")
    cache.fork("prompt", "b")
    cache.append("a", *own_a)  # copies block 1, then takes one more for its 9th token
    cache.append("b", *own_b)  # copies block 1 too: prompt still holds the original
    for seq, expected in (("prompt", prompt), ("a", _cat(prompt, own_a)),
                          ("b", _cat(prompt, own_b))):
        got = cache.get(seq)
        assert torch.equal(got[0], expected[0]) and torch.equal(got[1], expected[1]), seq
    full, partial = cache.block_table("prompt")
    assert cache.ref_count(full) == 3 and cache.ref_count(partial) == 1
    assert cache.block_table("a")[0] == cache.block_table("b")[0] == full
    assert len({cache.block_table("a")[1], cache.block_table("b")[1], partial}) == 3
    assert cache.num_free_blocks == 10 - 2 - 2 - 1  # prompt's 2, a's copy + 1, b's copy


def test_a_full_shared_block_is_never_copied_and_the_last_holder_writes_in_place():
    cache = PagedKVCache(num_blocks=6, block_size=4, num_heads=H, d_head=D)
    cache.append("prompt", *kv(4, seed=1))  # exactly one full block
    cache.fork("prompt", "a")
    cache.append("a", *kv(2, seed=2))  # a new block; the full one stays shared
    assert cache.block_table("a")[0] == cache.block_table("prompt")[0]
    assert cache.num_free_blocks == 4
    cache.append("prompt", *kv(2, seed=3))
    cache.fork("prompt", "b")
    cache.free("prompt")  # b is now the only holder of the partial block
    before = cache.block_table("b")
    cache.append("b", *kv(1, seed=4))
    assert cache.block_table("b") == before  # written in place, no copy


def test_freeing_returns_a_shared_block_only_with_its_last_holder():
    cache = PagedKVCache(num_blocks=4, block_size=2, num_heads=H, d_head=D)
    cache.append("prompt", *kv(4, seed=1))
    cache.fork("prompt", "a")
    cache.free("prompt")
    assert cache.num_free_blocks == 2
    assert [cache.ref_count(b) for b in cache.block_table("a")] == [1, 1]
    cache.free("a")
    assert cache.num_free_blocks == 4 and cache.ref_count(0) == 0


def test_a_copy_on_write_that_does_not_fit_is_a_memory_error_and_changes_nothing():
    cache = PagedKVCache(num_blocks=2, block_size=4, num_heads=H, d_head=D)
    cache.append("prompt", *kv(6, seed=1))
    cache.fork("prompt", "a")
    with pytest.raises(MemoryError, match="needs 1 more blocks of 4 positions for 1 new tokens"):
        cache.append("a", *kv(1, seed=2))
    assert cache.block_table("a") == cache.block_table("prompt") == [0, 1]
    assert cache.length("a") == 6 and cache.ref_count(1) == 2


def test_fork_refuses_an_unknown_parent_or_a_taken_child():
    cache = PagedKVCache(num_blocks=4, block_size=2, num_heads=H, d_head=D)
    cache.append("p", *kv(1, seed=1))
    with pytest.raises(KeyError, match="no sequence 'q'"):
        cache.fork("q", "c")
    with pytest.raises(ValueError, match="sequence 'p' is already in the cache"):
        cache.fork("p", "p")
    with pytest.raises(ValueError, match=r"block must be an integer in 0 … 3, got 4"):
        cache.ref_count(4)


def test_random_appends_forks_and_frees_match_torch_cat_and_account_for_every_block():
    cache = PagedKVCache(num_blocks=200, block_size=3, num_heads=H, d_head=D)
    reference = {}
    rng = random.Random(1)
    for step in range(300):
        action = rng.random()
        if reference and action < 0.15:
            parent, child = rng.choice(list(reference)), f"s{step}"
            cache.fork(parent, child)
            reference[child] = reference[parent]
        elif reference and action < 0.25:
            seq = rng.choice(list(reference))
            cache.free(seq)
            del reference[seq]
        else:
            seq = rng.choice(list(reference) + ["new"]) if reference else "new"
            seq = f"s{step}" if seq == "new" else seq
            new = kv(rng.randint(0, 4), seed=step)
            cache.append(seq, *new)
            reference[seq] = _cat(reference[seq], new) if seq in reference else new
        for seq, (ref_k, ref_v) in reference.items():
            got_k, got_v = cache.get(seq)
            assert torch.equal(got_k, ref_k) and torch.equal(got_v, ref_v)
        # Every reference count is the number of tables holding the block.
        holders = {}
        for seq in reference:
            for block in cache.block_table(seq):
                holders[block] = holders.get(block, 0) + 1
        assert all(cache.ref_count(b) == holders.get(b, 0) for b in range(200))
        assert cache.num_free_blocks == 200 - len(holders)


def test_request_lengths_are_fixed_integer_draws_in_each_workloads_range():
    from attention_qa.kv_cache import MAX_LEN, NUM_REQUESTS, WORKLOADS, request_lengths

    for workload in WORKLOADS:
        lengths = request_lengths(workload)
        assert len(lengths) == NUM_REQUESTS and all(1 <= n <= MAX_LEN for n in lengths)
        assert lengths == request_lengths(workload)  # the same draw every time
    assert set(request_lengths("all 100 tokens")) == {100}
    assert max(request_lengths("short chats")) <= 256
    with pytest.raises(ValueError, match="workload must be one of"):
        request_lengths("long chats")
