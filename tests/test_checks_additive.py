"""check_additive_scores (q05): passes right answers, names each classic slip."""

import pytest
import torch

from attention_qa.attention import AdditiveAttention
from attention_qa.checks.attention import ADDITIVE_SLIPS, additive_variant, check_additive_scores


def right(q, k, W_q, W_k, w_v):
    q_h = q @ W_q.T  # (..., n, d_hidden)
    k_h = k @ W_k.T  # (..., m, d_hidden)
    return torch.tanh(q_h.unsqueeze(-2) + k_h.unsqueeze(-3)) @ w_v  # (..., n, m)


def with_module(q, k, W_q, W_k, w_v):
    """The package's module, weights copied in; its log-weights are the scores up to a shift."""
    module = AdditiveAttention(q.shape[-1], k.shape[-1], w_v.shape[0]).to(q.dtype)
    with torch.no_grad():
        module.W_q.weight.copy_(W_q)
        module.W_k.weight.copy_(W_k)
        module.w_v.weight.copy_(w_v.unsqueeze(0))
        features = torch.tanh(module.W_q(q).unsqueeze(-2) + module.W_k(k).unsqueeze(-3))
        return module.w_v(features).squeeze(-1)


@pytest.mark.parametrize("fn", [right, with_module, lambda *a: right(*(x.float() for x in a))])
def test_right_answers_pass(fn):
    assert check_additive_scores(fn) is None


def test_reference_agrees_with_the_module_weights():
    g = torch.Generator().manual_seed(0)
    q, k = torch.randn(2, 3, 5, generator=g), torch.randn(2, 4, 7, generator=g)
    module = AdditiveAttention(5, 7, 6)
    w_q, w_k, w_v = module.W_q.weight, module.W_k.weight, module.w_v.weight[0]
    with torch.no_grad():
        scores = additive_variant(q, k, w_q, w_k, w_v)  # (2, 3, 4)
        _, weights = module(q, k, torch.zeros(2, 4, 1))
    assert torch.allclose(torch.softmax(scores, dim=-1), weights, atol=1e-6)


@pytest.mark.parametrize("bug", list(ADDITIVE_SLIPS))
def test_each_slip_is_named(bug):
    def slip(q, k, W_q, W_k, w_v):
        return additive_variant(q, k, W_q, W_k, w_v, bug)

    with pytest.raises(AssertionError) as err:
        check_additive_scores(slip)
    assert ADDITIVE_SLIPS[bug] in str(err.value)


def test_a_learner_written_slip_is_named():
    def no_tanh(q, k, W_q, W_k, w_v):
        return (q @ W_q.T @ w_v).unsqueeze(-1) + (k @ W_k.T @ w_v).unsqueeze(-2)  # (..., n, m)

    with pytest.raises(AssertionError, match="tanh is missing"):
        check_additive_scores(no_tanh)


def test_shape_and_crash_feedback():
    def features_only(q, k, W_q, W_k, w_v):
        return torch.tanh((q @ W_q.T).unsqueeze(-2) + (k @ W_k.T).unsqueeze(-3))

    with pytest.raises(AssertionError, match="hidden axis"):
        check_additive_scores(features_only)
    with pytest.raises(AssertionError, match="raised RuntimeError on q \\(3, 6\\)"):
        check_additive_scores(
            lambda q, k, W_q, W_k, w_v: right(q, k, W_q, W_k, w_v) if q.shape == k.shape else q @ k
        )
    with pytest.raises(AssertionError, match="off by up to"):
        check_additive_scores(lambda *a: right(*a) + 1)


def test_global_random_state_is_left_alone():
    torch.manual_seed(0)
    expected = torch.rand(3)
    torch.manual_seed(0)
    check_additive_scores(right)
    assert torch.equal(torch.rand(3), expected)
