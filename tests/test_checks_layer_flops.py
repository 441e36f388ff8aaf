import pytest

from attention_qa.checks.blocks import _LAYER_FLOPS_BUGS, _layer_flops_variant, check_layer_flops
from attention_qa.explorers.layer_costs import layer_flops


def test_right_answers_pass():
    def from_package(n, d):
        flops = layer_flops(n, d)
        return flops["self-attention"], flops["recurrent"]

    check_layer_flops(from_package)
    check_layer_flops(lambda n, d: (2 * (2 * n * n * d), 2 * n * (d * d + d * d)))


@pytest.mark.parametrize("bug", list(_LAYER_FLOPS_BUGS))
def test_each_classic_bug_is_named(bug):
    with pytest.raises(AssertionError) as info:
        check_layer_flops(lambda n, d: _layer_flops_variant(n, d, bug))
    assert _LAYER_FLOPS_BUGS[bug] in str(info.value)


def test_other_errors_are_reported():
    with pytest.raises(AssertionError, match="return a pair"):
        check_layer_flops(lambda n, d: n * d)
    with pytest.raises(AssertionError, match="expected"):
        check_layer_flops(lambda n, d: (1, 1))
