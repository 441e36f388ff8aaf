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


def additive_by_loop(module, q, k, v, mask=None):
    """Bahdanau et al. (2015): e_ij = w_vᵀ tanh(W_q q_i + W_k k_j), one pair at a time.

    q: (n, d_query), k: (m, d_key), v: (m, d_v); no batch dims.
    """
    W_q, W_k = module.W_q.weight.detach(), module.W_k.weight.detach()
    w_v = module.w_v.weight.detach()[0]
    n, m = q.shape[0], k.shape[0]
    out = torch.zeros(n, v.shape[1], dtype=q.dtype)
    weights = torch.zeros(n, m, dtype=q.dtype)
    for i in range(n):
        allowed = [j for j in range(m) if mask is None or bool(mask[i, j])]
        if not allowed:
            continue
        e = {j: float(w_v @ torch.tanh(W_q @ q[i] + W_k @ k[j])) for j in allowed}
        top = max(e.values())
        z = sum(math.exp(s - top) for s in e.values())
        for j in allowed:
            weights[i, j] = math.exp(e[j] - top) / z
            out[i] += weights[i, j] * v[j]
    return out, weights


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


def test_matches_loop_with_different_d_query_and_d_key():
    module = make_module(5, 3, 7)
    q, k, v = rand(4, 5, seed=1), rand(6, 3, seed=2), rand(6, 2, seed=3)
    out, w = module(q, k, v)
    ref_out, ref_w = additive_by_loop(module, q, k, v)
    assert out.shape == (4, 2) and w.shape == (4, 6)
    torch.testing.assert_close(out, ref_out)
    torch.testing.assert_close(w, ref_w)
    torch.testing.assert_close(w.sum(-1), torch.ones(4, dtype=torch.float64))


def test_matches_loop_with_mask_and_fully_masked_row():
    module = make_module(4, 4, 6, seed=1)
    q, k, v = rand(3, 4, seed=4), rand(5, 4, seed=5), rand(5, 3, seed=6)
    mask = torch.tensor(
        [[True, False, True, False, True], [False] * 5, [False, False, False, False, True]]
    )
    out, w = module(q, k, v, mask=mask)
    ref_out, ref_w = additive_by_loop(module, q, k, v, mask)
    torch.testing.assert_close(out, ref_out)
    torch.testing.assert_close(w, ref_w)
    # The fully masked query gets zero weights and zero output, not NaN.
    assert torch.equal(w[1], torch.zeros(5, dtype=torch.float64))
    assert torch.equal(out[1], torch.zeros(3, dtype=torch.float64))
    assert torch.isfinite(out).all()
    assert (w[~mask] == 0).all()
    torch.testing.assert_close(w[2], torch.tensor([0, 0, 0, 0, 1.0], dtype=torch.float64))


def test_fully_masked_everything_is_zero_not_nan():
    module = make_module(2, 2, 3)
    q, k, v = rand(2, 3, 2), rand(2, 4, 2), rand(2, 4, 5)
    out, w = module(q, k, v, mask=torch.zeros(3, 4, dtype=torch.bool))
    assert torch.equal(out, torch.zeros(2, 3, 5, dtype=torch.float64))
    assert torch.equal(w, torch.zeros(2, 3, 4, dtype=torch.float64))


def test_batch_dims_broadcast_like_scaled_dot_product_attention():
    module = make_module(4, 3, 5, seed=2)
    q = rand(2, 1, 3, 4, seed=7)  # (B, 1, n, d_query)
    k = rand(1, 4, 6, 3, seed=8)  # (1, h, m, d_key)
    v = rand(6, 2, seed=9)  # (m, d_v), shared by every batch entry
    mask = rand(3, 6, seed=10) > -0.5  # (n, m), broadcast over batch
    out, w = module(q, k, v, mask=mask)
    assert out.shape == (2, 4, 3, 2) and w.shape == (2, 4, 3, 6)
    for b in range(2):
        for h in range(4):
            ref_out, ref_w = additive_by_loop(module, q[b, 0], k[0, h], v, mask)
            torch.testing.assert_close(out[b, h], ref_out)
            torch.testing.assert_close(w[b, h], ref_w)


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


@settings(max_examples=25, deadline=None)
@given(
    n=st.integers(1, 4),
    m=st.integers(1, 4),
    d_query=st.integers(1, 4),
    d_key=st.integers(1, 4),
    d_v=st.integers(1, 3),
    seed=st.integers(0, 2**16),
)
def test_property_matches_loop(n, m, d_query, d_key, d_v, seed):
    module = make_module(d_query, d_key, 3, seed=seed)
    q, k = rand(n, d_query, seed=seed), rand(m, d_key, seed=seed + 1)
    v = rand(m, d_v, seed=seed + 2)
    mask = rand(n, m, seed=seed + 3) > 0
    out, w = module(q, k, v, mask=mask)
    ref_out, ref_w = additive_by_loop(module, q, k, v, mask)
    torch.testing.assert_close(out, ref_out)
    torch.testing.assert_close(w, ref_w)


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


def test_bad_inputs_name_argument_and_shapes():
    module = make_module(4, 3, 5)
    q, k, v = rand(2, 4), rand(5, 3), rand(5, 6)
    with pytest.raises(ValueError, match=r"q has shape \(2, 5\) but this module has d_query=4"):
        module(rand(2, 5), k, v)
    with pytest.raises(ValueError, match=r"k has shape \(5, 4\) but this module has d_key=3"):
        module(q, rand(5, 4), v)
    with pytest.raises(ValueError, match=r"v has shape \(4, 6\) but k has m=5 keys"):
        module(q, k, rand(4, 6))
    with pytest.raises(ValueError, match=r"q has shape \(4,\) but needs at least 2 dimensions"):
        module(rand(4), k, v)
    with pytest.raises(TypeError, match="k must be a torch.Tensor, got list"):
        module(q, [[0.0] * 3] * 5, v)
    with pytest.raises(TypeError, match="v must be a floating-point tensor"):
        module(q, k, torch.ones(5, 6, dtype=torch.long))
    with pytest.raises(TypeError, match="q, k and v must share a dtype"):
        module(q, k, v.float())
    with pytest.raises(ValueError, match=r"k has shape \(3,\) which does not broadcast"):
        module(rand(2, 2, 4), rand(3, 5, 3), v)
    with pytest.raises(TypeError, match="mask must be a boolean tensor"):
        module(q, k, v, mask=torch.ones(2, 5))
    with pytest.raises(ValueError, match=r"mask has shape \(3, 5\) which does not broadcast"):
        module(q, k, v, mask=torch.ones(3, 5, dtype=torch.bool))
    with pytest.raises(ValueError, match=r"mask has shape \(2, 2, 5\) which does not broadcast"):
        module(q, k, v, mask=torch.ones(2, 2, 5, dtype=torch.bool))


def test_dtype_mismatch_with_weights_is_explained():
    module = AdditiveAttention(2, 2, 3)  # float32 weights
    with pytest.raises(TypeError, match="module's weights have dtype torch.float32"):
        module(rand(1, 2), rand(3, 2), rand(3, 1))


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
