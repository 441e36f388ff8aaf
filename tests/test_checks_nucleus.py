import pytest
import torch

from attention_qa.checks.decoding import NUCLEUS_SLIPS, check_nucleus_probs, nucleus_variant
from attention_qa.decoding import filter_logits


def test_right_answers_pass():
    def with_filter(logits, temperature, top_p):
        return torch.softmax(filter_logits(logits / temperature, top_p=top_p), dim=-1)

    check_nucleus_probs(with_filter)
    check_nucleus_probs(lambda logits, t, p: nucleus_variant(logits, t, p))


@pytest.mark.parametrize("bug", list(NUCLEUS_SLIPS))
def test_each_classic_bug_is_named(bug):
    def buggy(logits, temperature, top_p):
        return nucleus_variant(logits, temperature, top_p, bug)

    with pytest.raises(AssertionError) as info:
        check_nucleus_probs(buggy)
    assert NUCLEUS_SLIPS[bug] in str(info.value)


def test_other_errors_are_reported():
    with pytest.raises(AssertionError, match="off by up to"):
        check_nucleus_probs(lambda logits, t, p: torch.softmax(logits, -1))
    with pytest.raises(AssertionError, match="has shape"):
        check_nucleus_probs(lambda logits, t, p: logits[..., :1])
    with pytest.raises(AssertionError, match="raised ZeroDivisionError"):
        check_nucleus_probs(lambda logits, t, p: 1 / 0)
