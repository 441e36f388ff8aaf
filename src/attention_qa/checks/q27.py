"""The checker of q27's exercise: ``check_mla_cache_bytes``."""

from __future__ import annotations

from typing import Callable

from attention_qa.checks.common import _number, call_learner, first_slip

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
        first_slip(got, case, MLA_CACHE_SLIPS,
                    lambda bug, args=args: mla_cache_variant(*args, bug=bug), expected)
        raise AssertionError(
            f"on {case}, got {got:,} bytes but the cache holds {expected:,}: "
            f"num_layers · (d_latent + d_rope) · seq_len · bytes_per_element"
        )
