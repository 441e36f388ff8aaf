"""GeneralAttention (Luong's bilinear score) against einsum; what it shares with
AdditiveAttention (masks, broadcasting, messages) is tested in test_score_modules.py."""

import pytest
import torch

from attention_qa.attention import GeneralAttention, scaled_dot_product_attention


def make_module(d_query, d_key, seed=0, dtype=torch.float64):
    torch.manual_seed(seed)
    return GeneralAttention(d_query, d_key).to(dtype)


def rand(*shape, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g, dtype=torch.float64)


def test_parameter_is_the_score_matrix():
    module = GeneralAttention(5, 3)
    assert module.W.weight.shape == (5, 3)  # (d_query, d_key)
    assert module.W.bias is None
    assert [name for name, _ in module.named_parameters()] == ["W.weight"]


def test_matches_einsum_with_batch_dims():
    module = make_module(4, 6, seed=3)
    q, k, v = rand(2, 3, 5, 4, seed=4), rand(2, 3, 7, 6, seed=5), rand(2, 3, 7, 2, seed=6)
    W = module.W.weight.detach()
    scores = torch.einsum("...nd,de,...me->...nm", q, W, k)  # no 1/√d scaling
    ref_w = torch.softmax(scores, dim=-1)
    out, w = module(q, k, v)
    torch.testing.assert_close(w, ref_w)
    torch.testing.assert_close(out, torch.einsum("...nm,...mv->...nv", ref_w, v))


def test_identity_W_is_unscaled_dot_product_attention():
    module = make_module(4, 4)
    with torch.no_grad():
        module.W.weight.copy_(torch.eye(4))
    q, k, v = rand(3, 4, seed=1), rand(5, 4, seed=2), rand(5, 2, seed=3)
    out, w = module(q, k, v)
    ref_out, ref_w = scaled_dot_product_attention(q, k, v, scale=1.0)
    torch.testing.assert_close(out, ref_out)
    torch.testing.assert_close(w, ref_w)


def test_gradients_reach_W():
    module = GeneralAttention(3, 2)
    q, k, v = torch.randn(2, 3), torch.randn(4, 2), torch.randn(4, 5)
    out, _ = module(q, k, v)
    out.square().sum().backward()
    assert module.W.weight.grad is not None and module.W.weight.grad.abs().sum() > 0


@pytest.mark.parametrize(
    "args, message",
    [
        ((0, 3), "d_query must be a positive integer, got 0"),
        ((3, -1), "d_key must be a positive integer, got -1"),
        ((3, 2.5), "d_key must be a positive integer, got 2.5"),
    ],
)
def test_bad_constructor_arguments(args, message):
    with pytest.raises(ValueError, match=message):
        GeneralAttention(*args)


