"""The checker of q15's exercise: ``check_sinusoidal_encoding``."""

from __future__ import annotations

from functools import partial
from typing import Callable

import torch

from attention_qa.checks.common import call_learner, diagnose, require_shape

SINUSOIDAL_SLIPS = {
    "swapped": "the sine and cosine columns are swapped: PE[pos, 2i] is sin and PE[pos, 2i+1] cos",
    "halves": (
        "the sines fill the first half of the columns and the cosines the second; the paper "
        "interleaves them: sin in the even columns 2i, cos in the odd columns 2i+1"
    ),
    "pair_index": (
        "the exponent uses the pair index i over d_model (10000^(i/d_model)); it must be "
        "10000^(2i/d_model), so that the slowest frequency is about 1/10000"
    ),
    "column_index": (
        "each column gets its own frequency 10000^(j/d_model); a sine column 2i and the cosine "
        "column 2i+1 next to it must share the frequency 1/10000^(2i/d_model)"
    ),
    "start_at_1": "the positions start at 1; the first row is position 0 (sin 0 = 0, cos 0 = 1)",
}


def sinusoidal_variant(num_positions: int, d_model: int, bug: str | None = None):
    pos = torch.arange(num_positions, dtype=torch.float64).unsqueeze(1)  # (N, 1)
    if bug == "start_at_1":
        pos = pos + 1
    i = torch.arange(d_model // 2, dtype=torch.float64)  # (d_model/2,)
    exponent = i / d_model if bug == "pair_index" else 2 * i / d_model
    angles = pos / 10000.0**exponent  # (N, d_model/2)
    pe = torch.empty(num_positions, d_model, dtype=torch.float64)
    if bug == "halves":
        half = d_model // 2
        pe[:, :half], pe[:, half:] = torch.sin(angles), torch.cos(angles)
    elif bug == "column_index":
        j = torch.arange(d_model, dtype=torch.float64)
        every = pos / 10000.0 ** (j / d_model)  # (N, d_model)
        pe[:, 0::2], pe[:, 1::2] = torch.sin(every[:, 0::2]), torch.cos(every[:, 1::2])
    elif bug == "swapped":
        pe[:, 0::2], pe[:, 1::2] = torch.cos(angles), torch.sin(angles)
    else:
        pe[:, 0::2], pe[:, 1::2] = torch.sin(angles), torch.cos(angles)
    return pe  # (N, d_model)


def check_sinusoidal_encoding(fn: Callable) -> None:
    """Check ``fn(num_positions, d_model)`` against the encoding of Vaswani et al. (2017) §3.5."""
    cases = [(6, 4), (50, 16), (20, 64)]
    for num_positions, d_model in cases:
        case = f"num_positions={num_positions}, d_model={d_model}"
        expected = sinusoidal_variant(num_positions, d_model)
        got = call_learner(fn, case, num_positions, d_model)
        got = require_shape(got, expected.shape, case, "the encoding")
        diagnose(
            got, expected, case, "the encoding",
            "PE[pos, 2i] = sin(pos / 10000^(2i/d_model)), PE[pos, 2i+1] = cos(…)",
            SINUSOIDAL_SLIPS, partial(sinusoidal_variant, num_positions, d_model),
        )
