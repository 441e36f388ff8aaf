import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from attention_qa.checks.multihead import check_attention_flops, flops_variant
from attention_qa.multihead import MultiHeadAttention


def right(batch, n, m, d_model, num_heads):
    return 2 * batch * (2 * n + 2 * m) * d_model**2 + 4 * batch * n * m * d_model


def test_accepts_a_right_answer_and_a_tensor_result():
    assert check_attention_flops(right) is None
    assert check_attention_flops(lambda *args: torch.tensor(right(*args))) is None


def test_reference_matches_pytorchs_flop_counter():
    # The slip-free variant is what FlopCounterMode measures on the package's module.
    for batch, n, m, d, h in [(2, 3, 5, 12, 3), (1, 6, 6, 16, 4)]:
        mha = MultiHeadAttention(d, h)
        q, kv = torch.randn(batch, n, d), torch.randn(batch, m, d)
        with FlopCounterMode(display=False) as counter:
            mha(q, kv, kv)
        assert counter.get_total_flops() == flops_variant(batch, n, m, d, h)


@pytest.mark.parametrize(
    "wrong, message",
    [
        (lambda b, n, m, d, h: right(b, n, m, d, h) // 2, "you counted multiply-adds"),
        (lambda b, n, m, d, h: h * right(b, n, m, d, h), "the count grows h-fold"),
        (
            lambda b, n, m, d, h: 2 * b * (2 * n + 2 * m) * d * d + 4 * b * n * m * (d // h),
            "counted for one head only",
        ),
        (
            lambda b, n, m, d, h: right(b, n, m, d, h) - 2 * b * n * d * d,
            "the output projection W_O",
        ),
        (lambda b, n, m, d, h: right(b, n, m, d, h) - 2 * b * n * m * d, "only Q Kᵀ is counted"),
        (lambda b, n, m, d, h: 8 * b * n * d * d + 4 * b * n * m * d, "W_K and W_V run on the m"),
    ],
)
def test_names_each_slip(wrong, message):
    with pytest.raises(AssertionError, match=message):
        check_attention_flops(wrong)


def test_other_wrong_answers_get_the_formula():
    with pytest.raises(AssertionError, match="one multi-head attention costs"):
        check_attention_flops(lambda b, n, m, d, h: 4 * b * n * d * (2 * d + n))  # n = m only
    with pytest.raises(AssertionError, match="should be one number"):
        check_attention_flops(lambda *args: "many")
