"""check_acceptance_rate (q34): independent right answers pass in any dtype, each slip is
named, and answers that divide by q fail on the rows with zeros."""

import re

import numpy as np
import pytest
import torch

from attention_qa.checks import check_acceptance_rate
from attention_qa.checks.decoding import ACCEPTANCE_SLIPS, ZERO_HINT, acceptance_variant


def by_minimum(p, q):
    return torch.minimum(p, q).sum(dim=-1)


def by_total_variation(p, q):
    return 1 - 0.5 * (p - q).abs().sum(dim=-1)


def by_rejected_mass(p, q):
    """1 − Σ max(p − q, 0): one minus the chance of a rejection."""
    return 1 - torch.relu(p - q).sum(dim=-1)


def by_expected_acceptance(p, q):
    """E over x ~ q of min(1, p(x)/q(x)), written as that expectation."""
    return (q * torch.where(q > 0, (p / q).clamp(max=1), torch.zeros_like(q))).sum(-1)


def by_loops(p, q):
    """Python loops over the rows and the vocabulary, returning nested lists."""
    def row_alpha(p_row, q_row):
        return sum(min(a, b) for a, b in zip(p_row, q_row, strict=True))

    def walk(p_part, q_part):
        if not isinstance(p_part[0], list):
            return row_alpha(p_part, q_part)
        return [walk(a, b) for a, b in zip(p_part, q_part, strict=True)]

    return walk(p.tolist(), q.tolist())


def by_numpy(p, q):
    return np.minimum(p.numpy(), q.numpy()).sum(axis=-1)


RIGHT = [by_minimum, by_total_variation, by_rejected_mass, by_expected_acceptance, by_loops,
         by_numpy]


@pytest.mark.parametrize("right", RIGHT)
def test_right_answers_pass(right):
    check_acceptance_rate(right)


@pytest.mark.parametrize("right", [by_minimum, by_total_variation, by_rejected_mass,
                                   by_expected_acceptance])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_right_answers_pass_in_any_dtype(right, dtype):
    check_acceptance_rate(lambda p, q: right(p.to(dtype), q.to(dtype)))


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_numpy_answers_pass_in_their_dtype(dtype):
    check_acceptance_rate(lambda p, q: np.minimum(p.numpy(), q.numpy()).sum(-1).astype(dtype))


@pytest.mark.parametrize("bug", list(ACCEPTANCE_SLIPS))
def test_each_slip_is_named(bug):
    with pytest.raises(AssertionError, match=re.escape(ACCEPTANCE_SLIPS[bug])):
        check_acceptance_rate(lambda p, q: acceptance_variant(p, q, bug))


def test_dividing_by_q_fails_on_zeros_with_the_reason():
    """q · min(1, p/q) is right wherever q > 0, and NaN where p = q = 0 (0/0)."""
    with pytest.raises(AssertionError, match=re.escape(ZERO_HINT)):
        check_acceptance_rate(lambda p, q: (q * torch.clamp(p / q, max=1)).sum(-1))
    with pytest.raises(AssertionError, match=re.escape(ZERO_HINT)):
        check_acceptance_rate(lambda p, q: (q * torch.clamp(p / q, max=1)).float().sum(-1))


def test_an_answer_wrong_only_on_rows_with_zeros_is_told_which_row():
    def skips_zeros(p, q):  # drops every token where either is 0: wrong for one-hot rows
        both = (p > 0) & (q > 0)
        return torch.where(both, torch.minimum(p, q), torch.zeros_like(p)).sum(-1) + (
            ~both).all(-1) * 0.5
    with pytest.raises(AssertionError, match="disjoint supports"):
        check_acceptance_rate(skips_zeros)


def test_other_wrong_answers_fail():
    with pytest.raises(AssertionError, match="shape"):
        check_acceptance_rate(lambda p, q: torch.minimum(p, q))
    with pytest.raises(AssertionError, match="without keepdim"):
        check_acceptance_rate(lambda p, q: torch.minimum(p, q).sum(-1, keepdim=True))
    with pytest.raises(AssertionError, match="off by"):
        check_acceptance_rate(lambda p, q: torch.minimum(p, q).sum(-1) * 0.9)
    with pytest.raises(AssertionError, match="should be a tensor"):
        check_acceptance_rate(lambda p, q: "0.7")
    with pytest.raises(AssertionError, match="real numbers"):
        check_acceptance_rate(lambda p, q: torch.minimum(p, q).sum(-1) > 0.5)
