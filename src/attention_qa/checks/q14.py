"""The checker of q14's exercise: ``check_repeat_kv``."""

from __future__ import annotations

from typing import Callable

import torch

from attention_qa.checks.common import as_answer, call_learner, require_shape

REPEAT_KV_SLIPS = {
    "tiled": (
        "the K/V heads are tiled (repeat): query head i must use K/V head "
        "i // (num_heads // num_kv_heads), so each K/V head is repeated for its group "
        "consecutively (repeat_interleave), not cycled as i % num_kv_heads"
    ),
}


def repeat_kv_variant(kv: torch.Tensor, num_heads: int, bug: str | None = None):
    group = num_heads // kv.shape[1]
    if bug == "tiled":
        return kv.repeat(1, group, 1, 1)  # (B, h, m, d_k), heads in the wrong order
    return kv.repeat_interleave(group, dim=1)  # (B, h, m, d_k)


def check_repeat_kv(fn: Callable) -> None:
    """Check ``fn(kv, num_heads)``: (B, h_kv, m, d_k) → (B, num_heads, m, d_k) for GQA.

    Query head i must read K/V head ``i // (num_heads // h_kv)``, the grouping of PyTorch's
    ``scaled_dot_product_attention(..., enable_gqa=True)`` (Ainslie et al., 2023). The
    global random state is left untouched.
    """
    g = torch.Generator().manual_seed(14)
    cases = [
        ("kv of shape (2, 2, 5, 3), num_heads=4 (GQA, groups of 2)", (2, 2, 5, 3), 4),
        ("kv of shape (1, 2, 4, 2), num_heads=6 (GQA, groups of 3)", (1, 2, 4, 2), 6),
        ("kv of shape (2, 1, 3, 4), num_heads=4 (MQA: one K/V head)", (2, 1, 3, 4), 4),
        ("kv of shape (1, 3, 4, 2), num_heads=3 (MHA: nothing to repeat)", (1, 3, 4, 2), 3),
    ]
    for case, shape, num_heads in cases:
        kv = torch.randn(shape, generator=g)
        expected = repeat_kv_variant(kv, num_heads)
        got = as_answer(call_learner(fn, case, kv.clone(), num_heads), case, "the result")
        if isinstance(got, torch.Tensor) and tuple(got.shape) == tuple(kv.shape) != tuple(
            expected.shape
        ):
            raise AssertionError(
                f"on {case}, the result has the input's shape {tuple(got.shape)}: repeat the "
                f"K/V heads along dim 1 up to num_heads={num_heads}"
            )
        if (
            isinstance(got, torch.Tensor)
            and got.ndim == 4
            and got.shape[1] == shape[1]
            and (got.shape[2] != shape[2])
        ):
            raise AssertionError(
                f"on {case}, the result has shape {tuple(got.shape)}: the repetition went "
                f"along the token axis; repeat along the head axis, dim=1"
            )
        got = require_shape(got, expected.shape, case).double()  # copies: exact in any dtype
        if torch.equal(got, expected.double()):
            continue
        for bug, message in REPEAT_KV_SLIPS.items():
            if torch.equal(got, repeat_kv_variant(kv, num_heads, bug).double()):
                raise AssertionError(f"on {case}, {message}")
        raise AssertionError(
            f"on {case}, the result differs from kv.repeat_interleave(num_heads // h_kv, dim=1)"
        )
