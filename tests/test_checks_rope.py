import re

import pytest
import torch

from attention_qa.checks.positional import ROPE_SLIPS, check_rope, rope_variant
from attention_qa.positional import apply_rope


def test_the_package_rotation_passes():
    check_rope(lambda x, positions, base: apply_rope(x, positions, base))


def test_a_float32_loop_passes():
    def loop(x, positions, base):
        out = x.float().clone()
        d = x.shape[-1]
        for row, pos in enumerate(positions.tolist()):
            for i in range(d // 2):
                angle = torch.tensor(pos * base ** (-2 * i / d))
                a, b = x[..., row, 2 * i].float(), x[..., row, 2 * i + 1].float()
                out[..., row, 2 * i] = a * angle.cos() - b * angle.sin()
                out[..., row, 2 * i + 1] = a * angle.sin() + b * angle.cos()
        return out

    check_rope(loop)


@pytest.mark.parametrize("bug", list(ROPE_SLIPS))
def test_each_classic_bug_is_named(bug):
    def buggy(x, positions, base):
        return rope_variant(x, positions, base, bug).float()

    with pytest.raises(AssertionError, match=re.escape(ROPE_SLIPS[bug][:30])):
        check_rope(buggy)


def test_wrong_shape_and_unknown_error_are_reported():
    with pytest.raises(AssertionError, match="has shape"):
        check_rope(lambda x, positions, base: x[..., :-1])
    with pytest.raises(AssertionError, match="off by up to"):
        check_rope(lambda x, positions, base: x)
    with pytest.raises(AssertionError, match="raised ZeroDivisionError"):
        check_rope(lambda x, positions, base: 1 / 0)


def test_the_reference_matches_the_package():
    x = torch.randn(3, 7, 12, dtype=torch.float64)
    positions = torch.tensor([0, 5, 2, 9, 1, 33, 4])
    torch.testing.assert_close(rope_variant(x, positions, 500.0),
                               apply_rope(x, positions, base=500.0))
