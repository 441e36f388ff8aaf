"""attention_qa.causality: the leak test, with the right mask and the wrong ones."""

import pytest

from attention_qa.causality import LEAK_MASK_NAMES, LEAK_SEQ_LEN, output_change, variant_mask
from attention_qa.masks import causal_mask


def test_correct_mask_changes_exactly_the_later_positions():
    for p in range(LEAK_SEQ_LEN):
        changed = (output_change(p, "correct") > 0).tolist()
        assert changed == [i >= p for i in range(LEAK_SEQ_LEN)]


@pytest.mark.parametrize("name", ["none", "transposed", "block mask read as keep"])
def test_the_wrong_masks_let_the_last_token_reach_every_earlier_position(name):
    assert (output_change(LEAK_SEQ_LEN - 1, name)[:-1] > 0).all()


def test_the_variants_are_the_named_masks():
    assert LEAK_MASK_NAMES[0] == "correct"
    assert (variant_mask("correct") == causal_mask(LEAK_SEQ_LEN)).all()
    assert (variant_mask("transposed") == causal_mask(LEAK_SEQ_LEN).T).all()
    with pytest.raises(ValueError, match="mask must be one of"):
        variant_mask("upside down")
    with pytest.raises(ValueError, match="position must lie in 0..7"):
        output_change(8, "correct")
