"""check_cross_attention: passes cross-attention done right and names each classic slip."""

import pytest

from attention_qa.checks.multihead import CROSS_SLIPS, check_cross_attention, cross_variant
from attention_qa.masks import padding_mask


def right(mha, target, memory, src_lengths):
    mask = padding_mask(src_lengths, memory.shape[1])[:, None, None, :]  # (B, 1, 1, m)
    return mha(target, memory, memory, mask)


def test_passes_a_right_answer():
    check_cross_attention(right)
    check_cross_attention(lambda *args: right(*args)[0])  # output only


@pytest.mark.parametrize("bug", sorted(CROSS_SLIPS))
def test_names_each_classic_bug(bug):
    def slip(mha, target, memory, src_lengths):
        return cross_variant(mha, target, memory, src_lengths, bug)[0]

    with pytest.raises(AssertionError) as err:
        check_cross_attention(slip)
    assert CROSS_SLIPS[bug] in str(err.value)


def test_kv_from_decoder_weights_are_named_by_their_shape():
    def slip(mha, target, memory, src_lengths):
        out, _ = right(mha, target, memory, src_lengths)
        _, weights = mha(target, target, target)  # (B, h, n, n)
        return out, weights

    with pytest.raises(AssertionError, match=r"\(B, h, n, n\)"):
        check_cross_attention(slip)


def test_reports_an_exception_with_its_case():
    def broken(mha, target, memory, src_lengths):
        raise RuntimeError("boom")

    with pytest.raises(AssertionError, match="raised RuntimeError on B=2"):
        check_cross_attention(broken)
