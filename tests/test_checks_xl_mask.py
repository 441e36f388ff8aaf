"""check_xl_attention_mask (q42): right answers in several forms pass, each slip is named."""

import numpy as np
import pytest
import torch

from attention_qa.checks import check_xl_attention_mask
from attention_qa.checks.q42 import XL_MASK_SLIPS, xl_mask_variant
from attention_qa.long_context import xl_attention_mask


def by_loops(segment_len, memory_len):
    return torch.tensor([[j <= memory_len + i for j in range(memory_len + segment_len)]
                         for i in range(segment_len)])


def by_triu(segment_len, memory_len):  # the original code's mask, inverted
    klen = memory_len + segment_len
    return ~torch.triu(torch.ones(segment_len, klen), diagonal=1 + memory_len).bool()


def by_concatenation(segment_len, memory_len):
    memory = torch.ones(segment_len, memory_len, dtype=torch.bool)
    causal = torch.ones(segment_len, segment_len, dtype=torch.bool).tril()
    return torch.cat([memory, causal], dim=-1)


RIGHT = [xl_attention_mask, by_loops, by_triu, by_concatenation]


@pytest.mark.parametrize("fn", RIGHT)
@pytest.mark.parametrize("form", ["tensor", "numpy", "list", "0/1 ints", "numpy ints"])
def test_right_answers_pass_in_every_form(fn, form):
    wrap = {
        "tensor": lambda m: m,
        "numpy": lambda m: m.numpy(),
        "list": lambda m: m.tolist(),
        "0/1 ints": lambda m: m.long(),
        "numpy ints": lambda m: m.numpy().astype(np.int32),
    }[form]
    assert check_xl_attention_mask(lambda L, M: wrap(fn(L, M))) is None


@pytest.mark.parametrize("bug", list(XL_MASK_SLIPS))
def test_each_slip_is_named(bug):
    with pytest.raises(AssertionError, match=XL_MASK_SLIPS[bug][:30].replace("+", r"\+")):
        check_xl_attention_mask(lambda L, M: xl_mask_variant(L, M, bug))
    with pytest.raises(AssertionError):
        check_xl_attention_mask(lambda L, M: xl_mask_variant(L, M, bug).tolist())


def test_other_mistakes_are_located_and_unfinished_work_passes_through():
    def transposed(L, M):
        return xl_attention_mask(L, M).T

    def one_off(L, M):
        mask = xl_attention_mask(L, M)
        mask[0, -1] = True
        return mask

    def weights(L, M):
        return xl_attention_mask(L, M).double() / 2

    def unfinished(L, M):
        raise NotImplementedError

    with pytest.raises(AssertionError, match="should be"):
        check_xl_attention_mask(transposed)
    with pytest.raises(AssertionError, match=r"wrong at \[i, j\] = \[0, 7\]"):
        check_xl_attention_mask(one_off)
    with pytest.raises(AssertionError, match="only True/False"):
        check_xl_attention_mask(weights)
    with pytest.raises(NotImplementedError):
        check_xl_attention_mask(unfinished)
