import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_qa.positional import (
    alibi_bias,
    alibi_slopes,
    apply_rope,
    attention_entropy,
    dynamic_ntk_frequencies,
    learned_position_table,
    logn_scale,
    needle_attention,
    position_scores,
    rope_frequencies,
    rope_score_by_offset,
    scaled_rope_frequencies,
    sinusoidal_encoding,
)


def encoding_by_loop(num_positions, d_model):
    """The formula of Vaswani et al. (2017) §3.5, one entry at a time."""
    pe = [[0.0] * d_model for _ in range(num_positions)]
    for pos in range(num_positions):
        for i in range(d_model // 2):
            angle = pos / 10000 ** (2 * i / d_model)
            pe[pos][2 * i] = math.sin(angle)
            pe[pos][2 * i + 1] = math.cos(angle)
    return torch.tensor(pe, dtype=torch.float64)


@pytest.mark.parametrize("num_positions, d_model", [(1, 2), (7, 4), (50, 16), (3, 128)])
def test_matches_formula_by_loop(num_positions, d_model):
    got = sinusoidal_encoding(num_positions, d_model)
    assert got.shape == (num_positions, d_model)
    assert got.dtype == torch.get_default_dtype()
    torch.testing.assert_close(
        got.double(), encoding_by_loop(num_positions, d_model), atol=1e-6, rtol=0
    )


@settings(max_examples=25, deadline=None)
@given(num_positions=st.integers(1, 40), half=st.integers(1, 16))
def test_property_matches_loop(num_positions, half):
    d_model = 2 * half
    got = sinusoidal_encoding(num_positions, d_model).double()
    torch.testing.assert_close(got, encoding_by_loop(num_positions, d_model), atol=1e-6, rtol=0)
    # Each (sin, cos) pair lies on the unit circle.
    radius = got[:, 0::2] ** 2 + got[:, 1::2] ** 2
    torch.testing.assert_close(radius, torch.ones_like(radius), atol=1e-6, rtol=0)


def test_position_zero_is_sin0_cos0():
    pe = sinusoidal_encoding(4, 8)
    assert torch.equal(pe[0, 0::2], torch.zeros(4))
    assert torch.equal(pe[0, 1::2], torch.ones(4))


def test_large_positions_stay_accurate():
    # The angles are formed in float64, so even position 9999 is right to float32 precision.
    pe = sinusoidal_encoding(10000, 4)
    assert math.isclose(pe[9999, 0].item(), math.sin(9999.0), abs_tol=1e-6)
    assert math.isclose(pe[9999, 3].item(), math.cos(9999 / 100.0), abs_tol=1e-6)


def test_relative_shift_is_a_rotation():
    # §3.5: PE[pos + k] is a linear function of PE[pos]; per frequency it is a rotation.
    pe = sinusoidal_encoding(20, 6).double()
    k = 3
    for i in range(3):
        w = 1 / 10000 ** (2 * i / 6)
        rot = torch.tensor(
            [[math.cos(k * w), -math.sin(k * w)], [math.sin(k * w), math.cos(k * w)]],
            dtype=torch.float64,
        )
        pair = pe[:, 2 * i : 2 * i + 2]  # (positions, 2): (sin, cos)
        torch.testing.assert_close(pair[:-k] @ rot, pair[k:], atol=1e-6, rtol=0)


def test_follows_default_dtype():
    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        assert sinusoidal_encoding(3, 4).dtype == torch.float64
    finally:
        torch.set_default_dtype(old)


@pytest.mark.parametrize("d_model", [1, 3, 7])
def test_odd_d_model_rejected(d_model):
    with pytest.raises(ValueError, match=f"d_model must be even.*got {d_model}"):
        sinusoidal_encoding(4, d_model)


@pytest.mark.parametrize("d_model", [0, -2, 2.0, True, "8"])
def test_non_positive_or_non_int_d_model_rejected(d_model):
    with pytest.raises(ValueError, match="d_model must be a positive integer"):
        sinusoidal_encoding(4, d_model)


@pytest.mark.parametrize("num_positions", [0, -1, 3.0, None])
def test_non_positive_num_positions_rejected(num_positions):
    with pytest.raises(ValueError, match="num_positions must be a positive integer"):
        sinusoidal_encoding(num_positions, 4)


# --- RoPE ----------------------------------------------------------------------------------


def rand(*shape, seed=0, dtype=torch.float64):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g, dtype=torch.float64).to(dtype)


def rope_by_complex_numbers(x, positions, base=10000.0):
    """RoFormer eq. (34) read as complex arithmetic: pair i is the number x[2i] + i·x[2i+1],
    multiplied by e^{i·pos·θᵢ}."""
    d = x.shape[-1]
    theta = torch.tensor([base ** (-2 * i / d) for i in range(d // 2)], dtype=torch.float64)
    angles = torch.as_tensor(positions, dtype=torch.float64).unsqueeze(1) * theta  # (n, d/2)
    turn = torch.polar(torch.ones_like(angles), angles)  # e^{i·angle}
    z = torch.view_as_complex(x.double().reshape(*x.shape[:-1], d // 2, 2).contiguous())
    return torch.view_as_real(z * turn).reshape(x.shape)


@pytest.mark.parametrize("d, base", [(2, 10000.0), (8, 10000.0), (16, 500.0)])
def test_rope_frequencies_match_formula(d, base):
    got = rope_frequencies(d, base)
    assert got.shape == (d // 2,) and got.dtype == torch.get_default_dtype()
    expected = torch.tensor([base ** (-2 * i / d) for i in range(d // 2)])
    torch.testing.assert_close(got, expected)
    assert got[0].item() == 1.0


@pytest.mark.parametrize("shape", [(5, 8), (2, 7, 4), (2, 3, 6, 16)])
def test_apply_rope_matches_complex_rotation(shape):
    x = rand(*shape, seed=1)
    n = shape[-2]
    torch.testing.assert_close(apply_rope(x), rope_by_complex_numbers(x, torch.arange(n)))
    positions = torch.tensor([3, 0, 11, 7, 2, 40, 5][:n])
    torch.testing.assert_close(
        apply_rope(x, positions, base=100.0), rope_by_complex_numbers(x, positions, 100.0)
    )


def test_apply_rope_position_zero_is_identity_and_norms_are_kept():
    x = rand(3, 10, 8, seed=2)
    out = apply_rope(x)
    assert torch.equal(out[:, 0], x[:, 0])
    torch.testing.assert_close(out.norm(dim=-1), x.norm(dim=-1))
    # Each pair keeps its own length, too: RoPE only turns the pairs.
    torch.testing.assert_close(
        out.unflatten(-1, (4, 2)).norm(dim=-1), x.unflatten(-1, (4, 2)).norm(dim=-1)
    )


def test_apply_rope_score_depends_only_on_the_offset():
    q, k = rand(1, 16, seed=3), rand(1, 16, seed=4)
    for offset in (-5, 0, 3, 20):
        scores = []
        for start in (0, 7, 100, 2048):
            q_rot = apply_rope(q, torch.tensor([start + offset]))
            k_rot = apply_rope(k, torch.tensor([start]))
            scores.append((q_rot @ k_rot.T).item())
        assert max(scores) - min(scores) < 1e-10, (offset, scores)
    # ... and it does depend on the offset.
    near = (apply_rope(q, torch.tensor([1])) @ apply_rope(k, torch.tensor([0])).T).item()
    far = (apply_rope(q, torch.tensor([9])) @ apply_rope(k, torch.tensor([0])).T).item()
    assert abs(near - far) > 1e-3


def test_apply_rope_positions_continue_a_cache():
    x = rand(2, 12, 6, seed=5)
    full = apply_rope(x)
    torch.testing.assert_close(apply_rope(x[:, 9:], torch.arange(9, 12)), full[:, 9:])


@pytest.mark.parametrize(
    "dtype, tol", [(torch.float64, 1e-12), (torch.float32, 1e-5), (torch.float16, 2e-3),
                   (torch.bfloat16, 2e-2)]
)
def test_apply_rope_keeps_dtype(dtype, tol):
    x = rand(4, 6, 8, seed=6, dtype=dtype)
    out = apply_rope(x)
    assert out.dtype == dtype and out.shape == x.shape
    torch.testing.assert_close(
        out.double(), rope_by_complex_numbers(x, torch.arange(6)), atol=tol, rtol=tol
    )


def test_apply_rope_large_positions_stay_accurate_in_float32():
    x = rand(3, 8, seed=7, dtype=torch.float32)
    positions = torch.tensor([100_000, 250_001, 999_999])
    torch.testing.assert_close(
        apply_rope(x, positions).double(), rope_by_complex_numbers(x, positions),
        atol=1e-5, rtol=1e-5,
    )


def test_apply_rope_errors():
    with pytest.raises(ValueError, match=r"x has shape \(4, 7\) but its last dim d=7 must be even"):
        apply_rope(rand(4, 7))
    with pytest.raises(ValueError, match=r"positions has shape \(3,\) but x has n=4 positions"):
        apply_rope(rand(4, 6), torch.arange(3))
    with pytest.raises(ValueError, match="positions must hold integers, got dtype torch.float32"):
        apply_rope(rand(4, 6), torch.arange(4.0))
    with pytest.raises(TypeError, match="x must be a floating-point tensor"):
        apply_rope(torch.ones(4, 6, dtype=torch.long))
    with pytest.raises(ValueError, match=r"x has shape \(6,\) but needs at least 2 dimensions"):
        apply_rope(rand(6))
    with pytest.raises(ValueError, match="base must be a positive, finite number, got 0"):
        apply_rope(rand(4, 6), base=0)
    with pytest.raises(ValueError, match="d must be even .*got 5"):
        rope_frequencies(5)
    with pytest.raises(ValueError, match="d must be a positive integer, got 0"):
        rope_frequencies(0)


# --- ALiBi ---------------------------------------------------------------------------------


def get_slopes(n):
    """The reference code of Press et al. (2022), in the repository
    github.com/ofirpress/attention_with_linear_biases."""

    def get_slopes_power_of_2(n):
        start = 2 ** (-(2 ** -(math.log2(n) - 3)))
        ratio = start
        return [start * ratio**i for i in range(n)]

    if math.log2(n).is_integer():
        return get_slopes_power_of_2(n)
    closest_power_of_2 = 2 ** math.floor(math.log2(n))
    return (
        get_slopes_power_of_2(closest_power_of_2)
        + get_slopes(2 * closest_power_of_2)[0::2][: n - closest_power_of_2]
    )


def test_alibi_slopes_for_8_and_12_heads():
    assert alibi_slopes(8).tolist() == [2.0**-k for k in range(1, 9)]
    expected_12 = [2.0**-k for k in range(1, 9)] + [2**-0.5, 2**-1.5, 2**-2.5, 2**-3.5]
    torch.testing.assert_close(alibi_slopes(12).double(), torch.tensor(expected_12).double())


@pytest.mark.parametrize("num_heads", list(range(1, 33)) + [48, 64, 80])
def test_alibi_slopes_match_reference_code(num_heads):
    got = alibi_slopes(num_heads)
    assert got.shape == (num_heads,) and got.dtype == torch.get_default_dtype()
    torch.testing.assert_close(got.double(), torch.tensor(get_slopes(num_heads)).double(),
                               rtol=1e-6, atol=0)


@pytest.mark.parametrize("num_heads, n, m", [(1, 1, None), (4, 5, None), (3, 3, 7), (8, 4, 4)])
def test_alibi_bias_matches_loop(num_heads, n, m):
    got = alibi_bias(num_heads, n, m)
    m_ = n if m is None else m
    slopes = get_slopes(num_heads)
    expected = torch.tensor(
        [[[-slopes[h] * abs(i + (m_ - n) - j) for j in range(m_)] for i in range(n)]
         for h in range(num_heads)]
    )
    assert got.shape == (num_heads, n, m_) and got.dtype == torch.get_default_dtype()
    torch.testing.assert_close(got, expected)


def test_alibi_bias_with_a_cache_puts_the_queries_last():
    bias = alibi_bias(2, 3, 8)  # three new queries at positions 5, 6, 7
    for row, position in enumerate((5, 6, 7)):
        assert bias[:, row, position].abs().max() == 0  # no penalty on its own position
    # The last query's bias grows linearly back to key 0: −slope · 7.
    torch.testing.assert_close(bias[:, 2, 0], -7 * alibi_slopes(2))


def test_alibi_errors():
    with pytest.raises(ValueError, match="num_heads must be a positive integer, got 0"):
        alibi_slopes(0)
    with pytest.raises(ValueError, match="n must be a positive integer, got -1"):
        alibi_bias(4, -1)
    with pytest.raises(ValueError, match="m must be a positive integer, got 2.0"):
        alibi_bias(4, 3, 2.0)


# --- one query and one key under each scheme (q25) -----------------------------------------


def test_rope_scores_equal_rotating_then_multiplying():
    q, k = rand(16, seed=3), rand(16, seed=4)
    n = 12
    rotated_q = rope_by_complex_numbers(q.expand(n, 16), torch.arange(n))  # (n, d)
    rotated_k = rope_by_complex_numbers(k.expand(n, 16), torch.arange(n))  # (n, d)
    torch.testing.assert_close(position_scores(q, k, "rope", n), rotated_q @ rotated_k.T / 4)


def test_rope_score_by_offset_takes_fractional_offsets():
    q, k = rand(8, seed=5), rand(8, seed=6)
    theta = torch.tensor([10000.0 ** (-2 * i / 8) for i in range(4)], dtype=torch.float64)
    offsets = torch.tensor([0.0, 0.5, 2.25, -3.0])
    zq = torch.view_as_complex(q.view(4, 2).contiguous())
    zk = torch.view_as_complex(k.view(4, 2).contiguous())
    # R(m)q · R(n)k = Re(conj(q e^{imθ}) k e^{inθ}) = Re(conj(q) k e^{−i(m−n)θ})
    expected = [
        (zq.conj() * zk * torch.polar(torch.ones(4, dtype=torch.float64), -t * theta))
        .real.sum()
        .item()
        for t in offsets.tolist()
    ]
    got = rope_score_by_offset(q, k, offsets, theta)
    torch.testing.assert_close(got, torch.tensor(expected, dtype=torch.float64))


def test_each_scheme_against_its_formula():
    d, n = 6, 9
    q, k = rand(d, seed=7), rand(d, seed=8)
    table = rand(5, d, seed=9)
    pe = [
        [math.sin(p / 10000 ** (2 * (j // 2) / d)) if j % 2 == 0
         else math.cos(p / 10000 ** (2 * (j // 2) / d)) for j in range(d)]
        for p in range(n)
    ]
    pe = torch.tensor(pe, dtype=torch.float64)
    root_d = math.sqrt(d)
    for m in range(n):
        for j in range(n):
            plain = (q @ k).item() / root_d
            assert position_scores(q, k, "none", n)[m, j].item() == pytest.approx(plain)
            alibi = position_scores(q, k, "alibi", n, slope=0.25)[m, j].item()
            assert alibi == pytest.approx(plain - 0.25 * abs(m - j))
            sinus = position_scores(q, k, "sinusoidal", n)[m, j].item()
            assert sinus == pytest.approx(((q + pe[m]) @ (k + pe[j])).item() / root_d, abs=1e-6)
            learned = position_scores(q, k, "learned", n, table=table)[m, j].item()
            if m < 5 and j < 5:
                expected = ((q + table[m]) @ (k + table[j])).item() / root_d
                assert learned == pytest.approx(expected)
            else:
                assert math.isnan(learned)


def test_only_rope_and_alibi_depend_on_the_offset_alone():
    q, k = rand(16, seed=10), rand(16, seed=11)
    table = learned_position_table(20, 16)
    for scheme, offset_only in [("rope", True), ("alibi", True), ("none", True),
                                ("sinusoidal", False), ("learned", False)]:
        s = position_scores(q, k, scheme, 20, table=table)
        diagonal_spread = max(
            (s.diagonal(-t).max() - s.diagonal(-t).min()).item() for t in range(19)
        )
        assert (diagonal_spread < 1e-9) == offset_only, scheme


def test_scaled_frequencies():
    base = rope_frequencies(16).double()
    pi = scaled_rope_frequencies(16, scale=4.0, method="interpolation")
    torch.testing.assert_close(pi, base / 4, rtol=1e-6, atol=0)
    ntk = scaled_rope_frequencies(16, scale=4.0, method="ntk")
    assert ntk[0].item() == 1.0
    assert ntk[-1].item() == pytest.approx(base[-1].item() / 4, rel=1e-6)
    assert torch.all(ntk <= base * (1 + 1e-6)) and torch.all(ntk >= pi * (1 - 1e-6))
    assert torch.equal(scaled_rope_frequencies(16, scale=1.0, method="ntk"), _theta(16))


@pytest.mark.parametrize("d, length, scale", [(128, 4096, 2.0), (64, 2048, 8.0), (16, 512, 4.0)])
def test_yarn_frequencies_follow_the_papers_ramp_pair_by_pair(d, length, scale):
    """YaRN's NTK-by-parts (Peng et al., 2023, eq. 17–19) written out one pair at a time."""
    got = scaled_rope_frequencies(d, scale=scale, method="yarn", trained_length=length)
    alpha, beta = 1.0, 32.0
    for i, theta in enumerate(_theta(d).tolist()):
        r = length / (2 * math.pi / theta)  # turns of pair i within the trained length
        gamma = 0.0 if r < alpha else 1.0 if r > beta else (r - alpha) / (beta - alpha)
        expected = (1 - gamma) * theta / scale + gamma * theta
        assert got[i].item() == pytest.approx(expected, rel=1e-12), i
    # Fast pairs are left as trained, slow ones interpolated, and the slowest pair turns no
    # further at scale × length than it did at length.
    assert got[0].item() == 1.0
    assert got[-1].item() == pytest.approx(_theta(d)[-1].item() / scale, rel=1e-12)


def _theta(d):
    return torch.tensor([10000.0 ** (-2 * i / d) for i in range(d // 2)], dtype=torch.float64)


def test_learned_table_is_seeded_with_rows_like_the_sinusoidal_ones():
    t = learned_position_table(4000, 64, seed=2)
    assert torch.equal(t, learned_position_table(4000, 64, seed=2))
    assert not torch.equal(t, learned_position_table(4000, 64, seed=3))
    assert t.norm(dim=-1).mean().item() == pytest.approx(math.sqrt(32), rel=0.02)


def test_scheme_inputs_are_checked():
    q = torch.zeros(8)
    with pytest.raises(ValueError, match=r"k has shape \(6,\)"):
        position_scores(q, torch.zeros(6), "rope", 4)
    with pytest.raises(ValueError, match="scheme must be one of"):
        position_scores(q, q, "relative", 4)
    with pytest.raises(ValueError, match=r"table has shape \(3, 5\) but should be \(L, 8\)"):
        position_scores(q, q, "learned", 4, table=torch.zeros(3, 5))
    with pytest.raises(ValueError, match=r"theta has shape \(3,\) but should be \(4,\)"):
        rope_score_by_offset(q, q, torch.arange(3), torch.ones(3))
    with pytest.raises(ValueError, match="method must be"):
        scaled_rope_frequencies(8, scale=2.0, method="longrope")
    with pytest.raises(ValueError, match="method 'yarn' needs trained_length"):
        scaled_rope_frequencies(8, scale=2.0, method="yarn")
    with pytest.raises(ValueError, match="alpha must be below beta"):
        scaled_rope_frequencies(8, 2.0, method="yarn", trained_length=64, alpha=4, beta=2)
    with pytest.raises(ValueError, match="scale must be a positive"):
        scaled_rope_frequencies(8, scale=0)


# --- q46: LogN scaling and dynamic NTK -------------------------------------------------------


def test_logn_scale_is_qwens_table():
    # modeling_qwen.py: [math.log(i, seq_length) if i > seq_length else 1 for i in range(1, …)]
    seq_length = 2048
    table = [math.log(i, seq_length) if i > seq_length else 1 for i in range(1, 9000)]
    assert [logn_scale(i, seq_length) for i in range(1, 9000)] == pytest.approx(table, rel=1e-15)
    assert logn_scale(2048, 2048) == 1.0 and logn_scale(2048**2, 2048) == pytest.approx(2.0)


@pytest.mark.parametrize("bad", [(0, 10), (5, 1), (5, 0), (2.5, 10), (True, 10)])
def test_logn_scale_refuses_bad_lengths(bad):
    with pytest.raises(ValueError):
        logn_scale(*bad)


def _transformers_dynamic(d, base, seq_len, trained, factor):
    transformers = pytest.importorskip("transformers")
    from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS

    config = transformers.LlamaConfig(
        hidden_size=d * 2, num_attention_heads=2, max_position_embeddings=trained,
        rope_theta=base, rope_scaling={"rope_type": "dynamic", "factor": factor})
    inv_freq, _ = ROPE_INIT_FUNCTIONS["dynamic"](config, "cpu", seq_len=seq_len)
    return inv_freq.to(torch.float64)


@pytest.mark.parametrize("d,base,seq_len,trained,factor", [
    (128, 10000.0, 8192, 2048, 1.0), (128, 10000.0, 1000, 2048, 2.0),
    (64, 500000.0, 40000, 8192, 4.0), (16, 10000.0, 2049, 2048, 8.0)])
def test_dynamic_ntk_matches_transformers(d, base, seq_len, trained, factor):
    ours = dynamic_ntk_frequencies(d, base, seq_len, trained, factor)
    theirs = _transformers_dynamic(d, base, seq_len, trained, factor)
    torch.testing.assert_close(ours, theirs, rtol=1e-6, atol=0)  # theirs is float32


def test_dynamic_ntk_is_plain_rope_up_to_the_trained_length_and_ntk_past_it():
    for seq_len in (1, 100, 2048):
        assert torch.equal(dynamic_ntk_frequencies(64, 1e4, seq_len, 2048, 4.0),
                           scaled_rope_frequencies(64, 1e4, 1.0, "ntk"))
    # factor 1 at 4 L: NTK-aware scaling by 4, written the other way round
    direct = (1e4 * 4.0 ** (64 / 62)) ** (-torch.arange(0, 64, 2, dtype=torch.float64) / 64)
    torch.testing.assert_close(dynamic_ntk_frequencies(64, 1e4, 8192, 2048, 1.0), direct)


@pytest.mark.parametrize("kwargs", [dict(d=7), dict(d=2), dict(factor=0.5), dict(seq_len=0),
                                    dict(base=-1.0), dict(trained_length=0)])
def test_dynamic_ntk_refuses_bad_input(kwargs):
    args = dict(d=64, base=1e4, seq_len=4096, trained_length=2048, factor=2.0) | kwargs
    with pytest.raises(ValueError):
        dynamic_ntk_frequencies(**args)


def test_needle_attention_is_softmax_of_scaled_scores_and_entropy_is_direct():
    n, trained = 5000, 2048
    g = torch.Generator().manual_seed(0)
    scores = torch.randn(32768, generator=g, dtype=torch.float64)[:n].clone()
    scores[0] = math.log(trained)
    for logn in (False, True):
        lam = math.log(n) / math.log(trained) if logn else 1.0
        want = torch.exp(lam * scores) / torch.exp(lam * scores).sum()
        got = needle_attention(n, trained, logn=logn)
        torch.testing.assert_close(got, want)
        entropy = sum(-p * math.log(p) for p in want.tolist())
        assert attention_entropy(got) == pytest.approx(entropy, rel=1e-12)
    # the same noise for every length: a shorter row is a prefix of the longer one's scores
    short = needle_attention(100, trained, logn=False)
    long = needle_attention(200, trained, logn=False)
    torch.testing.assert_close(short / short[0], long[:100] / long[0])
