"""scaled_dot_product_attention against PyTorch's own function, and its input checks."""

import math

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_qa.attention import scaled_dot_product_attention
from attention_qa.masks import causal_mask, padding_mask

DTYPE_TOL = {torch.float64: 1e-10, torch.float32: 1e-5, torch.bfloat16: 3e-2, torch.float16: 3e-3}


def _qkv(batch, n, m, d_k, d_v, dtype=torch.float64, seed=0):
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(*batch, n, d_k, generator=g, dtype=torch.float64).to(dtype)
    k = torch.randn(*batch, m, d_k, generator=g, dtype=torch.float64).to(dtype)
    v = torch.randn(*batch, m, d_v, generator=g, dtype=torch.float64).to(dtype)
    return q, k, v


@settings(max_examples=40, deadline=None)
@given(
    batch=st.lists(st.integers(1, 3), max_size=2),
    n=st.integers(1, 7),
    m=st.integers(1, 7),
    d_k=st.integers(1, 9),
    d_v=st.integers(1, 9),
    seed=st.integers(0, 10_000),
)
def test_matches_pytorch_without_mask(batch, n, m, d_k, d_v, seed):
    q, k, v = _qkv(batch, n, m, d_k, d_v, seed=seed)
    out, weights = scaled_dot_product_attention(q, k, v)
    assert out.shape == (*batch, n, d_v) and weights.shape == (*batch, n, m)
    torch.testing.assert_close(out, F.scaled_dot_product_attention(q, k, v))
    torch.testing.assert_close(weights.sum(-1), torch.ones(*batch, n, dtype=q.dtype))


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 6), m=st.integers(1, 6), seed=st.integers(0, 10_000))
def test_matches_pytorch_with_random_mask(n, m, seed):
    q, k, v = _qkv((2,), n, m, 4, 3, seed=seed)
    g = torch.Generator().manual_seed(seed)
    mask = torch.rand(2, n, m, generator=g) < 0.6  # True = may attend
    out, weights = scaled_dot_product_attention(q, k, v, mask=mask)
    full = mask.any(-1)  # rows with at least one visible key
    expected = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    torch.testing.assert_close(out[full], expected[full])
    assert torch.all(weights[~mask] == 0)
    # A query that sees no key gets zeros, never NaN.
    assert torch.all(out[~full] == 0) and torch.all(weights[~full] == 0)
    assert not torch.isnan(out).any()


def test_scale_argument_and_default():
    q, k, v = _qkv((), 3, 4, 8, 2)
    torch.testing.assert_close(
        scaled_dot_product_attention(q, k, v, scale=0.5)[0],
        F.scaled_dot_product_attention(q, k, v, scale=0.5),
    )
    scores = q @ k.T / math.sqrt(8)
    torch.testing.assert_close(scaled_dot_product_attention(q, k, v)[1], scores.softmax(-1))


def test_broadcasts_leading_dims_and_mask():
    q, _, _ = _qkv((2, 3), 4, 5, 6, 7)
    _, k, v = _qkv((1, 3), 4, 5, 6, 7, seed=1)
    mask = causal_mask(4, 5)  # (n, m), shared by every batch and head
    out, weights = scaled_dot_product_attention(q, k, v, mask=mask)
    assert out.shape == (2, 3, 4, 7)
    expected = F.scaled_dot_product_attention(
        q, k.expand(2, 3, 5, 6), v.expand(2, 3, 5, 7), attn_mask=mask
    )
    torch.testing.assert_close(out, expected)


def test_padding_mask_broadcasts_over_queries():
    q, k, v = _qkv((2,), 3, 5, 4, 4)
    keys_ok = padding_mask([5, 2], 5)  # (B, m)
    out, weights = scaled_dot_product_attention(q, k, v, mask=keys_ok[:, None, :])
    assert torch.all(weights[1, :, 2:] == 0)
    torch.testing.assert_close(out[1], scaled_dot_product_attention(q[1], k[1, :2], v[1, :2])[0])


@pytest.mark.parametrize("dtype", list(DTYPE_TOL))
def test_low_precision_dtypes_with_fully_masked_row(dtype):
    q, k, v = _qkv((2,), 4, 6, 8, 8, dtype=dtype)
    mask = causal_mask(4, 6).clone()
    mask[0] = False  # query 0 sees nothing
    out, weights = scaled_dot_product_attention(q, k, v, mask=mask)
    assert out.dtype == dtype and torch.isfinite(out).all() and torch.isfinite(weights).all()
    assert torch.all(out[:, 0] == 0)
    ref, _ = scaled_dot_product_attention(q.double(), k.double(), v.double(), mask=mask)
    tol = DTYPE_TOL[dtype]
    torch.testing.assert_close(out.double(), ref, atol=tol * 10, rtol=tol * 10)


def test_float16_fill_does_not_overflow():
    # masked_fill(..., -1e9) raises in float16; the helper uses finfo.min instead.
    q, k, v = _qkv((), 2, 3, 4, 4, dtype=torch.float16)
    scores = q @ k.T
    with pytest.raises(RuntimeError):
        scores.masked_fill(~causal_mask(2, 3), -1e9)
    out, _ = scaled_dot_product_attention(q, k, v, mask=causal_mask(2, 3))
    assert torch.isfinite(out).all()


@pytest.mark.parametrize(
    "shapes, message",
    [
        (((3, 4), (5, 8), (5, 2)), r"k has shape \(5, 8\) but q has d_k=4"),
        (((3, 4), (5, 4), (6, 2)), r"v has shape \(6, 2\) but k has m=5 keys"),
        (((4,), (5, 4), (5, 2)), r"q has shape \(4,\) but needs at least 2 dimensions"),
        (((2, 3, 4), (3, 5, 4), (3, 5, 2)), r"k has shape \(3,\) which does not broadcast"),
    ],
)
def test_bad_shapes_name_the_argument(shapes, message):
    q, k, v = (torch.randn(*s) for s in shapes)
    with pytest.raises(ValueError, match=message):
        scaled_dot_product_attention(q, k, v)


def test_bad_masks():
    q, k, v = _qkv((), 3, 5, 4, 4)
    with pytest.raises(TypeError, match="mask must be a boolean tensor"):
        scaled_dot_product_attention(q, k, v, mask=torch.ones(3, 5))
    with pytest.raises(ValueError, match=r"mask has shape \(3, 4\) which does not broadcast"):
        scaled_dot_product_attention(q, k, v, mask=torch.ones(3, 4, dtype=torch.bool))
    with pytest.raises(ValueError, match=r"mask has shape \(2, 3, 5\) which does not broadcast"):
        scaled_dot_product_attention(q, k, v, mask=torch.ones(2, 3, 5, dtype=torch.bool))


def test_bad_types():
    q, k, v = _qkv((), 3, 5, 4, 4)
    with pytest.raises(TypeError, match="q must be a torch.Tensor"):
        scaled_dot_product_attention(q.tolist(), k, v)
    with pytest.raises(TypeError, match="share a dtype"):
        scaled_dot_product_attention(q.float(), k, v)
    with pytest.raises(TypeError, match="floating-point"):
        scaled_dot_product_attention(q.long(), k.long(), v.long())
