"""attention_qa.quant against PyTorch's own quantisation (observers and fake_quantize) and
direct computations."""

import pytest
import torch

from attention_qa.attention import scaled_dot_product_attention
from attention_qa.quant import (
    QTensor,
    dequantize,
    fake_quantize,
    fp8_limits,
    kv_attention_error,
    quantize,
    relative_error,
)


def sample(*shape, seed=0, dtype=torch.float32):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g, dtype=dtype)


def test_symmetric_per_tensor_matches_pytorchs_observer_and_quantizer():
    x = sample(6, 10)
    observer = torch.ao.quantization.MinMaxObserver(
        dtype=torch.qint8, qscheme=torch.per_tensor_symmetric, quant_min=-127, quant_max=127)
    observer(x)
    scale, zero_point = observer.calculate_qparams()
    qt = quantize(x, 8)
    assert torch.allclose(qt.scale.reshape(()), scale.reshape(()), rtol=1e-6)
    assert int(zero_point) == 0 and qt.q.dtype == torch.int8
    reference = torch.quantize_per_tensor(x, float(qt.scale), 0, torch.qint8)
    assert torch.equal(qt.q, reference.int_repr())
    assert torch.equal(dequantize(qt), reference.dequantize())


def test_asymmetric_per_tensor_matches_pytorchs_observer():
    x = sample(5, 7, seed=1) + 0.7
    observer = torch.ao.quantization.MinMaxObserver(dtype=torch.quint8)  # affine, 0…255
    observer(x)
    scale, zero_point = observer.calculate_qparams()
    qt = quantize(x, 8, symmetric=False)
    assert torch.allclose(qt.scale.reshape(()), scale.reshape(()), rtol=1e-6)
    assert int(qt.zero_point) == int(zero_point) and qt.q.dtype == torch.uint8
    reference = torch.quantize_per_tensor(x, float(qt.scale), int(zero_point), torch.quint8)
    assert torch.equal(qt.q, reference.int_repr())


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_per_channel_matches_fake_quantize_per_channel(axis):
    x = sample(6, 8, seed=2)
    qt = quantize(x, 4, axis=axis)
    scale = qt.scale.reshape(-1)
    reference = torch.fake_quantize_per_channel_affine(
        x, scale, torch.zeros_like(scale, dtype=torch.int32), axis % 2, -7, 7)
    assert torch.allclose(dequantize(qt), reference, atol=1e-6)
    assert qt.q.abs().max() <= 7


def test_groups_are_rows_of_the_last_dimension():
    x = sample(3, 4, 12, seed=3, dtype=torch.float64)
    qt = quantize(x, 3, group_size=4)
    by_hand = torch.cat([fake_quantize(x[..., i:i + 4].contiguous(), 3, axis=None)
                         if False else _by_hand_groups(x[..., i:i + 4], 3)
                         for i in range(0, 12, 4)], dim=-1)
    assert qt.scale.shape == (3, 4, 3, 1)
    assert torch.equal(dequantize(qt), by_hand)
    # a group as wide as the row is one scale per row: the same as axis over all but the last
    assert torch.equal(fake_quantize(x[0], 3, group_size=12), fake_quantize(x[0], 3, axis=0))


def _by_hand_groups(block, bits):
    # one absmax scale per (…) row of the block, written out with a loop
    out = torch.empty_like(block)
    qmax = 2 ** (bits - 1) - 1
    for index in torch.cartesian_prod(*(torch.arange(s) for s in block.shape[:-1])):
        row = block[tuple(index)]
        s = row.abs().max() / qmax
        out[tuple(index)] = torch.round(row / s).clamp(-qmax, qmax) * s
    return out


def test_round_half_to_even_and_a_zero_group():
    x = torch.tensor([[2.5, 0.5, -1.5, 127.0], [0.0, 0.0, 0.0, 0.0]], dtype=torch.float64)
    qt = quantize(x, 8, axis=0)  # first row: scale 1 exactly
    assert qt.q[0].tolist() == [2, 0, -2, 127]
    assert qt.scale[1].item() == 1.0 and torch.equal(dequantize(qt)[1], x[1])


def test_asymmetric_keeps_zero_exact_and_covers_the_range():
    x = torch.linspace(0.3, 2.0, 16, dtype=torch.float64).reshape(2, 8)
    qt = quantize(x, 4, symmetric=False, axis=0)
    assert qt.q.min() >= 0 and qt.q.max() <= 15
    assert torch.equal(qt.zero_point, torch.zeros(2, 1, dtype=torch.float64))  # min is 0
    err = (dequantize(qt) - x).abs()
    assert (err <= qt.scale / 2 + 1e-12).all()


def test_error_is_at_most_half_a_step():
    x = sample(8, 32, seed=4, dtype=torch.float64)
    for bits in (2, 4, 8):
        qt = quantize(x, bits, axis=0)
        assert ((dequantize(qt) - x).abs() <= qt.scale / 2 + 1e-12).all()


def test_an_outlier_channel_hurts_per_token_more_than_per_channel():
    k = sample(64, 16, seed=5, dtype=torch.float64)
    k[:, 3] *= 30
    rest = [c for c in range(16) if c != 3]  # the ordinary channels
    per_token = relative_error(fake_quantize(k, 4, axis=0)[:, rest], k[:, rest])
    per_channel = relative_error(fake_quantize(k, 4, axis=1)[:, rest], k[:, rest])
    assert per_channel < per_token / 2


def test_kv_attention_error_matches_a_direct_computation():
    q, k, v = (sample(2, 5, 8, seed=s, dtype=torch.float64) for s in (6, 7, 8))
    r = kv_attention_error(q, k, v, 4, key_axis=-1, value_axis=-2)
    k_hat = fake_quantize(k, 4, axis=-1)
    v_hat = fake_quantize(v, 4, axis=-2)
    exact = torch.softmax(q @ k.mT / 8**0.5, -1) @ v
    approx = torch.softmax(q @ k_hat.mT / 8**0.5, -1) @ v_hat
    assert r["output"] == pytest.approx(((approx - exact).norm() / exact.norm()).item())
    assert r["K"] == pytest.approx(((k_hat - k).norm() / k.norm()).item())
    out, _ = scaled_dot_product_attention(q, k, v)
    assert torch.allclose(out, exact)


def test_fp8_limits_match_torch_finfo():
    e4m3, e5m2 = fp8_limits(4, 3, ieee_like=False), fp8_limits(5, 2, ieee_like=True)
    assert e4m3["max"] == torch.finfo(torch.float8_e4m3fn).max == 448
    assert e5m2["max"] == torch.finfo(torch.float8_e5m2).max == 57344
    assert e4m3["min_normal"] == torch.finfo(torch.float8_e4m3fn).tiny
    assert e5m2["min_normal"] == torch.finfo(torch.float8_e5m2).tiny
    assert e4m3["step"] == torch.finfo(torch.float8_e4m3fn).eps
    assert e5m2["step"] == torch.finfo(torch.float8_e5m2).eps


def test_bad_inputs_are_named():
    x = sample(4, 6)
    with pytest.raises(ValueError, match="bits must be between 2 and 16"):
        quantize(x, 1)
    with pytest.raises(ValueError, match="group_size=4 must divide"):
        quantize(x, group_size=4)
    with pytest.raises(ValueError, match="axis=2 is out of range"):
        quantize(x, axis=2)
    with pytest.raises(ValueError, match="not both"):
        quantize(x, axis=0, group_size=3)
    with pytest.raises(TypeError, match="floating-point"):
        quantize(torch.ones(3, dtype=torch.int64))
    with pytest.raises(ValueError, match="NaN or inf"):
        quantize(torch.tensor([1.0, float("nan")]))
    with pytest.raises(TypeError, match="QTensor"):
        dequantize(x)
    assert isinstance(quantize(x), QTensor)


def test_granularity_errors_follow_the_named_scales():
    from attention_qa.quant import GRANULARITIES, granularity_errors, toy_tensors

    q, k, v, w = toy_tensors(20.0)
    r = granularity_errors(4, "K per column, V per row", 20.0)
    k_hat = torch.round(k / (k.abs().amax(0) / 7)) * (k.abs().amax(0) / 7)  # per column
    assert torch.allclose(r["K error"], k_hat - k)
    w_hat = torch.round(w / (w.abs().amax(1, keepdim=True) / 7)) * (
        w.abs().amax(1, keepdim=True) / 7)  # per row
    assert r["W"] == pytest.approx(((w_hat - w).norm() / w.norm()).item())
    assert len(GRANULARITIES) == 5
    with pytest.raises(ValueError, match="granularity must be one of"):
        granularity_errors(4, "per head")
