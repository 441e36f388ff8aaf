"""What AdditiveAttention (Bahdanau's score) and GeneralAttention (Luong's bilinear score)
share: shapes, broadcasting, the mask convention and the messages on bad input, each checked
against an explicit loop over query–key pairs with the paper's score."""

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_qa.attention import AdditiveAttention, GeneralAttention


def additive(d_query, d_key, seed=0):
    torch.manual_seed(seed)
    module = AdditiveAttention(d_query, d_key, 5).double()
    W_q, W_k = module.W_q.weight.detach(), module.W_k.weight.detach()
    w_v = module.w_v.weight.detach()[0]
    # Bahdanau et al. (2015): e_ij = w_vᵀ tanh(W_q q_i + W_k k_j)
    return module, lambda q_i, k_j: float(w_v @ torch.tanh(W_q @ q_i + W_k @ k_j))


def general(d_query, d_key, seed=0):
    torch.manual_seed(seed)
    module = GeneralAttention(d_query, d_key).double()
    W = module.W.weight.detach()  # (d_query, d_key)
    # Luong et al. (2015): e_ij = q_iᵀ W k_j, no scaling
    return module, lambda q_i, k_j: float(q_i @ W @ k_j)


MODULES = pytest.mark.parametrize("make", [additive, general], ids=["additive", "general"])


def by_loop(score, q, k, v, mask=None):
    """Softmax over the allowed keys of score(q_i, k_j), one pair at a time.

    q: (n, d_query), k: (m, d_key), v: (m, d_v); no batch dims.
    """
    n, m = q.shape[0], k.shape[0]
    out = torch.zeros(n, v.shape[1], dtype=q.dtype)
    weights = torch.zeros(n, m, dtype=q.dtype)
    for i in range(n):
        allowed = [j for j in range(m) if mask is None or bool(mask[i, j])]
        if not allowed:
            continue
        e = {j: score(q[i], k[j]) for j in allowed}
        top = max(e.values())
        z = sum(math.exp(s - top) for s in e.values())
        for j in allowed:
            weights[i, j] = math.exp(e[j] - top) / z
            out[i] += weights[i, j] * v[j]
    return out, weights


def rand(*shape, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g, dtype=torch.float64)


@MODULES
def test_matches_loop_with_different_d_query_and_d_key(make):
    module, score = make(5, 3)
    q, k, v = rand(4, 5, seed=1), rand(6, 3, seed=2), rand(6, 2, seed=3)
    out, w = module(q, k, v)
    ref_out, ref_w = by_loop(score, q, k, v)
    assert out.shape == (4, 2) and w.shape == (4, 6)
    torch.testing.assert_close(out, ref_out)
    torch.testing.assert_close(w, ref_w)
    torch.testing.assert_close(w.sum(-1), torch.ones(4, dtype=torch.float64))


@MODULES
def test_matches_loop_with_mask_and_fully_masked_row(make):
    module, score = make(4, 3, seed=1)
    q, k, v = rand(3, 4, seed=4), rand(5, 3, seed=5), rand(5, 3, seed=6)
    mask = torch.tensor(
        [[True, False, True, False, True], [False] * 5, [False, False, False, False, True]]
    )
    out, w = module(q, k, v, mask=mask)
    ref_out, ref_w = by_loop(score, q, k, v, mask)
    torch.testing.assert_close(out, ref_out)
    torch.testing.assert_close(w, ref_w)
    # The fully masked query gets zero weights and zero output, not NaN.
    assert torch.equal(w[1], torch.zeros(5, dtype=torch.float64))
    assert torch.equal(out[1], torch.zeros(3, dtype=torch.float64))
    assert (w[~mask] == 0).all()
    torch.testing.assert_close(w[2], torch.tensor([0, 0, 0, 0, 1.0], dtype=torch.float64))


@MODULES
def test_fully_masked_everything_is_zero_not_nan(make):
    module, _ = make(2, 3)
    q, k, v = rand(2, 3, 2), rand(2, 4, 3), rand(2, 4, 5)
    out, w = module(q, k, v, mask=torch.zeros(3, 4, dtype=torch.bool))
    assert torch.equal(out, torch.zeros(2, 3, 5, dtype=torch.float64))
    assert torch.equal(w, torch.zeros(2, 3, 4, dtype=torch.float64))


@MODULES
def test_batch_dims_broadcast_like_scaled_dot_product_attention(make):
    module, score = make(4, 3, seed=2)
    q = rand(2, 1, 3, 4, seed=7)  # (B, 1, n, d_query)
    k = rand(1, 4, 6, 3, seed=8)  # (1, h, m, d_key)
    v = rand(6, 2, seed=9)  # (m, d_v), shared by every batch entry
    mask = rand(3, 6, seed=10) > -0.5  # (n, m), broadcast over batch
    out, w = module(q, k, v, mask=mask)
    assert out.shape == (2, 4, 3, 2) and w.shape == (2, 4, 3, 6)
    for b in range(2):
        for h in range(4):
            ref_out, ref_w = by_loop(score, q[b, 0], k[0, h], v, mask)
            torch.testing.assert_close(out[b, h], ref_out)
            torch.testing.assert_close(w[b, h], ref_w)


@MODULES
@settings(max_examples=25, deadline=None)
@given(
    n=st.integers(1, 4),
    m=st.integers(1, 4),
    d_query=st.integers(1, 4),
    d_key=st.integers(1, 4),
    d_v=st.integers(1, 3),
    seed=st.integers(0, 2**16),
)
def test_property_matches_loop(make, n, m, d_query, d_key, d_v, seed):
    module, score = make(d_query, d_key, seed=seed)
    q, k = rand(n, d_query, seed=seed), rand(m, d_key, seed=seed + 1)
    v = rand(m, d_v, seed=seed + 2)
    mask = rand(n, m, seed=seed + 3) > 0
    out, w = module(q, k, v, mask=mask)
    ref_out, ref_w = by_loop(score, q, k, v, mask)
    torch.testing.assert_close(out, ref_out)
    torch.testing.assert_close(w, ref_w)


@MODULES
def test_bad_inputs_name_argument_and_shapes(make):
    module, _ = make(4, 3)
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


@MODULES
def test_dtype_mismatch_with_weights_is_explained(make):
    module, _ = make(2, 2)
    module.float()
    with pytest.raises(TypeError, match="module's weights have dtype torch.float32"):
        module(rand(1, 2), rand(3, 2), rand(3, 1))
