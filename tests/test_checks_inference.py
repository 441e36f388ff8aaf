"""check_decode_intensity (q33): independent right answers pass, each slip is named."""

import re

import numpy as np
import pytest
import torch

from attention_qa.checks import check_decode_intensity
from attention_qa.checks.caches import INTENSITY_SLIPS, intensity_variant


def by_formula(P, B, w, c):
    return 2 * P * B / (P * w + c)


def by_parts(P, B, w, c):
    """FLOPs and bytes built up separately, as numpy floats."""
    flops = np.float64(P) * 2.0 * B
    moved = np.float64(P) * w + np.float64(c)
    return flops / moved


def as_tensor(P, B, w, c):
    return torch.tensor(2.0 * P * B, dtype=torch.float64) / (P * w + c)


def in_half_precision(P, B, w, c):
    """Right, then rounded to a one-element bfloat16 tensor (fp16 would hold it too)."""
    return torch.tensor([2.0 * P * B / (P * w + c)]).to(torch.bfloat16)


def as_float16(P, B, w, c):
    return np.float16(2.0 * P * B / (P * w + c))


@pytest.mark.parametrize("right", [by_formula, by_parts, as_tensor, in_half_precision,
                                   as_float16])
def test_right_answers_pass(right):
    check_decode_intensity(right)


@pytest.mark.parametrize("bug", list(INTENSITY_SLIPS))
def test_each_slip_is_named(bug):
    with pytest.raises(AssertionError, match=re.escape(INTENSITY_SLIPS[bug])):
        check_decode_intensity(lambda P, B, w, c: intensity_variant(P, B, w, c, bug))


def test_other_wrong_answers_fail():
    with pytest.raises(AssertionError, match="expected"):
        check_decode_intensity(lambda P, B, w, c: 3 * P * B / (P * w + c))
    for not_a_number in ("fast", "8.0", True, torch.ones(2), complex(8.0, 0.0)):
        with pytest.raises(AssertionError, match="one number"):
            check_decode_intensity(lambda P, B, w, c, answer=not_a_number: answer)
