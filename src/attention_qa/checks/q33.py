"""The checker of q33's exercise: ``check_decode_intensity``."""

from __future__ import annotations

from typing import Callable

import torch

from attention_qa.checks.common import as_number, call_learner, close
from attention_qa.inference import decode_intensity

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
