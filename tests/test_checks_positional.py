import pytest
import torch

from attention_qa.checks.blocks import (
    SINUSOIDAL_SLIPS,
    check_sinusoidal_encoding,
    sinusoidal_variant,
)
from attention_qa.positional import sinusoidal_encoding


def test_the_package_encoding_passes():
    check_sinusoidal_encoding(sinusoidal_encoding)


def test_a_float32_loop_passes():
    def loop(num_positions, d_model):
        pe = torch.zeros(num_positions, d_model)
        for pos in range(num_positions):
            for i in range(0, d_model, 2):
                pe[pos, i] = torch.sin(torch.tensor(pos / 10000 ** (i / d_model)))
                pe[pos, i + 1] = torch.cos(torch.tensor(pos / 10000 ** (i / d_model)))
        return pe

    check_sinusoidal_encoding(loop)


@pytest.mark.parametrize("bug", list(SINUSOIDAL_SLIPS))
def test_each_classic_bug_is_named(bug):
    def buggy(num_positions, d_model):
        return sinusoidal_variant(num_positions, d_model, bug).float()

    with pytest.raises(AssertionError, match=SINUSOIDAL_SLIPS[bug][:30].replace("(", r"\(")):
        check_sinusoidal_encoding(buggy)


def test_wrong_shape_and_unknown_error_are_reported():
    with pytest.raises(AssertionError, match="has shape"):
        check_sinusoidal_encoding(lambda n, d: torch.zeros(d, n))
    with pytest.raises(AssertionError, match="off by up to"):
        check_sinusoidal_encoding(lambda n, d: torch.zeros(n, d))
    with pytest.raises(AssertionError, match="raised ZeroDivisionError"):
        check_sinusoidal_encoding(lambda n, d: 1 / 0)


def test_the_reference_matches_the_package():
    assert torch.allclose(sinusoidal_variant(30, 8).float(), sinusoidal_encoding(30, 8), atol=1e-6)
