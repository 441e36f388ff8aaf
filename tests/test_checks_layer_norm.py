import pytest
import torch

from attention_qa.blocks import LayerNorm
from attention_qa.checks.blocks import LAYER_NORM_SLIPS, check_layer_norm, layer_norm_variant


def test_right_answers_pass():
    def by_hand(x, weight, bias, eps):
        mean = x.mean(-1, keepdim=True)
        var = ((x - mean) ** 2).mean(-1, keepdim=True)
        return (x - mean) / torch.sqrt(var + eps) * weight + bias

    def with_module(x, weight, bias, eps):
        layer = LayerNorm(x.shape[-1], eps).double()
        with torch.no_grad():
            layer.weight.copy_(weight)
            layer.bias.copy_(bias)
            return layer(x)

    check_layer_norm(by_hand)
    check_layer_norm(with_module)


@pytest.mark.parametrize("bug", list(LAYER_NORM_SLIPS))
def test_each_classic_bug_is_named(bug):
    def buggy(x, weight, bias, eps):
        return layer_norm_variant(x, weight, bias, eps, bug)

    with pytest.raises(AssertionError) as info:
        check_layer_norm(buggy)
    assert LAYER_NORM_SLIPS[bug] in str(info.value)


def test_other_errors_are_reported():
    with pytest.raises(AssertionError, match="off by up to"):
        check_layer_norm(lambda x, w, b, eps: x)
    with pytest.raises(AssertionError, match="has shape"):
        check_layer_norm(lambda x, w, b, eps: x[0])
