"""attention_qa.parallel (q36) against independent references: PyTorch's own
scaled_dot_product_attention, plain loops over tokens, and documents run one by one."""

import math

import pytest
import torch
import torch.nn.functional as F

from attention_qa.parallel import (
    block_attention,
    device_tokens,
    document_mask,
    merge_partials,
    packed_position_ids,
    ring_attention,
    ring_schedule,
    ring_traffic,
    shifted_sparse_mask,
    ulysses_traffic,
    zigzag_ring_attention,
)
from attention_qa.positional import apply_rope


def qkv(n=24, dtype=torch.float64, d_v=5, seed=0):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(2, 3, n, 8, generator=g, dtype=dtype),
            torch.randn(2, 3, n, 8, generator=g, dtype=dtype),
            torch.randn(2, 3, n, d_v, generator=g, dtype=dtype))


@pytest.mark.parametrize("num_devices", [1, 2, 3, 4, 6, 12])
@pytest.mark.parametrize("causal", [False, True])
def test_ring_attention_equals_sdpa(num_devices, causal):
    q, k, v = qkv()
    expected = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    torch.testing.assert_close(ring_attention(q, k, v, num_devices, causal=causal), expected)


@pytest.mark.parametrize("num_devices", [1, 2, 3, 4, 6])
@pytest.mark.parametrize("causal", [False, True])
def test_zigzag_ring_attention_equals_sdpa(num_devices, causal):
    q, k, v = qkv()
    expected = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    torch.testing.assert_close(zigzag_ring_attention(q, k, v, num_devices, causal=causal),
                               expected)


def test_ring_attention_in_float32():
    q, k, v = qkv(dtype=torch.float32)
    for causal in (False, True):
        expected = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        got = ring_attention(q, k, v, 4, causal=causal)
        assert got.dtype == torch.float32
        torch.testing.assert_close(got, expected, rtol=1e-5, atol=1e-5)


def test_indivisible_length_names_both():
    q, k, v = qkv(n=10)
    with pytest.raises(ValueError, match=r"n=10.*num_devices=4"):
        ring_attention(q, k, v, 4)
    with pytest.raises(ValueError, match=r"n=10.*2·num_devices=4"):
        zigzag_ring_attention(q, k, v, 2)


def test_bad_inputs_are_refused():
    q, k, v = qkv()
    for bad in (0, -1, 2.0, True):
        with pytest.raises(ValueError, match="num_devices"):
            ring_attention(q, k, v, bad)
    with pytest.raises(ValueError):
        ring_attention(q[0], k[0], v[0], 2)
    with pytest.raises(ValueError):
        ring_attention(q, k[..., :12, :], v[..., :12, :], 2)


def test_merge_partials_equals_attention_over_both_blocks():
    q, k, v = qkv()
    out_a, lse_a = block_attention(q, k[..., :10, :], v[..., :10, :])
    out_b, lse_b = block_attention(q, k[..., 10:, :], v[..., 10:, :])
    out, lse = merge_partials(out_a, lse_a, out_b, lse_b)
    torch.testing.assert_close(out, F.scaled_dot_product_attention(q, k, v))
    scores = q @ k.transpose(-2, -1) / math.sqrt(8)
    torch.testing.assert_close(lse, torch.logsumexp(scores, -1))


def test_merge_partials_keeps_large_scores_finite_and_masked_rows_zero():
    out_a, out_b = torch.ones(3, 2, dtype=torch.float64), 3 * torch.ones(3, 2,
                                                                          dtype=torch.float64)
    lse_a = torch.tensor([800.0, 800.0, -math.inf], dtype=torch.float64)
    lse_b = torch.tensor([800.0, -math.inf, -math.inf], dtype=torch.float64)
    out, lse = merge_partials(out_a, lse_a, out_b, lse_b)
    assert out[0].tolist() == pytest.approx([2.0, 2.0]) and out[1].tolist() == [1.0, 1.0]
    assert out[2].tolist() == [0.0, 0.0] and lse[2] == -math.inf
    assert abs(lse[0].item() - (800 + math.log(2))) < 1e-12


def test_device_tokens_cover_the_sequence_once():
    for order in ("contiguous", "zigzag"):
        held = device_tokens(16, 4, order)
        assert sorted(torch.cat(held).tolist()) == list(range(16))
    assert device_tokens(16, 4, "zigzag")[0].tolist() == [0, 1, 14, 15]
    with pytest.raises(ValueError, match="order"):
        device_tokens(16, 4, "striped")


def brute_force_work(num_devices, causal, order, chunk_tokens):
    """Scores each device computes, counted token by token from the positions it holds:
    device r holds its queries all along and sees every K/V block once."""
    n = 2 * num_devices * chunk_tokens
    held = device_tokens(n, num_devices, order)
    work = []
    for idx in held:
        pairs = sum(1 for i in idx.tolist() for j in range(n) if not causal or j <= i)
        work.append(pairs / chunk_tokens ** 2)
    return work


@pytest.mark.parametrize("num_devices", [1, 2, 3, 4])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("order", ["contiguous", "zigzag"])
def test_schedule_work_matches_a_count_of_token_pairs(num_devices, causal, order):
    schedule = ring_schedule(num_devices, causal, order, chunk_tokens=4)
    work = [sum(step[r]["work"] for step in schedule) for r in range(num_devices)]
    assert work == pytest.approx(brute_force_work(num_devices, causal, order, 4))
    for s, step in enumerate(schedule):
        assert [e["source"] for e in step] == [(r - s) % num_devices
                                               for r in range(num_devices)]


def test_zigzag_balances_causal_work_and_contiguous_does_not():
    for p in (2, 4, 8):
        zig = [sum(st[r]["work"] for st in ring_schedule(p, True, "zigzag"))
               for r in range(p)]
        flat = [sum(st[r]["work"] for st in ring_schedule(p, True, "contiguous"))
                for r in range(p)]
        assert max(zig) == pytest.approx(min(zig))
        assert flat == sorted(flat) and flat[-1] > 2.9 * flat[0]
        assert sum(zig) == pytest.approx(sum(flat))


def test_ring_traffic_by_hand():
    t = ring_traffic(1024, 4, num_heads=8, num_kv_heads=2, d_head=16, bytes_per_element=2)
    block = 256 * 2 * 2 * 16 * 2  # tokens × (K and V) × kv heads × d_head × bytes
    assert t["sent per step"] == block and t["sent in all"] == 3 * block
    assert t["Q and output"] == 2 * 256 * 8 * 16 * 2
    assert t["K/V blocks live"] == 3 and t["K/V live"] == 3 * block
    assert t["full K/V"] == 4 * block
    with pytest.raises(ValueError, match="num_devices=3"):
        ring_traffic(1024, 3, 8, 2, 16)


@pytest.mark.parametrize("training", [False, True])
def test_kv_blocks_live_match_a_walk_round_the_ring(training):
    """At step s device 0 computes with the block from device −s, receives the next one
    unless s is the last step, and in training keeps its own block for the backward pass."""
    for devices in range(1, 7):
        live = 0
        for s in range(devices):
            blocks = {(-s) % devices}
            if s < devices - 1:
                blocks.add((-s - 1) % devices)
            if training:
                blocks.add(0)
            live = max(live, len(blocks))
        t = ring_traffic(12 * devices, devices, 4, 2, 8, training=training)
        assert t["K/V blocks live"] == live


def test_ulysses_traffic_by_hand_and_against_the_ring():
    t = ulysses_traffic(1024, 4, num_heads=8, num_kv_heads=4, d_head=16, bytes_per_element=2)
    head = 256 * 16 * 2  # one head of one device's tokens, in bytes
    assert t["sent, Q/K/V"] == 3 * (8 + 2 * 4) * head // 4
    assert t["sent, output"] == 3 * 8 * head // 4
    assert t["sent in all"] == t["sent, Q/K/V"] + t["sent, output"]
    # The ring's bytes per device grow towards the whole K/V; Ulysses' fall as 1/P.
    ring = [ring_traffic(4096, p, 8, 8, 16)["sent in all"] for p in (2, 4, 8)]
    ulysses = [ulysses_traffic(4096, p, 8, 8, 16)["sent in all"] for p in (2, 4, 8)]
    assert ring[0] < ring[1] < ring[2] and ulysses[0] > ulysses[1] > ulysses[2]
    with pytest.raises(ValueError, match="num_kv_heads=2"):
        ulysses_traffic(1024, 4, 8, 2, 16)


def s2_by_loops(n, group, heads):
    """S²-Attn's allowed pairs written out: same group (shifted by G/2 for the second half
    of the heads, whose first and last half-groups stand alone), and not in the future."""
    out = torch.zeros(heads, n, n, dtype=torch.bool)
    for h in range(heads):
        offset = group // 2 if h >= heads // 2 else 0
        for i in range(n):
            for j in range(i + 1):
                out[h, i, j] = (i + offset) // group == (j + offset) // group
    return out


def test_shifted_sparse_mask_by_loops():
    assert torch.equal(shifted_sparse_mask(16, 4, 4), s2_by_loops(16, 4, 4))
    full = shifted_sparse_mask(8, 4, 2, causal=False)
    assert full[1, 2, 5] and not full[0, 2, 5] and full[0, 5, 6]
    with pytest.raises(ValueError, match="group_size=3"):
        shifted_sparse_mask(12, 3, 2)
    with pytest.raises(ValueError, match="num_heads=3"):
        shifted_sparse_mask(16, 4, 3)


def test_packed_documents_equal_separate_runs():
    lengths = [5, 3, 8]
    g = torch.Generator().manual_seed(1)
    x = [torch.randn(2, length, 8, generator=g, dtype=torch.float64) for length in lengths]
    separate = [F.scaled_dot_product_attention(apply_rope(t), apply_rope(t), t,
                                               is_causal=True) for t in x]
    packed = torch.cat(x, dim=-2)  # (2, 16, 8)
    pos = packed_position_ids(lengths)
    rotated = apply_rope(packed, pos)
    got = F.scaled_dot_product_attention(rotated, rotated, packed,
                                         attn_mask=document_mask(lengths))
    torch.testing.assert_close(got, torch.cat(separate, dim=-2))
    assert pos.tolist() == [0, 1, 2, 3, 4, 0, 1, 2, 0, 1, 2, 3, 4, 5, 6, 7]
    with pytest.raises(ValueError, match="lengths"):
        document_mask([3, 0])
