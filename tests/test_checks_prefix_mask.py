"""check_prefix_lm_mask (q32): independent right answers pass in any dtype, each slip is named."""

import re

import pytest
import torch

from attention_qa.checks import check_prefix_lm_mask
from attention_qa.checks.masks import PREFIX_SLIPS, prefix_mask_variant


def by_loop(n, prefix_len):
    return torch.tensor([[j <= i or j < prefix_len for j in range(n)] for i in range(n)])


def by_blocks(n, prefix_len):
    """A causal lower triangle, then the prefix's columns opened, as float 0/1."""
    mask = torch.tril(torch.ones(n, n))
    mask[:, :prefix_len] = 1.0
    return mask


def by_combining(n, prefix_len):
    causal = torch.ones(n, n, dtype=torch.int64).tril()
    prefix = torch.zeros(n, n, dtype=torch.int64)
    prefix[:prefix_len, :prefix_len] = 1
    return (causal + prefix).clamp(max=1)


@pytest.mark.parametrize("right", [by_loop, by_blocks, by_combining])
def test_right_answers_pass(right):
    check_prefix_lm_mask(right)


@pytest.mark.parametrize("bug", list(PREFIX_SLIPS))
def test_each_slip_is_named(bug):
    with pytest.raises(AssertionError, match=re.escape(PREFIX_SLIPS[bug])):
        check_prefix_lm_mask(lambda n, p: prefix_mask_variant(n, p, bug))


def test_other_wrong_answers_fail():
    with pytest.raises(AssertionError, match="shape"):
        check_prefix_lm_mask(lambda n, p: torch.ones(n, n + 1, dtype=torch.bool))
    with pytest.raises(AssertionError, match="True/False"):
        check_prefix_lm_mask(lambda n, p: by_loop(n, p).float() * 2)
    with pytest.raises(AssertionError, match="differs"):
        check_prefix_lm_mask(lambda n, p: by_loop(n, p).T)
