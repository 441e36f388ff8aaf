import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_qa.positional import sinusoidal_encoding


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
