"""check_attention_mask (q07): a right answer passes, each classic slip is named."""

import pytest
import torch

from attention_qa.checks import check_attention_mask


def learner(bug=None):
    def attention_mask(lengths, n, causal):
        lengths = torch.tensor(lengths)
        j = torch.arange(n)
        keys = j.unsqueeze(0) < lengths.unsqueeze(1)  # (B, n)
        if bug == "queries":
            allowed = keys[:, :, None].expand(-1, n, n)
        elif bug == "no_padding":
            allowed = torch.ones(len(lengths), n, n, dtype=torch.bool)
        else:
            allowed = keys[:, None, :].expand(-1, n, n)  # (B, n, n)
        if causal and bug != "no_causal":
            future = torch.triu(
                torch.ones(n, n, dtype=torch.bool), diagonal=0 if bug == "diagonal" else 1
            )
            allowed = allowed & ~future
        if bug == "inverted":
            allowed = ~allowed
        if bug == "float":
            allowed = allowed.float()
        return allowed

    return attention_mask


def test_right_answer_passes():
    check_attention_mask(learner())


@pytest.mark.parametrize(
    ("bug", "words"),
    [
        ("inverted", "inverted"),
        ("queries", "hides queries"),
        ("no_padding", "padding is ignored"),
        ("no_causal", "causal part is missing"),
        ("diagonal", "diagonal is blocked"),
        ("float", "boolean"),
    ],
)
def test_each_slip_is_named(bug, words):
    with pytest.raises(AssertionError, match=words):
        check_attention_mask(learner(bug))
