"""The checker of q25's exercise: ``check_rope``."""

from __future__ import annotations

from functools import partial
from typing import Callable

import torch

from attention_qa.checks.common import call_learner, diagnose, require_shape

ROPE_SLIPS = {
    "halves": (
        "feature i is paired with feature i + d/2 (the rotate-half layout of GPT-NeoX and "
        "Hugging Face's LLaMA); this exercise uses the RoFormer paper's adjacent pairs "
        "(x[2i], x[2i+1])"
    ),
    "negative": (
        "every pair turns the wrong way: the rotation is (x₀ cos − x₁ sin, x₀ sin + x₁ cos) "
        "for the angle +position·θᵢ"
    ),
    "half_exponent": "θᵢ = base^(−i/d): the exponent is −2i/d, for i = 0 … d/2 − 1",
    "double_exponent": (
        "θᵢ = base^(−4i/d): the exponent is −2i/d with i the pair's index, or −j/d with j "
        "= 2i the index of the pair's first feature, not both"
    ),
    "no_base": "the base is ignored: θᵢ = base^(−2i/d) with the base passed in",
}


def rope_variant(x, positions, base=10000.0, bug: str | None = None):
    """RoFormer's rotation of adjacent pairs (eq. 34), or the slip ``bug``; in float64."""
    d = x.shape[-1]
    i = torch.arange(d // 2, dtype=torch.float64)  # (d/2,)
    exponent = {"half_exponent": -i / d, "double_exponent": -4 * i / d}.get(bug, -2 * i / d)
    theta = (10000.0 if bug == "no_base" else base) ** exponent  # (d/2,)
    angles = positions.to(torch.float64).unsqueeze(-1) * theta  # (n, d/2)
    if bug == "negative":
        angles = -angles
    cos, sin = angles.cos(), angles.sin()  # (n, d/2) each
    x = x.double()
    if bug == "halves":
        first, second = x[..., : d // 2], x[..., d // 2 :]  # (..., n, d/2) each
        return torch.cat([first * cos - second * sin, first * sin + second * cos], dim=-1)
    even, odd = x[..., 0::2], x[..., 1::2]  # (..., n, d/2) each
    return torch.stack([even * cos - odd * sin, even * sin + odd * cos], dim=-1).flatten(-2)


def check_rope(fn: Callable) -> None:
    """Check ``fn(x, positions, base)``: x (..., n, d), positions (n,) integers; x of shape
    (n, d), (h, n, d) and (B, h, n, d)."""
    g = torch.Generator().manual_seed(25)
    cases = [
        ("x of shape (6, 8), positions 0 … 5, base 10000", (6, 8), torch.arange(6), 10000.0),
        (
            "x of shape (2, 5, 16), positions [3, 0, 11, 7, 40], base 500",
            (2, 5, 16), torch.tensor([3, 0, 11, 7, 40]), 500.0,
        ),
        (
            "x of shape (2, 3, 4, 6), positions [0, 97, 5, 64], base 10000",
            (2, 3, 4, 6), torch.tensor([0, 97, 5, 64]), 10000.0,
        ),
    ]
    for case, shape, positions, base in cases:
        x = torch.randn(*shape, generator=g, dtype=torch.float64)
        expected = rope_variant(x, positions, base)
        got = call_learner(fn, case, x.clone(), positions.clone(), base)
        got = require_shape(got, expected.shape, case, "the rotated x")
        diagnose(
            got, expected, case, "the rotated x",
            "(x₂ᵢ cos − x₂ᵢ₊₁ sin, x₂ᵢ sin + x₂ᵢ₊₁ cos) of the angle position·base^(−2i/d)",
            ROPE_SLIPS, partial(rope_variant, x, positions, base),
        )
