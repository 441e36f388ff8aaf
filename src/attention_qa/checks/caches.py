"""Checkers of the cache and inference exercises: multi-head latent attention's cache
(q27), the blocks of a paged K/V cache (q29), and a decode step's arithmetic intensity (q33).

The first two answers are whole numbers, compared exactly; the intensity to 1e-6 relative.
Every checker takes one real number in any type (Python, numpy, a one-element tensor) and
refuses a string or a bool (``as_number``).
Each slip is a public ``*_variant`` switch with its message in ``*_SLIPS``, as in the other
checker modules.
"""

from __future__ import annotations

import math
from typing import Callable

import torch

from attention_qa.checks.common import as_real_tensor, call_learner, close
from attention_qa.inference import decode_intensity


def as_number(value, case: str) -> torch.Tensor:
    """A learner's scalar answer as a 0-d tensor in its own dtype; anything but one real
    number (a string, a bool, several values, a complex number) is refused."""
    refused = AssertionError(f"on {case}, the answer should be one number, got {value!r}")
    try:
        number = as_real_tensor(value, case)
    except AssertionError:
        raise refused from None
    if number.numel() != 1:
        raise refused
    return number.reshape(())


def _number(got, case: str):
    """A whole-number answer as a Python int or float, to compare exactly: any one real
    number is accepted (a Python or numpy number, a one-element tensor), through
    ``as_number``; a string or a bool is refused."""
    return as_number(got, case).item()


def _first_slip(got, case: str, slips: dict, variant: Callable, expected) -> None:
    for bug, message in slips.items():
        wrong = variant(bug)
        if wrong != expected and got == wrong:
            raise AssertionError(f"on {case}, {message}")


# --- q27: check_mla_cache_bytes ------------------------------------------------------------

MLA_CACHE_SLIPS = {
    "keys_and_values": (
        "this is the cache of multi-head attention, 2·h·d_head numbers per token and layer: "
        "MLA caches only the latent c (d_latent numbers) and the RoPE key (d_rope), and "
        "rebuilds every head's K and V from c"
    ),
    "no_rope": (
        "the decoupled RoPE key is missing: each token also caches its d_rope-wide key k_R, "
        "so a layer keeps d_latent + d_rope numbers per token"
    ),
    "latent_twice": (
        "the latent is counted twice, as if K and V each had their own: one c serves both "
        "(W_UK and W_UV both read it), so a layer keeps d_latent + d_rope numbers per token"
    ),
    "latent_and_rope_twice": (
        "the factor 2 of MHA's K and V does not apply: one latent c and one RoPE key, "
        "d_latent + d_rope numbers per token and layer"
    ),
    "rope_per_head": (
        "the RoPE key is counted per head: all heads share one k_R of width d_rope (only the "
        "RoPE *query* is per head, and queries are not cached)"
    ),
    "no_layers": "the count is for one layer: every layer keeps its own latent, times num_layers",
    "elements": "that is a count of numbers: multiply by bytes_per_element to get bytes",
}


def mla_cache_variant(num_layers, num_heads, d_head, d_latent, d_rope, seq_len,
                      bytes_per_element, bug: str | None = None):
    """MLA's cache in bytes, or the answer of one slip of ``MLA_CACHE_SLIPS``."""
    per_token = {
        None: d_latent + d_rope,
        "keys_and_values": 2 * num_heads * d_head,
        "no_rope": d_latent,
        "latent_twice": 2 * d_latent + d_rope,
        "latent_and_rope_twice": 2 * (d_latent + d_rope),
        "rope_per_head": d_latent + num_heads * d_rope,
    }.get(bug, d_latent + d_rope)
    layers = 1 if bug == "no_layers" else num_layers
    size = 1 if bug == "elements" else bytes_per_element
    return layers * per_token * seq_len * size


def check_mla_cache_bytes(fn: Callable) -> None:
    """Check ``fn(num_layers, num_heads, d_head, d_latent, d_rope, seq_len,
    bytes_per_element)``: the bytes of multi-head latent attention's cache for one sequence,
    ``num_layers · (d_latent + d_rope) · seq_len · bytes_per_element`` (DeepSeek-V2, 2024).
    Any one real number is accepted (Python, numpy, a one-element tensor); a string is not."""
    cases = [
        ("num_layers=3, num_heads=4, d_head=8, d_latent=16, d_rope=4, seq_len=10, 2 bytes",
         (3, 4, 8, 16, 4, 10, 2)),
        ("num_layers=3, num_heads=8, d_head=16, d_latent=40, d_rope=8, seq_len=7, 4 bytes",
         (3, 8, 16, 40, 8, 7, 4)),
        ("DeepSeek-V2: num_layers=60, num_heads=128, d_head=128, d_latent=512, d_rope=64, "
         "seq_len=1024, 2 bytes", (60, 128, 128, 512, 64, 1024, 2)),
    ]
    for case, args in cases:
        expected = mla_cache_variant(*args)
        got = _number(call_learner(fn, case, *args), case)
        if got == expected:
            continue
        _first_slip(got, case, MLA_CACHE_SLIPS,
                    lambda bug, args=args: mla_cache_variant(*args, bug=bug), expected)
        raise AssertionError(
            f"on {case}, got {got:,} bytes but the cache holds {expected:,}: "
            f"num_layers · (d_latent + d_rope) · seq_len · bytes_per_element"
        )


# --- q29: check_blocks_needed --------------------------------------------------------------

BLOCKS_SLIPS = {
    "floor": (
        "a partly filled last block is not counted: a sequence of length L takes "
        "ceil(L / block_size) blocks, e.g. 5 tokens in blocks of 4 take 2"
    ),
    "plus_one": (
        "L // block_size + 1 counts one block too many when L is a multiple of block_size: "
        "use ceil(L / block_size), which is -(-L // block_size)"
    ),
    "pooled_slots": (
        "the positions of all sequences were pooled before dividing: a block belongs to one "
        "sequence, so round up per sequence, then add"
    ),
    "reserved": (
        "every sequence was given the blocks of the longest one, as a contiguous cache "
        "reserves its maximum length: paging takes only the blocks a sequence uses"
    ),
    "slots": "that counts positions (tokens), not blocks of block_size positions",
}


def blocks_variant(lengths, block_size, bug: str | None = None) -> int:
    """Blocks a paged cache takes for these lengths, or the answer of one slip."""
    if bug == "floor":
        return sum(n // block_size for n in lengths)
    if bug == "plus_one":
        return sum(n // block_size + 1 for n in lengths)
    if bug == "pooled_slots":
        return math.ceil(sum(lengths) / block_size)
    if bug == "reserved":
        return len(lengths) * math.ceil(max(lengths) / block_size)
    if bug == "slots":
        return sum(lengths)
    return sum(math.ceil(n / block_size) for n in lengths)


def check_blocks_needed(fn: Callable) -> None:
    """Check ``fn(lengths, block_size)``: the blocks a paged K/V cache (Kwon et al., 2023)
    takes for sequences of these lengths, ``Σ ceil(length / block_size)``. Any one real
    number is accepted (Python, numpy, a one-element tensor); a string is not."""
    cases = [
        ("lengths=[5, 3], block_size=4", [5, 3], 4),
        ("lengths=[8, 16, 1], block_size=8 (exact multiples)", [8, 16, 1], 8),
        ("lengths=[7, 7, 7], block_size=16", [7, 7, 7], 16),
        ("lengths=[100, 33, 64, 2], block_size=16", [100, 33, 64, 2], 16),
        ("lengths=[9], block_size=1", [9], 1),
    ]
    for case, lengths, block_size in cases:
        expected = blocks_variant(lengths, block_size)
        got = _number(call_learner(fn, case, list(lengths), block_size), case)
        if got == expected:
            continue
        _first_slip(got, case, BLOCKS_SLIPS,
                    lambda bug, lengths=lengths, b=block_size: blocks_variant(lengths, b, bug),
                    expected)
        raise AssertionError(
            f"on {case}, got {got} blocks but the sequences take {expected}: "
            f"Σ ceil(length / block_size)"
        )


INTENSITY_SLIPS = {
    "no_batch": (
        "the batch is left out of the FLOPs: every sequence in the batch multiplies by "
        "every weight, 2·P FLOPs each"
    ),
    "no_cache": "the K/V cache is left out of the bytes: a decode step reads it too",
    "one_flop": "a multiply-add is counted as 1 FLOP; count it as 2, as PyTorch's counter does",
    "weights_per_sequence": (
        "the weights are counted once per sequence; the batch shares one read of them"
    ),
}


def intensity_variant(P, B, w, c, bug: str | None = None) -> float:
    flops = (1 if bug == "one_flop" else 2) * P * (1 if bug == "no_batch" else B)
    weights = P * w * (B if bug == "weights_per_sequence" else 1)
    return flops / (weights + (0 if bug == "no_cache" else c))


def check_decode_intensity(fn: Callable) -> None:
    """Check ``fn(num_params, batch, bytes_per_weight, cache_bytes) -> FLOPs per byte`` of
    a decode step: 2·P·B over P·bytes_per_weight + cache_bytes, with cache_bytes the cache
    of the whole batch. Any real number is accepted (a Python or numpy number, or a
    one-element tensor of any dtype), right to its dtype's precision; a string is not."""
    for P, B, w, c in ((6.7e9, 1, 2, 2.1e9), (6.7e9, 16, 2, 34e9), (7e10, 64, 0.5, 1.3e10),
                       (1e9, 8, 1, 0.0)):
        case = (f"num_params={P:g}, batch={B}, bytes_per_weight={w}, "
                f"cache_bytes={c:g}")
        expected = decode_intensity(int(P), B, w, c)
        got = as_number(call_learner(fn, case, int(P), B, w, c), case)
        if close(got, torch.tensor(expected, dtype=torch.float64)):
            continue
        for bug, message in INTENSITY_SLIPS.items():
            wrong = intensity_variant(int(P), B, w, c, bug)
            if close(got, torch.tensor(wrong, dtype=torch.float64)):
                raise AssertionError(f"on {case}, {message}")
        got = got.item()
        raise AssertionError(f"on {case}, got {got:.4g} FLOPs per byte, expected {expected:.4g}")
