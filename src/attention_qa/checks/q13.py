"""The checker of q13's exercise: ``check_cross_attention``."""

from __future__ import annotations

from functools import partial
from typing import Callable

import torch

from attention_qa.checks.common import (
    NAN_SCORES,
    as_answer,
    call_learner,
    close,
    diagnose,
    first_of_pair,
    require_shape,
)
from attention_qa.masks import causal_mask, padding_mask
from attention_qa.multihead import MultiHeadAttention

CROSS_SLIPS = {
    "kv_from_decoder": (
        "the keys and values come from the decoder (target): in cross-attention only the "
        "queries come from the decoder; keys and values come from the encoder output, memory"
    ),
    "kv_from_decoder_causal": (
        "this is masked decoder self-attention (Q, K and V from the target, causal mask); "
        "cross-attention takes keys and values from memory, with the source padding mask"
    ),
    "q_from_encoder": (
        "the roles are swapped: the queries must come from the decoder (target) and the "
        "keys and values from memory, i.e. mha(target, memory, memory, mask)"
    ),
    "no_padding_mask": (
        "the source padding is not masked: memory positions at or beyond src_lengths[b] "
        "must get zero weight (padding_mask(src_lengths, m) shaped to (B, 1, 1, m))"
    ),
    "mask_inverted": (
        "the padding mask is read the wrong way round: True means may attend, so the real "
        "source tokens are the True positions"
    ),
    "causal_mask": (
        "a causal mask is applied to cross-attention: every target position may see the "
        "whole (unpadded) source, which was fully available before decoding started"
    ),
}


def cross_variant(mha, target, memory, src_lengths, bug: str | None = None):
    """Cross-attention with one known slip switched on (None: no slip)."""
    n, m = target.shape[1], memory.shape[1]
    pad = padding_mask(src_lengths, m)[:, None, None, :]  # (B, 1, 1, m)
    if bug == "kv_from_decoder":
        return mha(target, target, target)
    if bug == "kv_from_decoder_causal":
        return mha(target, target, target, causal_mask(n))
    if bug == "q_from_encoder":
        return mha(memory, target, target)
    mask = {
        "no_padding_mask": None,
        "mask_inverted": ~pad,
        "causal_mask": pad & causal_mask(n, m),
    }.get(bug, pad)
    return mha(target, memory, memory, mask)  # (B, n, d_model), (B, h, n, m)


def _cross_output_variant(mha, target, memory, src_lengths, bug: str) -> torch.Tensor:
    return cross_variant(mha, target, memory, src_lengths, bug)[0]


def check_cross_attention(fn: Callable) -> None:
    """Check ``fn(mha, target, memory, src_lengths)``: the decoder's cross-attention.

    ``mha`` is a :class:`~attention_qa.multihead.MultiHeadAttention`; ``target`` (B, n, d_model)
    is the decoder's input to the layer, ``memory`` (B, m, d_model) the encoder's output and
    ``src_lengths`` a list of B valid source lengths (the rest of memory is padding). ``fn``
    returns the output (B, n, d_model), or ``(output, weights)`` with weights (B, h, n, m).
    The reference follows Vaswani et al. (2017), section 3.2.3: queries from the decoder, keys
    and values from the encoder output. The global random state is left untouched.
    """
    cases = [
        ("B=2, n=3 target tokens, m=6 memory tokens, src_lengths=[6, 4], h=2", 2, 3, 6, [6, 4], 2),
        ("B=2, n=5, m=4, src_lengths=[3, 4], h=4", 2, 5, 4, [3, 4], 4),
        ("B=2, n=m=5, src_lengths=[5, 2], h=2", 2, 5, 5, [5, 2], 2),
        ("B=1, n=4, m=7, src_lengths=[5], h=1", 1, 4, 7, [5], 1),
    ]
    d_model = 8
    with torch.random.fork_rng(devices=[]), torch.no_grad():
        torch.manual_seed(13)
        for case, B, n, m, lengths, h in cases:
            mha = MultiHeadAttention(d_model, h).eval()
            target = torch.randn(B, n, d_model)
            memory = torch.randn(B, m, d_model)
            expected, expected_weights = cross_variant(mha, target, memory, lengths)
            result = call_learner(fn, case, mha, target.clone(), memory.clone(), list(lengths))
            got = as_answer(result, case, "the output", output_only=True)
            if isinstance(got, torch.Tensor) and n != m and tuple(got.shape) == (B, m, d_model):
                raise AssertionError(
                    f"on {case}, the output has shape {tuple(got.shape)} = (B, m, d_model), one "
                    f"row per memory token: {CROSS_SLIPS['q_from_encoder']}"
                )
            got = require_shape(got, expected.shape, case, "the output")
            diagnose(
                got, expected, case, "the output",
                "mha(target, memory, memory, source padding mask)",
                CROSS_SLIPS, partial(_cross_output_variant, mha, target, memory, lengths),
                nan_hint=NAN_SCORES,
            )
            if first_of_pair(result) is not result and result[1] is not None:
                weights = as_answer(result[1], case, "the weights")
                if (
                    isinstance(weights, torch.Tensor)
                    and n != m
                    and tuple(weights.shape) == (B, h, n, n)
                ):
                    raise AssertionError(
                        f"on {case}, the weights have shape {tuple(weights.shape)} = "
                        f"(B, h, n, n): {CROSS_SLIPS['kv_from_decoder']}"
                    )
                weights = require_shape(weights, expected_weights.shape, case, "the weights")
                if not close(weights, expected_weights):
                    raise AssertionError(
                        f"on {case}, the output is right but the weights are not those of "
                        f"mha(target, memory, memory, mask), shape (B, h, n, m)"
                    )
