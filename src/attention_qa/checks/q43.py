"""The checker of q43's exercise: ``check_fake_quantize``."""

from __future__ import annotations

from functools import partial
from typing import Callable

import torch

from attention_qa.checks.common import call_learner, diagnose, require_shape

FAKE_QUANTIZE_SLIPS = {
    "per_tensor": (
        "one scale serves the whole tensor; the exercise asks for one scale per row "
        "(per index of the leading dimensions), the absmax of that row"
    ),
    "per_column": (
        "the scale is the absmax of each column; the exercise asks for one per row, over "
        "the last dimension"
    ),
    "full_range": (
        "the scale is absmax / 2^(bits−1); symmetric quantisation divides by "
        "2^(bits−1) − 1 (127 at 8 bits), so that ±absmax land on ±(2^(bits−1) − 1)"
    ),
    "full_range_clamped": (
        "the scale is absmax / 2^(bits−1) and q is clamped to ±(2^(bits−1) − 1), so ±absmax "
        "come back one step short; divide by 2^(bits−1) − 1 (127 at 8 bits), so that ±absmax "
        "land on ±(2^(bits−1) − 1)"
    ),
    "full_range_unclamped": (
        "the scale is absmax / 2^(bits−1), a grid of 2^(bits−1) steps each side (±128 at 8 "
        "bits, beyond int8's 127); divide by 2^(bits−1) − 1 (127 at 8 bits), so that ±absmax "
        "land on ±(2^(bits−1) − 1)"
    ),
    "unsigned_range": (
        "the scale is absmax / (2^bits − 1), the step of an unsigned grid; a symmetric grid "
        "has 2^(bits−1) − 1 steps on each side of 0"
    ),
    "truncate": (
        "x / scale is cut towards zero (an int cast or trunc) instead of rounded to the "
        "nearest integer"
    ),
    "floor": "x / scale is rounded down (floor) instead of to the nearest integer",
    "max_not_absmax": (
        "the scale comes from the row's max, not from its largest absolute value max|x|"
    ),
    "integers": (
        "these are the integers q; return them dequantized, q · scale, on x's scale"
    ),
}


def fake_quantize_variant(x: torch.Tensor, bits: int, bug: str | None = None) -> torch.Tensor:
    """x rounded to a symmetric bits-bit grid with one absmax scale per row; ``bug``: a slip."""
    qmax = 2 ** (bits - 1) - 1
    if bug == "per_tensor":
        absmax = x.abs().amax()
    elif bug == "per_column":
        absmax = x.abs().amax(dim=-2, keepdim=True)
    elif bug == "max_not_absmax":
        absmax = x.amax(dim=-1, keepdim=True)
    else:
        absmax = x.abs().amax(dim=-1, keepdim=True)  # (..., 1)
    if bug in ("full_range", "full_range_clamped", "full_range_unclamped"):
        scale = absmax / 2 ** (bits - 1)
    elif bug == "unsigned_range":
        scale = absmax / (2**bits - 1)
    else:
        scale = absmax / qmax
    scale = torch.where(scale == 0, torch.ones_like(scale), scale)
    ratio = x / scale
    if bug == "truncate":
        q = torch.trunc(ratio)
    elif bug == "floor":
        q = torch.floor(ratio)
    else:
        q = torch.round(ratio)
    if bug == "full_range":  # int8's range, −128 … 127 at 8 bits
        q = q.clamp(-qmax - 1, qmax)
    elif bug != "full_range_unclamped":
        q = q.clamp(-qmax, qmax)
    return q if bug == "integers" else q * scale


def _case(shape: tuple, bits: int, g: torch.Generator, zero_row: bool = False) -> torch.Tensor:
    """Entries s_row · (j + u), j a whole number, |u| ≤ 0.3, and one entry of each row at
    ±(2^(bits−1) − 1) · s_row: x / scale stays 0.2 away from every rounding tie, so an answer
    computed in float16 rounds as the reference does."""
    qmax = 2 ** (bits - 1) - 1
    rows = torch.Size(shape[:-1]).numel()
    d = shape[-1]
    j = torch.randint(-qmax + 1, qmax, (rows, d), generator=g).double()
    u = 0.6 * torch.rand(rows, d, generator=g, dtype=torch.float64) - 0.3
    x = j + u
    x[:, 0] = qmax * (2 * torch.randint(0, 2, (rows,), generator=g) - 1)  # the absmax entry
    perm = torch.stack([torch.randperm(d, generator=g) for _ in range(rows)])
    x = torch.gather(x, 1, perm)  # the absmax anywhere in the row
    s = 2.0 ** torch.randint(-4, 2, (rows, 1), generator=g).double()  # exact row scales
    x = x * s
    if zero_row:
        x[-1] = 0
    return x.reshape(shape)


def check_fake_quantize(fn: Callable) -> None:
    """Check ``fn(x, bits)`` = x rounded to a symmetric ``bits``-bit grid with one absmax
    scale per row (per index of every dimension but the last), dequantized, on x of shapes
    (4, 16) at 8 bits, (2, 3, 8) at 4 bits and (6, 32) at 3 bits, the last with a row of
    zeros."""
    g = torch.Generator().manual_seed(43)
    for case, shape, bits, zero_row in (
        ("x of shape (4, 16), bits 8", (4, 16), 8, False),
        ("x of shape (2, 3, 8), bits 4", (2, 3, 8), 4, False),
        ("x of shape (6, 32), bits 3, with a row of zeros", (6, 32), 3, True),
    ):
        x = _case(shape, bits, g, zero_row)
        expected = fake_quantize_variant(x, bits)
        got = call_learner(fn, case, x.clone(), bits)
        got = require_shape(got, expected.shape, case, "the result")
        diagnose(
            got, expected, case, "the result", "round(x / s) · s, s = max|row| / (2^(bits−1) − 1)",
            FAKE_QUANTIZE_SLIPS, partial(fake_quantize_variant, x, bits),
            nan_hint="a row of zeros has scale 0 and 0 / 0 is NaN: give it scale 1",
        )
