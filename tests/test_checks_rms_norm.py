import pytest
import torch

from attention_qa.blocks import RMSNorm
from attention_qa.checks.blocks import RMS_NORM_SLIPS, check_rms_norm, rms_norm_variant


def test_right_answers_pass():
    def by_hand(x, weight, eps):
        return x / torch.sqrt((x**2).mean(-1, keepdim=True) + eps) * weight

    def with_module(x, weight, eps):
        layer = RMSNorm(x.shape[-1], eps).double()
        with torch.no_grad():
            layer.weight.copy_(weight)
            return layer(x)

    check_rms_norm(by_hand)
    check_rms_norm(with_module)


@pytest.mark.parametrize("bug", list(RMS_NORM_SLIPS))
def test_each_classic_bug_is_named(bug):
    def buggy(x, weight, eps):
        return rms_norm_variant(x, weight, eps, bug)

    with pytest.raises(AssertionError) as info:
        check_rms_norm(buggy)
    assert RMS_NORM_SLIPS[bug] in str(info.value)


def test_other_errors_are_reported():
    with pytest.raises(AssertionError, match="off by up to"):
        check_rms_norm(lambda x, w, eps: x)
    with pytest.raises(AssertionError, match="has shape"):
        check_rms_norm(lambda x, w, eps: x[0])
    with pytest.raises(AssertionError, match="raised ZeroDivisionError"):
        check_rms_norm(lambda x, w, eps: 1 / 0)
