"""Training long context across devices: ring attention, its schedule, S²-Attn, packing (q36).

- ``ring_attention`` simulates ring attention (Liu, Zaharia and Abbeel, 2023, "Ring
  Attention with Blockwise Transformers for Near-Infinite Context"): each of P devices holds
  the queries, keys and values of one contiguous block of the sequence; at each of P steps
  every device attends its queries to the K/V block it holds, then passes that block to the
  next device round the ring. The partial results are merged with the online softmax of
  FlashAttention (q21's ``efficient.tiled_attention`` keeps a running max and denominator;
  ``merge_partials`` does the same with the log-sum-exp, as zhuzilin/ring-flash-attention's
  ``update_out_and_lse`` in ring_flash_attn/utils.py does).
- ``zigzag_ring_attention`` assigns the 2P chunks of the sequence as Megatron-LM's context
  parallelism does (megatron/core/utils.py, ``_get_batch_on_this_cp_rank_per_sequence_
  balancing``: device r holds chunks r and 2P − 1 − r) so that causal work is balanced;
  ``ring_schedule`` counts the work of each device at each step for either assignment.
- ``shifted_sparse_mask`` is LongLoRA's S²-Attn (Chen et al., 2024, arXiv:2309.12307, §3.2)
  as a mask: attention within groups of G tokens, and in the second half of the heads
  within groups shifted by G/2, as the authors' FlashAttention path builds them
  (dvlab-research/LongLoRA, llama_attn_replace.py, ``forward_flashattn``).
- ``document_mask`` and ``packed_position_ids`` describe several documents packed into one
  row: a block-diagonal causal mask and positions that restart at each document, as
  Megatron-LM's ``reset_attention_mask`` and ``reset_position_ids`` build them
  (megatron/training/utils/common_utils.py, ``get_ltor_masks_and_position_ids``).
"""

import math

import torch

from attention_qa.validation import check_qkv, require_positive_int, shape_str

ORDERS = ("contiguous", "zigzag")


def ring_attention(q, k, v, num_devices, causal=False):
    """Attention computed as P = ``num_devices`` devices would compute it round a ring.

    q: (B, h, n, d_k), k: (B, h, n, d_k), v: (B, h, n, d_v); n divisible by num_devices.
    Device r holds tokens [r·n/P, (r + 1)·n/P) of q, k and v. At step s it holds the K/V
    block that started on device (r − s) mod P, attends its queries to it (skipping it when
    the causal mask hides the whole block) and merges the result into its running output;
    then, except after the last step, every device passes its K/V block to the next: P − 1
    sends. Only K/V blocks travel. Returns the
    output (B, h, n, d_v), equal to ``F.scaled_dot_product_attention(q, k, v,
    is_causal=causal)`` up to rounding.
    """
    return _ring(q, k, v, num_devices, causal, "contiguous")


def zigzag_ring_attention(q, k, v, num_devices, causal=True):
    """``ring_attention`` with the zig-zag assignment: the sequence is cut into 2P chunks
    and device r holds chunks r and 2P − 1 − r (n divisible by 2P). Same output, in the
    original token order; with a causal mask over one sequence every device does the same
    work. ``causal`` defaults to True because the order only matters under a causal mask
    (ring-flash-attention's zig-zag asserts it); False is allowed and gives the same result
    as ``ring_attention``."""
    return _ring(q, k, v, num_devices, causal, "zigzag")


def merge_partials(out_a, lse_a, out_b, lse_b):
    """Merge two attentions of the same queries over two disjoint sets of keys.

    out_a, out_b: (..., n, d_v) each normalised over its own keys; lse_a, lse_b: (..., n)
    the log-sum-exp of the scores behind each (−inf where a row saw no key). Returns
    (out, lse), the attention over both sets: lse = log(e^lse_a + e^lse_b) and
    out = e^(lse_a − lse)·out_a + e^(lse_b − lse)·out_b. Subtracting lse before the
    exponential keeps it finite whatever the size of the scores.
    """
    lse = torch.logaddexp(lse_a, lse_b)  # (..., n)
    # A row that has seen no key on either side keeps lse = −inf: weigh both by 0, not NaN.
    shift = torch.where(torch.isinf(lse), torch.zeros_like(lse), lse)
    w_a = torch.exp(lse_a - shift).unsqueeze(-1)  # (..., n, 1)
    w_b = torch.exp(lse_b - shift).unsqueeze(-1)  # (..., n, 1)
    return w_a * out_a + w_b * out_b, lse  # (..., n, d_v), (..., n)


def block_attention(q, k, v, mask=None):
    """Softmax attention of q over one K/V block, with its log-sum-exp.

    q: (..., n, d_k), k: (..., m, d_k), v: (..., m, d_v); mask: bool (n, m), True = may
    attend. Returns (out (..., n, d_v), lse (..., n)); a row with no visible key gives
    out = 0 and lse = −inf, which ``merge_partials`` weighs by 0.
    """
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])  # (..., n, m)
    if mask is not None:
        scores = scores.masked_fill(~mask, -math.inf)
    lse = torch.logsumexp(scores, dim=-1)  # (..., n)
    shift = torch.where(torch.isinf(lse), torch.zeros_like(lse), lse)
    weights = torch.exp(scores - shift.unsqueeze(-1))  # (..., n, m), 0 where masked
    return weights @ v, lse  # (..., n, d_v), (..., n)


def device_tokens(n: int, num_devices: int, order: str = "contiguous") -> list[torch.Tensor]:
    """The token positions each device holds: one contiguous block of n/P tokens
    ("contiguous"), or chunks r and 2P − 1 − r of 2P equal chunks ("zigzag")."""
    require_positive_int("n", n)
    require_positive_int("num_devices", num_devices)
    if order not in ORDERS:
        raise ValueError(f"order must be one of {ORDERS}, got {order!r}")
    parts = num_devices if order == "contiguous" else 2 * num_devices
    if n % parts:
        if order == "contiguous":
            raise ValueError(f"n={n} must be divisible by num_devices={num_devices}")
        raise ValueError(f"n={n} must be divisible by 2·num_devices={parts} for the zig-zag "
                         f"order (num_devices={num_devices})")
    chunks = torch.arange(n).reshape(parts, n // parts)  # (parts, n/parts)
    if order == "contiguous":
        return list(chunks)
    return [torch.cat([chunks[r], chunks[parts - 1 - r]]) for r in range(num_devices)]


def _ring(q, k, v, num_devices, causal, order):
    check_qkv(q, k, v, None)
    if q.ndim != 4 or k.shape[:-1] != q.shape[:-1] or v.shape[:-1] != q.shape[:-1]:
        raise ValueError(f"q, k, v must be (B, h, n, d) with the same B, h and n; got q "
                         f"{shape_str(q.shape)}, k {shape_str(k.shape)}, v "
                         f"{shape_str(v.shape)}")
    if isinstance(num_devices, bool) or not isinstance(num_devices, int) or num_devices < 1:
        raise ValueError(f"num_devices must be a positive integer, got {num_devices!r}")
    n = q.shape[-2]
    held = device_tokens(n, num_devices, order)  # token positions on each device
    queries = [q[..., idx, :] for idx in held]  # stays on its device
    travelling = [(k[..., idx, :], v[..., idx, :], idx) for idx in held]  # K/V blocks
    out = [q.new_zeros((*q.shape[:-1], v.shape[-1]))[..., idx, :] for idx in held]
    lse = [q.new_full(q.shape[:-1], -math.inf)[..., idx] for idx in held]
    for step in range(num_devices):
        for r in range(num_devices):
            k_blk, v_blk, kv_idx = travelling[r]
            mask = None
            if causal:
                mask = held[r].unsqueeze(1) >= kv_idx.unsqueeze(0)  # (n/P, n/P)
                if not mask.any():
                    continue  # a block wholly in this device's future: no work
            blk_out, blk_lse = block_attention(queries[r], k_blk, v_blk, mask)
            out[r], lse[r] = merge_partials(out[r], lse[r], blk_out, blk_lse)
        # Every device sends its K/V block to the next one: r receives from r − 1. After
        # the last step no device needs another block, so there are P − 1 sends.
        if step < num_devices - 1:
            travelling = [travelling[(r - 1) % num_devices] for r in range(num_devices)]
    result = q.new_empty((*q.shape[:-1], v.shape[-1]))  # (B, h, n, d_v)
    for idx, part in zip(held, out, strict=True):
        result[..., idx, :] = part
    return result


def ring_schedule(num_devices: int, causal: bool = False, order: str = "contiguous",
                  chunk_tokens: int = 64) -> list[list[dict]]:
    """Who computes what, step by step: ``schedule[s][r]`` is device r at step s.

    The sequence is cut into 2P chunks of ``chunk_tokens`` tokens; each device holds two
    (chunks 2r and 2r + 1 with "contiguous", r and 2P − 1 − r with "zigzag"). Each entry
    gives ``source`` (the device whose K/V block it holds), ``pairs`` (query chunk, key
    chunk) it computes, and ``work``, the query–key scores it computes, in units of one
    full chunk × chunk tile: a pair on the causal diagonal counts (c + 1)/(2c) for c tokens
    a chunk, one wholly in the future 0 (skipped).
    """
    require_positive_int("num_devices", num_devices)
    require_positive_int("chunk_tokens", chunk_tokens)
    if order not in ORDERS:
        raise ValueError(f"order must be one of {ORDERS}, got {order!r}")
    p = num_devices
    chunks = [(2 * r, 2 * r + 1) if order == "contiguous" else (r, 2 * p - 1 - r)
              for r in range(p)]
    diagonal = (chunk_tokens + 1) / (2 * chunk_tokens)
    schedule = []
    for s in range(p):
        row = []
        for r in range(p):
            source = (r - s) % p
            pairs, work = [], 0.0
            for a in chunks[r]:
                for b in chunks[source]:
                    share = 1.0 if not causal or b < a else diagonal if b == a else 0.0
                    if share:
                        pairs.append((a, b))
                        work += share
            row.append({"source": source, "pairs": pairs, "work": work})
        schedule.append(row)
    return schedule


def ring_traffic(n: int, num_devices: int, num_heads: int, num_kv_heads: int, d_head: int,
                 bytes_per_element: int = 2, batch: int = 1, training: bool = True) -> dict:
    """Bytes per device for one attention layer's forward pass under ring attention.

    Each device holds n/P tokens. ``Q and output``: its query and output blocks.
    ``K/V live``: the K/V blocks it holds at once at the busiest step, ``K/V blocks live``
    of them: the block it computes with, the block arriving for the next step and, in
    training, its own block kept for the backward pass (as ring-flash-attention's
    ``save_for_backward`` keeps it); 3 from P = 3 on, fewer for P < 3 because the first step
    computes with its own block and the last receives nothing. Each step but the last it
    sends one K/V block, B · n/P · 2 · h_kv · d_head elements: P − 1 sends in all.
    ``full K/V`` is the K/V of the whole sequence, what one device would hold without
    context parallelism. (The log-sum-exp, B · h · n/P numbers, is left out.)
    """
    _check_sizes(n, num_devices, num_heads, num_kv_heads, d_head, bytes_per_element, batch)
    c = n // num_devices
    kv_block = batch * c * 2 * num_kv_heads * d_head * bytes_per_element
    q_block = batch * c * num_heads * d_head * bytes_per_element
    blocks_live = min(num_devices, 3 if training else 2)
    return {
        "tokens per device": c,
        "K/V block": kv_block,
        "sent per step": kv_block,
        "sent in all": (num_devices - 1) * kv_block,
        "Q and output": 2 * q_block,
        "K/V blocks live": blocks_live,
        "K/V live": blocks_live * kv_block,
        "full K/V": batch * n * 2 * num_kv_heads * d_head * bytes_per_element,
    }


def ulysses_traffic(n: int, num_devices: int, num_heads: int, num_kv_heads: int,
                    d_head: int, bytes_per_element: int = 2, batch: int = 1) -> dict:
    """Bytes one device sends in one attention layer's forward pass under DeepSpeed-Ulysses.

    Ulysses (Jacobs et al., 2023) holds n/P tokens per device outside attention. An
    all-to-all turns the split over tokens into one over heads: each device keeps 1/P of
    its Q, K and V and sends the rest; attention runs on whole heads over the whole
    sequence; a second all-to-all sends the output back. Per device that is
    (P − 1)/P · B · n/P · (2h + 2h_kv) · d_head elements, which falls as 1/P. Each device
    takes whole K/V heads here, so P must divide h_kv (and h).
    """
    _check_sizes(n, num_devices, num_heads, num_kv_heads, d_head, bytes_per_element, batch)
    if num_kv_heads % num_devices:
        raise ValueError(f"num_kv_heads={num_kv_heads} must be divisible by num_devices="
                         f"{num_devices}: each device takes whole K/V heads")
    c = n // num_devices
    width = batch * c * d_head * bytes_per_element  # one head of one device's tokens
    share = (num_devices - 1) / num_devices
    return {
        "tokens per device": c,
        "sent, Q/K/V": round(share * width * (num_heads + 2 * num_kv_heads)),
        "sent, output": round(share * width * num_heads),
        "sent in all": round(share * width * (2 * num_heads + 2 * num_kv_heads)),
    }


def _check_sizes(n, num_devices, num_heads, num_kv_heads, d_head, bytes_per_element, batch):
    for name, value in (("n", n), ("num_devices", num_devices), ("num_heads", num_heads),
                        ("num_kv_heads", num_kv_heads), ("d_head", d_head),
                        ("bytes_per_element", bytes_per_element), ("batch", batch)):
        require_positive_int(name, value)
    if n % num_devices:
        raise ValueError(f"n={n} must be divisible by num_devices={num_devices}")
    if num_heads % num_kv_heads:
        raise ValueError(f"num_heads={num_heads} must be a multiple of num_kv_heads="
                         f"{num_kv_heads}")


def shifted_sparse_mask(n: int, group_size: int, num_heads: int, causal: bool = True):
    """LongLoRA's S²-Attn as a boolean mask (h, n, n), True = may attend.

    The first h/2 heads attend within groups [0, G), [G, 2G), …; the other h/2 within
    groups shifted by half a group, [0, G/2), [G/2, 3G/2), …, [n − G/2, n), the groups of
    the authors' FlashAttention path. With ``causal`` each group is also causal.
    """
    require_positive_int("n", n)
    require_positive_int("group_size", group_size)
    require_positive_int("num_heads", num_heads)
    if n % group_size or group_size % 2:
        raise ValueError(f"n={n} must be divisible by group_size={group_size}, and "
                         f"group_size must be even")
    if num_heads % 2:
        raise ValueError(f"num_heads={num_heads} must be even: half the heads are shifted")
    pos = torch.arange(n)
    plain = pos // group_size  # (n,) group of each token
    shifted = (pos + group_size // 2) // group_size  # (n,) groups moved by G/2
    masks = [plain.unsqueeze(1) == plain.unsqueeze(0), shifted.unsqueeze(1) == shifted.unsqueeze(0)]
    if causal:
        lower = pos.unsqueeze(1) >= pos.unsqueeze(0)  # (n, n)
        masks = [m & lower for m in masks]
    half = num_heads // 2
    return torch.stack([masks[0]] * half + [masks[1]] * half)  # (h, n, n)


def document_mask(lengths) -> torch.Tensor:
    """Block-diagonal causal mask (n, n) for documents of ``lengths`` packed into one row:
    a token sees the earlier tokens of its own document only."""
    lengths = _check_lengths(lengths)
    doc = torch.repeat_interleave(torch.arange(len(lengths)), torch.tensor(lengths))  # (n,)
    pos = torch.arange(len(doc))
    return (doc.unsqueeze(1) == doc.unsqueeze(0)) & (pos.unsqueeze(1) >= pos.unsqueeze(0))


def packed_position_ids(lengths) -> torch.Tensor:
    """Positions (n,) that restart at 0 at the start of each packed document."""
    lengths = _check_lengths(lengths)
    return torch.cat([torch.arange(length) for length in lengths])


def _check_lengths(lengths) -> list[int]:
    lengths = list(lengths)
    if not lengths or any(isinstance(x, bool) or not isinstance(x, int) or x < 1
                          for x in lengths):
        raise ValueError(f"lengths must be a non-empty list of positive integers, got "
                         f"{lengths!r}")
    return lengths
