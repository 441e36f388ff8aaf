"""The checkers of q20 (linear attention), q21 (online softmax) and q22 (previous-token score)."""

import re

import pytest
import torch
import torch.nn.functional as F

from attention_qa.checks.efficient import (
    LINEAR_SLIPS,
    ONLINE_SLIPS,
    PREVIOUS_TOKEN_SLIPS,
    check_linear_attention,
    check_online_softmax,
    check_previous_token_score,
    linear_attention_variant,
    online_softmax_variant,
    previous_token_variant,
)
from attention_qa.efficient import linear_attention, online_softmax
from attention_qa.heads import previous_token_score


def test_linear_attention_checker_passes_the_package_and_a_learner():
    check_linear_attention(lambda q, k, v: linear_attention(q, k, v))

    def learner(q, k, v):
        phi_q, phi_k = F.elu(q) + 1, F.elu(k) + 1
        kv = phi_k.transpose(-2, -1) @ v
        return (phi_q @ kv) / (phi_q @ phi_k.sum(-2, keepdim=True).transpose(-2, -1))

    check_linear_attention(learner)


@pytest.mark.parametrize("bug", list(LINEAR_SLIPS))
def test_linear_attention_checker_names_each_bug(bug):
    with pytest.raises(AssertionError, match=re.escape(LINEAR_SLIPS[bug][:30])):
        check_linear_attention(lambda q, k, v: linear_attention_variant(q, k, v, bug))


def test_linear_attention_checker_reports_a_wrong_shape_and_a_crash():
    with pytest.raises(AssertionError, match="has shape"):
        check_linear_attention(lambda q, k, v: q[..., :1])
    with pytest.raises(AssertionError, match="raised ZeroDivisionError"):
        check_linear_attention(lambda q, k, v: 1 / 0)


def test_online_softmax_checker_passes_the_package():
    check_online_softmax(online_softmax)


@pytest.mark.parametrize("bug", list(ONLINE_SLIPS))
def test_online_softmax_checker_names_each_bug(bug):
    with pytest.raises(AssertionError, match=re.escape(ONLINE_SLIPS[bug][:30])):
        check_online_softmax(lambda s, b: online_softmax_variant(s, b, bug))


def test_online_softmax_checker_catches_overflow_and_a_call_to_softmax():
    with pytest.raises(AssertionError, match="exp overflowed"):
        check_online_softmax(lambda s, b: torch.exp(s) / torch.exp(s).sum(-1, keepdim=True))
    with pytest.raises(AssertionError, match="calls softmax"):
        check_online_softmax(lambda s, b: torch.softmax(s, dim=-1))
    with pytest.raises(AssertionError, match="calls softmax"):
        check_online_softmax(lambda s, b: s.softmax(-1))
    # The patch is undone afterwards.
    assert torch.allclose(torch.softmax(torch.zeros(2), dim=-1), torch.full((2,), 0.5))


def test_previous_token_checker_passes_the_package():
    check_previous_token_score(previous_token_score)


@pytest.mark.parametrize("bug", list(PREVIOUS_TOKEN_SLIPS))
def test_previous_token_checker_names_each_bug(bug):
    with pytest.raises(AssertionError, match=re.escape(PREVIOUS_TOKEN_SLIPS[bug][:25])):
        check_previous_token_score(lambda w: previous_token_variant(w, bug))
