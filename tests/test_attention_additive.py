"""AdditiveAttention's own tests and attention_pooling's; what AdditiveAttention shares with
GeneralAttention (masks, broadcasting, messages) is tested in test_score_modules.py."""

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_qa.attention import (
    AdditiveAttention,
    attention_pooling,
    scaled_dot_product_attention,
)


def make_module(d_query, d_key, d_hidden, seed=0, dtype=torch.float64):
    torch.manual_seed(seed)
    return AdditiveAttention(d_query, d_key, d_hidden).to(dtype)


def rand(*shape, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g, dtype=torch.float64)


# --- AdditiveAttention -------------------------------------------------------------------


def test_parameters_have_the_papers_shapes():
    module = AdditiveAttention(5, 3, 7)
    assert module.W_q.weight.shape == (7, 5)
    assert module.W_k.weight.shape == (7, 3)
    assert module.w_v.weight.shape == (1, 7)
    # The paper's score has no bias terms.
    assert module.W_q.bias is None and module.W_k.bias is None and module.w_v.bias is None


def test_same_output_shapes_as_scaled_dot_product_attention():
    q, k, v = rand(2, 3, 4), rand(2, 5, 4), rand(2, 5, 6)
    mask = torch.ones(3, 5, dtype=torch.bool).tril()
    add_out, add_w = make_module(4, 4, 8)(q, k, v, mask=mask)
    dot_out, dot_w = scaled_dot_product_attention(q, k, v, mask=mask)
    assert add_out.shape == dot_out.shape and add_w.shape == dot_w.shape
    # Both respect the same mask convention: True = may attend.
    assert (add_w[..., ~mask] == 0).all() and (dot_w[..., ~mask] == 0).all()


def test_zero_score_weights_give_uniform_attention():
    # With w_v = 0 every score is 0, so each unmasked key gets weight 1/m.
    module = make_module(3, 3, 4)
    with torch.no_grad():
        module.w_v.weight.zero_()
    q, k, v = rand(2, 3), rand(5, 3), rand(5, 2)
    out, w = module(q, k, v)
    torch.testing.assert_close(w, torch.full((2, 5), 0.2, dtype=torch.float64))
    torch.testing.assert_close(out, v.mean(0).expand(2, 2))


def test_gradients_reach_every_parameter():
    module = AdditiveAttention(3, 2, 4)
    q, k, v = torch.randn(2, 3), torch.randn(4, 2), torch.randn(4, 5)
    out, _ = module(q, k, v)
    out.square().sum().backward()
    for name, p in module.named_parameters():
        assert p.grad is not None and p.grad.abs().sum() > 0, name


@pytest.mark.parametrize(
    "args, message",
    [
        ((0, 3, 4), "d_query must be a positive integer, got 0"),
        ((3, -1, 4), "d_key must be a positive integer, got -1"),
        ((3, 3, 2.5), "d_hidden must be a positive integer, got 2.5"),
    ],
)
def test_bad_constructor_arguments(args, message):
    with pytest.raises(ValueError, match=message):
        AdditiveAttention(*args)


def test_scaled_dot_product_attention_still_requires_shared_d_k():
    # Relaxing the check for additive attention must not relax it for the dot product.
    with pytest.raises(ValueError, match=r"k has shape \(5, 3\) but q has d_k=4"):
        scaled_dot_product_attention(rand(2, 4), rand(5, 3), rand(5, 6))


# --- attention_pooling --------------------------------------------------------------------


def pooling_by_loop(queries, keys, values, bandwidth):
    n, m = len(queries), len(keys)
    weights = torch.zeros(n, m, dtype=torch.float64)
    out = torch.zeros(n, dtype=torch.float64)
    for i in range(n):
        kernel = [
            math.exp(-((queries[i].item() - keys[j].item()) ** 2) / (2 * bandwidth**2))
            for j in range(m)
        ]
        total = sum(kernel)
        for j in range(m):
            weights[i, j] = kernel[j] / total
            out[i] += weights[i, j] * values[j].item()
    return out, weights


def test_pooling_matches_loop():
    queries = torch.linspace(0, 5, 7, dtype=torch.float64)
    keys = torch.sort(rand(9, seed=1) * 2 + 2.5).values
    values = torch.sin(keys)
    out, w = attention_pooling(queries, keys, values, bandwidth=0.8)
    ref_out, ref_w = pooling_by_loop(queries, keys, values, 0.8)
    assert out.shape == (7,) and w.shape == (7, 9)
    torch.testing.assert_close(out, ref_out)
    torch.testing.assert_close(w, ref_w)


def test_pooling_bandwidth_limits():
    keys = torch.tensor([0.0, 1.0, 2.0, 3.0])
    values = torch.tensor([10.0, 20.0, 30.0, 40.0])
    queries = torch.tensor([0.9, 2.2])
    # A narrow kernel picks the nearest key; a wide one averages all values.
    out, w = attention_pooling(queries, keys, values, bandwidth=0.01)
    torch.testing.assert_close(out, torch.tensor([20.0, 30.0]))
    out, w = attention_pooling(queries, keys, values, bandwidth=1e4)
    torch.testing.assert_close(out, torch.tensor([25.0, 25.0]))
    torch.testing.assert_close(w, torch.full((2, 4), 0.25))


def test_pooling_is_scaled_dot_product_with_scores_from_distances():
    # Nadaraya–Watson is attention whose score is −(q − k)²/(2σ²).
    queries, keys, values = rand(3, seed=2), rand(5, seed=3), rand(5, seed=4)
    sigma = 0.7
    out, w = attention_pooling(queries, keys, values, sigma)
    scores = -((queries[:, None] - keys[None, :]) ** 2) / (2 * sigma**2)
    torch.testing.assert_close(w, torch.softmax(scores, dim=-1))
    torch.testing.assert_close(out, w @ values)


def test_pooling_learnable_bandwidth_gets_a_gradient():
    sigma = torch.tensor(0.5, requires_grad=True)
    out, _ = attention_pooling(rand(4, seed=1), rand(6, seed=2), rand(6, seed=3), sigma.double())
    out.sum().backward()
    assert sigma.grad is not None and sigma.grad.abs() > 0


@settings(max_examples=25, deadline=None)
@given(
    n=st.integers(1, 6),
    m=st.integers(1, 6),
    bandwidth=st.floats(0.1, 10.0),
    seed=st.integers(0, 2**16),
)
def test_pooling_property(n, m, bandwidth, seed):
    queries, keys, values = rand(n, seed=seed), rand(m, seed=seed + 1), rand(m, seed=seed + 2)
    out, w = attention_pooling(queries, keys, values, bandwidth)
    ref_out, ref_w = pooling_by_loop(queries, keys, values, bandwidth)
    torch.testing.assert_close(out, ref_out)
    torch.testing.assert_close(w, ref_w)
    # A weighted average never leaves the range of the values.
    assert (out >= values.min() - 1e-12).all() and (out <= values.max() + 1e-12).all()


@pytest.mark.parametrize("bandwidth", [0, 0.0, -1.0, math.inf, math.nan])
def test_pooling_rejects_non_positive_bandwidth(bandwidth):
    x = torch.zeros(3)
    with pytest.raises(ValueError, match="bandwidth must be a positive, finite number"):
        attention_pooling(x, x, x, bandwidth)


def test_pooling_rejects_bad_bandwidth_type_and_tensors():
    x = torch.zeros(3)
    with pytest.raises(ValueError, match="bandwidth must be a positive, finite number"):
        attention_pooling(x, x, x, torch.tensor(-0.5))
    with pytest.raises(ValueError, match=r"got a tensor of shape \(2,\)"):
        attention_pooling(x, x, x, torch.tensor([1.0, 2.0]))
    with pytest.raises(TypeError, match="bandwidth must be a positive number, got str"):
        attention_pooling(x, x, x, "1.0")
    with pytest.raises(TypeError, match="bandwidth must be a positive number, got bool"):
        attention_pooling(x, x, x, True)


def test_pooling_rejects_bad_tensors():
    x3, x4 = torch.zeros(3), torch.zeros(4)
    with pytest.raises(ValueError, match=r"queries has shape \(2, 3\) but must be 1-D \(n,\)"):
        attention_pooling(torch.zeros(2, 3), x3, x3, 1.0)
    with pytest.raises(ValueError, match=r"keys has shape \(3, 1\) but must be 1-D \(m,\)"):
        attention_pooling(x3, torch.zeros(3, 1), x3, 1.0)
    with pytest.raises(ValueError, match=r"values has shape \(4,\) but keys has m=3"):
        attention_pooling(x3, x3, x4, 1.0)
    with pytest.raises(ValueError, match=r"keys has shape \(0,\)"):
        attention_pooling(x3, torch.zeros(0), torch.zeros(0), 1.0)
    with pytest.raises(TypeError, match="queries must be a torch.Tensor, got list"):
        attention_pooling([0.0, 1.0], x3, x3, 1.0)
    with pytest.raises(TypeError, match="values must be a floating-point tensor"):
        attention_pooling(x3, x3, torch.ones(3, dtype=torch.long), 1.0)
    with pytest.raises(TypeError, match="queries, keys and values must share a dtype"):
        attention_pooling(x3.double(), x3, x3, 1.0)
