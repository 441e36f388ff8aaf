import pytest

from attention_qa.checks.blocks import LAYER_FLOPS_SLIPS, check_layer_flops, layer_flops_variant
from attention_qa.costs import layer_flops


def test_right_answers_pass():
    def from_package(n, d):
        flops = layer_flops(n, d)
        return flops["self-attention"], flops["recurrent"]

    check_layer_flops(from_package)
    check_layer_flops(lambda n, d: (2 * (2 * n * n * d), 2 * n * (d * d + d * d)))


@pytest.mark.parametrize("bug", list(LAYER_FLOPS_SLIPS))
def test_each_classic_bug_is_named(bug):
    with pytest.raises(AssertionError) as info:
        check_layer_flops(lambda n, d: layer_flops_variant(n, d, bug))
    assert LAYER_FLOPS_SLIPS[bug] in str(info.value)


def test_other_errors_are_reported():
    with pytest.raises(AssertionError, match="return a pair"):
        check_layer_flops(lambda n, d: n * d)
    with pytest.raises(AssertionError, match="expected"):
        check_layer_flops(lambda n, d: (1, 1))
