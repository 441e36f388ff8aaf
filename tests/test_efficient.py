import math

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_qa.attention import scaled_dot_product_attention
from attention_qa.efficient import (
    linear_attention,
    online_softmax,
    peak_memory_bytes,
    random_feature_attention,
    tiled_attention,
)
from attention_qa.masks import causal_mask

BLOCK_SIZES = [1, 3, 7, 64, 200]  # 200 is larger than every m below


def _qkv(batch=(2,), n=9, m=11, d_k=8, d_v=5, dtype=torch.float64, seed=0):
    torch.manual_seed(seed)
    q = torch.randn(*batch, n, d_k, dtype=dtype)
    k = torch.randn(*batch, m, d_k, dtype=dtype)
    v = torch.randn(*batch, m, d_v, dtype=dtype)
    return q, k, v


def _mask_without_empty_rows(n, m, seed=1):
    torch.manual_seed(seed)
    mask = torch.rand(n, m) > 0.5
    mask[torch.arange(n), torch.randint(m, (n,))] = True  # every query may see some key
    return mask


# --- online_softmax ---------------------------------------------------------------------


@settings(max_examples=25, deadline=None)
@given(
    lead=st.lists(st.integers(1, 3), max_size=2),
    m=st.integers(1, 40),
    block_size=st.integers(1, 50),
    spread=st.sampled_from([0.1, 1.0, 30.0]),
    seed=st.integers(0, 2**16),
)
def test_online_softmax_matches_torch(lead, m, block_size, spread, seed):
    torch.manual_seed(seed)
    scores = torch.randn(*lead, m, dtype=torch.float64) * spread
    torch.testing.assert_close(online_softmax(scores, block_size), torch.softmax(scores, dim=-1))


def test_online_softmax_large_scores_do_not_overflow():
    scores = torch.tensor([[1000.0, 999.0, -1000.0, 1001.0, 998.0]])
    torch.testing.assert_close(online_softmax(scores, 2), torch.softmax(scores, dim=-1))


@pytest.mark.parametrize("block_size", [1, 2, 3, 8])
def test_online_softmax_minus_inf_in_early_blocks(block_size):
    # The first blocks hold only -inf (masked keys): the running max starts at -inf.
    scores = torch.tensor([[-math.inf, -math.inf, -math.inf, 0.5, 2.0, -math.inf, 1.0]])
    out = online_softmax(scores, block_size)
    assert not out.isnan().any()
    torch.testing.assert_close(out, torch.softmax(scores, dim=-1))


@pytest.mark.parametrize("block_size", [0, -1, 2.0, True, None])
def test_online_softmax_rejects_bad_block_size(block_size):
    with pytest.raises(ValueError, match="block_size must be a positive integer"):
        online_softmax(torch.randn(3, 4), block_size)


def test_online_softmax_rejects_integer_scores():
    with pytest.raises(TypeError, match="scores must be a floating-point tensor"):
        online_softmax(torch.ones(3, 4, dtype=torch.long), 2)


# --- tiled_attention --------------------------------------------------------------------


@pytest.mark.parametrize("block_size", BLOCK_SIZES)
@pytest.mark.parametrize("masked", [False, True])
def test_tiled_matches_torch_sdpa(block_size, masked):
    q, k, v = _qkv(batch=(2, 3))
    mask = _mask_without_empty_rows(9, 11) if masked else None
    expected = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    out = tiled_attention(q, k, v, mask=mask, block_size=block_size)
    assert out.shape == (2, 3, 9, 5)
    torch.testing.assert_close(out, expected)


@pytest.mark.parametrize("block_size", BLOCK_SIZES)
def test_tiled_matches_package_with_fully_masked_rows(block_size):
    q, k, v = _qkv()
    mask = _mask_without_empty_rows(9, 11)
    mask[[0, 4, 8]] = False  # these queries may see no key at all
    expected, _ = scaled_dot_product_attention(q, k, v, mask=mask)
    out = tiled_attention(q, k, v, mask=mask, block_size=block_size)
    assert not out.isnan().any()
    torch.testing.assert_close(out, expected)
    assert (out[:, [0, 4, 8]] == 0).all()


@pytest.mark.parametrize("block_size", [1, 4, 64])
def test_tiled_causal_mask_with_cache(block_size):
    q, k, v = _qkv(n=4, m=10)
    mask = causal_mask(4, 10)
    expected = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    torch.testing.assert_close(tiled_attention(q, k, v, mask, block_size), expected)


def test_tiled_broadcasts_leading_dims_and_masks():
    torch.manual_seed(0)
    q = torch.randn(2, 1, 6, 8, dtype=torch.float64)  # (B, 1, n, d_k)
    k = torch.randn(1, 3, 7, 8, dtype=torch.float64)  # (1, h, m, d_k)
    v = torch.randn(7, 4, dtype=torch.float64)  # (m, d_v)
    for mask in (
        torch.tensor(True),
        torch.tensor([True, False, True, True, False, True, True]),  # (m,)
        torch.tensor([[True], [True], [True], [False], [True], [True]]),  # (n, 1)
        _mask_without_empty_rows(6, 7).expand(2, 3, 6, 7),
    ):
        expected, _ = scaled_dot_product_attention(q, k, v, mask=mask)
        out = tiled_attention(q, k, v, mask=mask, block_size=3)
        assert out.shape == (2, 3, 6, 4)
        torch.testing.assert_close(out, expected)


def test_tiled_scale_argument():
    q, k, v = _qkv()
    expected, _ = scaled_dot_product_attention(q, k, v, scale=0.7)
    torch.testing.assert_close(tiled_attention(q, k, v, block_size=4, scale=0.7), expected)


def test_tiled_float32_large_scores_stay_exact():
    q, k, v = _qkv(n=33, m=70, dtype=torch.float32)
    q = q * 20  # spread-out scores: the running max must be rescaled often
    expected, _ = scaled_dot_product_attention(q, k, v)
    out = tiled_attention(q, k, v, block_size=16)
    assert (out - expected).abs().max().item() < 1e-4


def test_tiled_gradients_match_package():
    q, k, v = _qkv()
    mask = _mask_without_empty_rows(9, 11)
    grads = []
    for fn in (
        lambda *a: scaled_dot_product_attention(*a, mask=mask)[0],
        lambda *a: tiled_attention(*a, mask=mask, block_size=4),
    ):
        inputs = [x.clone().requires_grad_() for x in (q, k, v)]
        fn(*inputs).sum().backward()
        grads.append([x.grad for x in inputs])
    for expected, got in zip(*grads, strict=True):
        torch.testing.assert_close(got, expected)


def test_tiled_rejects_bad_inputs():
    q, k, v = _qkv()
    with pytest.raises(ValueError, match=r"k has shape \(2, 11, 3\) but q has d_k=8"):
        tiled_attention(q, k[..., :3], v)
    with pytest.raises(ValueError, match=r"v has shape \(2, 10, 5\) but k has m=11 keys"):
        tiled_attention(q, k, v[:, :10])
    with pytest.raises(TypeError, match="mask must be a boolean tensor"):
        tiled_attention(q, k, v, mask=torch.ones(9, 11))
    with pytest.raises(ValueError, match=r"mask has shape \(9, 5\)"):
        tiled_attention(q, k, v, mask=torch.ones(9, 5, dtype=torch.bool))
    with pytest.raises(ValueError, match="block_size must be a positive integer, got 0"):
        tiled_attention(q, k, v, block_size=0)


def test_tiled_peak_memory_stays_below_the_score_matrix():
    # Allocation records, not timings: the figures are the same on every run.
    n = m = 1024
    q, k, v = _qkv(batch=(1,), n=n, m=m, d_k=16, d_v=16, dtype=torch.float32)
    matrix_bytes = n * m * q.element_size()
    (naive, _), naive_peak = peak_memory_bytes(scaled_dot_product_attention, q, k, v)
    tiled, tiled_peak = peak_memory_bytes(tiled_attention, q, k, v, block_size=32)
    assert naive_peak >= matrix_bytes  # the measurement does see the (n, m) matrix
    assert tiled_peak < matrix_bytes / 4
    assert (tiled - naive).abs().max().item() < 1e-5
    # Halving n (and m) halves the tiled peak but quarters the naive one.
    small = [x[:, : n // 2] for x in (q, k, v)]
    _, tiled_small = peak_memory_bytes(tiled_attention, *small, block_size=32)
    _, naive_small = peak_memory_bytes(scaled_dot_product_attention, *small)
    assert 1.5 < tiled_peak / tiled_small < 2.5
    assert naive_peak / naive_small > 3.5


# --- linear_attention -------------------------------------------------------------------


def _quadratic_linear_attention(q, k, v, causal):
    """The same model written the slow way: the full (n, m) matrix of φ(q_i)·φ(k_j)."""
    weights = (F.elu(q) + 1) @ (F.elu(k) + 1).transpose(-2, -1)  # (..., n, m)
    if causal:
        weights = weights * causal_mask(q.shape[-2], k.shape[-2])
    den = weights.sum(dim=-1, keepdim=True)  # (..., n, 1)
    return (weights @ v) / torch.where(den > 0, den, torch.ones_like(den))


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("n, m", [(9, 9), (5, 9), (9, 5)])
def test_linear_matches_quadratic_reference(causal, n, m):
    q, k, v = _qkv(batch=(2, 3), n=n, m=m)
    out = linear_attention(q, k, v, causal=causal)
    assert out.shape == (2, 3, n, 5)
    torch.testing.assert_close(out, _quadratic_linear_attention(q, k, v, causal))


def test_linear_causal_output_depends_only_on_past_keys():
    q, k, v = _qkv(n=8, m=8)
    out = linear_attention(q, k, v, causal=True)
    k2, v2 = k.clone(), v.clone()
    k2[:, 5:] += 3.0  # change the future of query 4
    v2[:, 5:] -= 2.0
    out2 = linear_attention(q, k2, v2, causal=True)
    torch.testing.assert_close(out2[:, :5], out[:, :5])
    assert not torch.allclose(out2[:, 5:], out[:, 5:])


def test_linear_causal_query_without_keys_gets_zero():
    q, k, v = _qkv(n=6, m=2)  # queries 0..3 come before the first key
    out = linear_attention(q, k, v, causal=True)
    assert not out.isnan().any()
    assert (out[:, :4] == 0).all()


@pytest.mark.parametrize("causal", [False, True])
def test_linear_identity_is_regrouped_product(causal):
    q, k, v = _qkv(n=7, m=10)
    scores = q @ k.transpose(-2, -1)  # (B, n, m)
    if causal:
        scores = scores * causal_mask(7, 10)
    torch.testing.assert_close(linear_attention(q, k, v, "identity", causal), scores @ v)


def test_linear_broadcasts_leading_dims():
    torch.manual_seed(0)
    q = torch.randn(2, 1, 6, 8, dtype=torch.float64)
    k = torch.randn(1, 3, 6, 8, dtype=torch.float64)
    v = torch.randn(6, 4, dtype=torch.float64)
    for causal in (False, True):
        out = linear_attention(q, k, v, causal=causal)
        assert out.shape == (2, 3, 6, 4)
        torch.testing.assert_close(out, _quadratic_linear_attention(q, k, v, causal))


def test_linear_peak_memory_stays_below_the_score_matrix():
    n = m = 1024
    q, k, v = _qkv(batch=(1,), n=n, m=m, d_k=16, d_v=16, dtype=torch.float32)
    _, peak = peak_memory_bytes(linear_attention, q, k, v)
    assert peak < n * m * q.element_size() / 4


def test_linear_rejects_bad_inputs():
    q, k, v = _qkv()
    with pytest.raises(ValueError, match="feature_map must be one of .*got 'relu'"):
        linear_attention(q, k, v, feature_map="relu")
    with pytest.raises(ValueError, match=r"k has shape \(2, 11, 3\) but q has d_k=8"):
        linear_attention(q, k[..., :3], v)
    with pytest.raises(TypeError, match="q, k and v must share a dtype"):
        linear_attention(q.float(), k, v)


# --- random_feature_attention -------------------------------------------------------------


def _gen(seed):
    return torch.Generator().manual_seed(seed)


def _mean_error(num_features, trials=8):
    """Mean |FAVOR+ − exact| over `trials` inputs, each with its own seeded projection."""
    errors = []
    for seed in range(trials):
        g = _gen(seed)
        q = torch.randn(2, 32, 16, generator=g, dtype=torch.float64) * 0.5
        k = torch.randn(2, 48, 16, generator=g, dtype=torch.float64) * 0.5
        v = torch.randn(2, 48, 8, generator=g, dtype=torch.float64)
        exact = F.scaled_dot_product_attention(q, k, v)
        approx = random_feature_attention(q, k, v, num_features, generator=_gen(100 + seed))
        errors.append((approx - exact).abs().mean().item())
    return sum(errors) / trials


def test_random_features_error_falls_as_features_grow():
    few, many = _mean_error(16), _mean_error(1024)
    # The error of a Monte Carlo estimate falls like 1/√r: 64 times the features should cut
    # it about 8-fold (measured: about 5-fold, 0.047 → 0.009); ask for 3-fold.
    assert many < few / 3
    assert many < 0.02


def test_random_features_are_exact_when_all_keys_are_equal():
    # Exact attention is then the plain mean of v, and so is the estimate, whatever the draw:
    # every key has the same features, so the estimated weights are uniform too.
    g = _gen(0)
    q = torch.randn(3, 5, 4, generator=g, dtype=torch.float64)
    k = torch.randn(3, 1, 4, generator=g, dtype=torch.float64).expand(3, 7, 4)
    v = torch.randn(3, 7, 2, generator=g, dtype=torch.float64)
    out = random_feature_attention(q, k, v, 8, generator=_gen(1))
    torch.testing.assert_close(out, v.mean(dim=-2, keepdim=True).expand(3, 5, 2))
    torch.testing.assert_close(out, F.scaled_dot_product_attention(q, k, v))


def test_random_features_weights_are_positive_and_sum_to_one():
    # With v = I the output rows are the implicit weights of the estimate.
    g = _gen(2)
    q = torch.randn(6, 8, generator=g, dtype=torch.float64) * 2
    k = torch.randn(10, 8, generator=g, dtype=torch.float64) * 2
    weights = random_feature_attention(q, k, torch.eye(10, dtype=torch.float64), 32, _gen(3))
    assert weights.shape == (6, 10)
    assert (weights > 0).all()
    torch.testing.assert_close(weights.sum(-1), torch.ones(6, dtype=torch.float64))


def test_random_features_same_seed_same_output():
    q, k, v = _qkv(batch=(2,), n=6, m=9)
    a = random_feature_attention(q, k, v, 20, generator=_gen(7))
    b = random_feature_attention(q, k, v, 20, generator=_gen(7))
    c = random_feature_attention(q, k, v, 20, generator=_gen(8))
    assert torch.equal(a, b)
    assert not torch.allclose(a, c)
    # With no generator the draw comes from the global state, so seeding it reproduces it too.
    torch.manual_seed(5)
    d = random_feature_attention(q, k, v, 20)
    torch.manual_seed(5)
    assert torch.equal(d, random_feature_attention(q, k, v, 20))


def test_random_features_shapes_broadcast_and_dtypes():
    g = _gen(4)
    q = torch.randn(2, 1, 6, 8, generator=g)  # (B, 1, n, d)
    k = torch.randn(1, 3, 9, 8, generator=g)  # (1, h, m, d)
    v = torch.randn(9, 5, generator=g)  # (m, d_v), shared
    out = random_feature_attention(q, k, v, 16, generator=_gen(5))
    assert out.shape == (2, 3, 6, 5) and out.dtype == torch.float32
    for b in range(2):
        for h in range(3):
            one = random_feature_attention(q[b, 0], k[0, h], v, 16, generator=_gen(5))
            torch.testing.assert_close(out[b, h], one)
    # Large scores in float16 stay finite: the exponents are shifted by a maximum first.
    big = random_feature_attention((q * 6).half(), (k * 6).half(), v.half(), 16, _gen(5))
    assert big.dtype == torch.float16 and torch.isfinite(big).all()


def test_random_features_peak_memory_stays_below_the_score_matrix():
    # The live tensors are (n, r) and (n, d) ones: with r = 32 about 1.6 MB here, against
    # 16 MB for the (n, m) scores that exact attention would hold.
    n = m = 2048
    q, k, v = _qkv(batch=(1,), n=n, m=m, d_k=16, d_v=16, dtype=torch.float32)
    _, peak = peak_memory_bytes(random_feature_attention, q, k, v, 32, _gen(0))
    assert peak < n * m * q.element_size() / 4


def test_random_features_reject_bad_inputs():
    q, k, v = _qkv()
    with pytest.raises(ValueError, match="num_features must be a positive integer, got 0"):
        random_feature_attention(q, k, v, 0)
    with pytest.raises(TypeError, match="generator must be a torch.Generator or None, got int"):
        random_feature_attention(q, k, v, 8, generator=3)
    with pytest.raises(ValueError, match=r"k has shape \(2, 11, 3\) but q has d_k=8"):
        random_feature_attention(q, k[..., :3], v, 8)
    with pytest.raises(ValueError, match=r"v has shape \(2, 10, 5\) but k has m=11 keys"):
        random_feature_attention(q, k, v[:, :10], 8)
