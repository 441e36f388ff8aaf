import math

import pytest
import torch
from torch import nn

from attention_qa.checks.blocks import EMBEDDING_SLIPS, check_embedding, embedding_variant


def test_right_answers_pass():
    def one_hot(tokens, weight):
        hot = nn.functional.one_hot(tokens, weight.shape[0]).to(weight.dtype)
        return hot @ weight * math.sqrt(weight.shape[1])

    check_embedding(one_hot)
    check_embedding(lambda t, w: nn.functional.embedding(t, w) * w.shape[-1] ** 0.5)


@pytest.mark.parametrize("bug", list(EMBEDDING_SLIPS))
def test_each_classic_bug_is_named(bug):
    with pytest.raises(AssertionError) as info:
        check_embedding(lambda t, w: embedding_variant(t, w, bug))
    assert EMBEDDING_SLIPS[bug] in str(info.value)


def test_other_errors_are_reported():
    with pytest.raises(AssertionError, match=r"off by up to .* from the rows weight\[tokens\]"):
        check_embedding(lambda t, w: torch.zeros(*t.shape, w.shape[1]))
    with pytest.raises(AssertionError, match="has shape"):
        check_embedding(lambda t, w: w)
