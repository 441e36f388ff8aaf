import numpy as np
import pytest
import torch

from attention_qa.checks.q43 import (
    FAKE_QUANTIZE_SLIPS,
    check_fake_quantize,
    fake_quantize_variant,
)
from attention_qa.quant import fake_quantize


def by_formula(x, bits):
    qmax = 2 ** (bits - 1) - 1
    scale = x.abs().amax(dim=-1, keepdim=True) / qmax  # (..., 1)
    scale = scale.clamp(min=torch.finfo(x.dtype).tiny)  # a row of zeros stays zeros
    return torch.round(x / scale).clamp(-qmax, qmax) * scale


def with_the_package(x, bits):
    return fake_quantize(x, bits, group_size=x.shape[-1])


def row_by_row(x, bits):
    qmax = 2 ** (bits - 1) - 1
    rows = x.reshape(-1, x.shape[-1])
    out = []
    for row in rows:
        s = row.abs().max() / qmax
        out.append(row if s == 0 else torch.round(row / s) * s)
    return torch.stack(out).reshape(x.shape)


def in_numpy(x, bits):
    a = x.numpy()
    qmax = 2 ** (bits - 1) - 1
    s = np.abs(a).max(axis=-1, keepdims=True) / qmax
    s = np.where(s == 0, 1.0, s)
    return np.clip(np.rint(a / s), -qmax, qmax) * s


RIGHT = [by_formula, with_the_package, row_by_row, in_numpy]


@pytest.mark.parametrize("fn", RIGHT, ids=lambda f: f.__name__)
@pytest.mark.parametrize("form", ["tensor", "numpy", "list", "float32", "float16"])
def test_right_answers_pass_in_every_form(fn, form):
    def learner(x, bits):
        if form in ("float32", "float16") and fn is not in_numpy:
            x = x.to(torch.float32 if form == "float32" else torch.float16)
        out = fn(x, bits)
        if form == "numpy" and isinstance(out, torch.Tensor):
            return out.numpy()
        if form == "list":
            return out.tolist()
        return out

    check_fake_quantize(learner)


@pytest.mark.parametrize("bug", list(FAKE_QUANTIZE_SLIPS))
def test_each_slip_is_named(bug):
    with pytest.raises(AssertionError) as info:
        check_fake_quantize(lambda x, bits: fake_quantize_variant(x, bits, bug))
    assert FAKE_QUANTIZE_SLIPS[bug] in str(info.value)


@pytest.mark.parametrize("bug", list(FAKE_QUANTIZE_SLIPS))
def test_slips_fail_in_float32_and_as_lists(bug):
    with pytest.raises(AssertionError, match="on x of shape"):
        check_fake_quantize(lambda x, bits: fake_quantize_variant(x.float(), bits, bug).tolist())


def test_the_reference_is_the_package():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(3, 5, 8, generator=g, dtype=torch.float64)
    assert torch.equal(fake_quantize_variant(x, 4), with_the_package(x, 4))


def naive_without_zero_guard(x, bits):
    s = x.abs().amax(dim=-1, keepdim=True) / (2 ** (bits - 1) - 1)
    return torch.round(x / s) * s  # a row of zeros: 0 / 0


def test_other_errors_are_reported():
    with pytest.raises(AssertionError, match="give it scale 1"):
        check_fake_quantize(naive_without_zero_guard)
    with pytest.raises(AssertionError, match="has shape"):
        check_fake_quantize(lambda x, bits: by_formula(x, bits)[..., :-1])
    with pytest.raises(AssertionError, match="off by up to"):
        check_fake_quantize(lambda x, bits: x)


def divisor_full_range_clamped_to_q(x, bits):
    s = x.abs().amax(-1, keepdim=True) / 2 ** (bits - 1)
    s = torch.where(s == 0, torch.ones_like(s), s)
    return torch.round(x / s).clamp(-(2 ** (bits - 1) - 1), 2 ** (bits - 1) - 1) * s


def divisor_full_range_no_clamp(x, bits):
    s = x.abs().amax(-1, keepdim=True) / 2 ** (bits - 1)
    s = torch.where(s == 0, torch.ones_like(s), s)
    return torch.round(x / s) * s


@pytest.mark.parametrize("fn, bug", [
    (divisor_full_range_clamped_to_q, "full_range_clamped"),
    (divisor_full_range_no_clamp, "full_range_unclamped"),
])
def test_a_divisor_of_2_to_the_b_minus_1_is_named_however_it_is_clamped(fn, bug):
    with pytest.raises(AssertionError) as info:
        check_fake_quantize(fn)
    assert FAKE_QUANTIZE_SLIPS[bug] in str(info.value)
    assert "2^(bits−1) − 1 (127 at 8 bits)" in str(info.value)
