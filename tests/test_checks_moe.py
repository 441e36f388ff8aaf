"""The checker of q24's exercise: a router's top-k gates."""

import re

import pytest
import torch

from attention_qa.checks.moe import TOP_K_GATES_SLIPS, check_top_k_gates, top_k_gates_variant
from attention_qa.moe import top_k_gates


def test_passes_the_package_and_a_learner_who_masks_with_minus_infinity():
    check_top_k_gates(top_k_gates)

    def learner(logits, top_k):
        kth = logits.topk(top_k, dim=-1).values[..., -1:]  # (..., 1): the k-th largest
        return torch.softmax(logits.masked_fill(logits < kth, float("-inf")), dim=-1)

    check_top_k_gates(learner)


@pytest.mark.parametrize("bug", list(TOP_K_GATES_SLIPS))
def test_names_each_slip(bug):
    with pytest.raises(AssertionError, match=re.escape(TOP_K_GATES_SLIPS[bug][:30])):
        check_top_k_gates(lambda logits, k: top_k_gates_variant(logits, k, bug))


def test_each_slip_is_wrong_on_the_first_case():
    g = torch.Generator().manual_seed(0)
    logits = torch.randn(6, 4, generator=g, dtype=torch.float64)
    right = top_k_gates(logits, 2)
    for bug in TOP_K_GATES_SLIPS:
        assert not torch.allclose(top_k_gates_variant(logits, 2, bug), right), bug


def test_reports_a_wrong_shape_a_crash_and_a_wrong_answer():
    with pytest.raises(AssertionError, match="the gates has shape"):
        check_top_k_gates(lambda logits, k: logits.topk(k, dim=-1).values)
    with pytest.raises(AssertionError, match="raised ZeroDivisionError"):
        check_top_k_gates(lambda logits, k: 1 / 0)
    with pytest.raises(AssertionError, match="off by up to"):
        check_top_k_gates(lambda logits, k: top_k_gates(logits, k) * 0.9)
