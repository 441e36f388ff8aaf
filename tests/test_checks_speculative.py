"""check_acceptance_rate (q34): independent right answers pass, each slip is named."""

import re

import pytest
import torch

from attention_qa.checks import check_acceptance_rate
from attention_qa.checks.decoding import ACCEPTANCE_SLIPS, acceptance_variant


def by_minimum(p, q):
    return torch.minimum(p, q).sum(dim=-1)


def by_total_variation(p, q):
    return 1 - 0.5 * (p - q).abs().sum(dim=-1)


def by_expected_acceptance(p, q):
    """E over x ~ q of min(1, p(x)/q(x)), written as that expectation."""
    return (q * torch.where(q > 0, (p / q).clamp(max=1), torch.zeros_like(q))).sum(-1)


@pytest.mark.parametrize("right", [by_minimum, by_total_variation, by_expected_acceptance])
def test_right_answers_pass(right):
    check_acceptance_rate(right)


@pytest.mark.parametrize("bug", list(ACCEPTANCE_SLIPS))
def test_each_slip_is_named(bug):
    with pytest.raises(AssertionError, match=re.escape(ACCEPTANCE_SLIPS[bug])):
        check_acceptance_rate(lambda p, q: acceptance_variant(p, q, bug))


def test_other_wrong_answers_fail():
    with pytest.raises(AssertionError, match="shape"):
        check_acceptance_rate(lambda p, q: torch.minimum(p, q))
    with pytest.raises(AssertionError, match="off by"):
        check_acceptance_rate(lambda p, q: torch.minimum(p, q).sum(-1) * 0.9)
