import pytest
import torch

from attention_qa.blocks import FeedForward
from attention_qa.checks.blocks import FEED_FORWARD_SLIPS, check_feed_forward, feed_forward_variant


def test_right_answers_pass():
    def with_module(x, w1, b1, w2, b2):
        ffn = FeedForward(w1.shape[0], w1.shape[1]).double()
        with torch.no_grad():
            ffn.linear1.weight.copy_(w1.T)
            ffn.linear1.bias.copy_(b1)
            ffn.linear2.weight.copy_(w2.T)
            ffn.linear2.bias.copy_(b2)
            return ffn(x)

    check_feed_forward(with_module)
    check_feed_forward(lambda x, w1, b1, w2, b2: torch.clamp(x @ w1 + b1, min=0) @ w2 + b2)


@pytest.mark.parametrize("bug", list(FEED_FORWARD_SLIPS))
def test_each_classic_bug_is_named(bug):
    with pytest.raises(AssertionError) as info:
        check_feed_forward(lambda *args: feed_forward_variant(*args, bug=bug))
    assert FEED_FORWARD_SLIPS[bug] in str(info.value)


def test_mixing_positions_is_named():
    def mixes(x, w1, b1, w2, b2):
        out = feed_forward_variant(x, w1, b1, w2, b2)
        return out + x.mean(dim=-2, keepdim=True)

    with pytest.raises(AssertionError, match="changed the output at other positions"):
        check_feed_forward(mixes)


def test_other_errors_are_reported():
    with pytest.raises(AssertionError, match="off by up to"):
        check_feed_forward(lambda x, w1, b1, w2, b2: x)
