"""check_merge_partials (q36): independent right answers pass in float32 and float64, each
slip is named, and the overflow of e^lse is explained."""

import re

import numpy as np
import pytest
import torch

from attention_qa.checks import check_merge_partials
from attention_qa.checks.parallel import (
    LSE_SLIPS,
    MERGE_SLIPS,
    OVERFLOW_HINT,
    lse_variant,
    merge_variant,
)


def by_running_max(out_a, lse_a, out_b, lse_b):
    """FlashAttention's rescaling: shift both by the larger lse, then normalise."""
    top = torch.maximum(lse_a, lse_b)
    w_a, w_b = torch.exp(lse_a - top), torch.exp(lse_b - top)
    out = (w_a.unsqueeze(-1) * out_a + w_b.unsqueeze(-1) * out_b) / (w_a + w_b).unsqueeze(-1)
    return out, top + torch.log(w_a + w_b)


def by_sigmoid(out_a, lse_a, out_b, lse_b):
    """ring-flash-attention's form: out_a − σ(lse_b − lse_a)·(out_a − out_b)."""
    share_b = torch.sigmoid(lse_b - lse_a).unsqueeze(-1)
    return out_a - share_b * (out_a - out_b), lse_a - torch.nn.functional.logsigmoid(
        lse_a - lse_b)


def by_softmax_of_lses(out_a, lse_a, out_b, lse_b):
    """The two weights as a softmax over the pair of lses."""
    lses = torch.stack([lse_a, lse_b], -1)  # (..., n, 2)
    w = torch.softmax(lses, -1)
    out = w[..., :1] * out_a + w[..., 1:] * out_b
    return out, torch.logsumexp(lses, -1)


def by_numpy_loops(out_a, lse_a, out_b, lse_b):
    """Row by row in NumPy with math-free logaddexp."""
    oa, ob, la, lb = (t.numpy() for t in (out_a, out_b, lse_a, lse_b))
    lse = np.logaddexp(la, lb)
    out = np.exp(la - lse)[..., None] * oa + np.exp(lb - lse)[..., None] * ob
    return out, lse


@pytest.mark.parametrize("right", [by_running_max, by_softmax_of_lses, by_numpy_loops])
def test_right_answers_pass(right):
    check_merge_partials(right)


@pytest.mark.parametrize("right", [by_running_max, by_softmax_of_lses])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_right_answers_pass_in_float32_and_float64(right, dtype):
    check_merge_partials(lambda *args: right(*(t.to(dtype) for t in args)))


def test_the_sigmoid_form_is_right_where_no_row_is_masked():
    """σ(lse_b − lse_a) is NaN when both are −inf, but here only b is: it passes."""
    check_merge_partials(by_sigmoid)


@pytest.mark.parametrize("bug", list(MERGE_SLIPS))
def test_each_output_slip_is_named(bug):
    def learner(out_a, lse_a, out_b, lse_b):
        return merge_variant(out_a, lse_a, out_b, lse_b, bug), torch.logaddexp(lse_a, lse_b)
    with pytest.raises(AssertionError, match=re.escape(MERGE_SLIPS[bug])):
        check_merge_partials(learner)


@pytest.mark.parametrize("bug", list(LSE_SLIPS))
def test_each_lse_slip_is_named(bug):
    def learner(out_a, lse_a, out_b, lse_b):
        return merge_variant(out_a, lse_a, out_b, lse_b), lse_variant(lse_a, lse_b, bug)
    with pytest.raises(AssertionError, match=re.escape(LSE_SLIPS[bug])):
        check_merge_partials(learner)


def test_exponentiating_lse_directly_overflows_with_the_reason():
    def naive(out_a, lse_a, out_b, lse_b):
        e_a, e_b = torch.exp(lse_a), torch.exp(lse_b)
        out = (e_a.unsqueeze(-1) * out_a + e_b.unsqueeze(-1) * out_b) / (e_a + e_b).unsqueeze(-1)
        return out, torch.log(e_a + e_b)
    with pytest.raises(AssertionError, match=re.escape(OVERFLOW_HINT)):
        check_merge_partials(naive)


def test_other_wrong_answers_fail():
    with pytest.raises(AssertionError, match="pair"):
        check_merge_partials(lambda oa, la, ob, lb: oa)
    with pytest.raises(AssertionError, match="shape"):
        check_merge_partials(lambda oa, la, ob, lb: (oa, torch.logaddexp(la, lb)[..., None]))
    with pytest.raises(AssertionError, match="off by"):
        check_merge_partials(lambda oa, la, ob, lb: (1.1 * by_running_max(oa, la, ob, lb)[0],
                                                     torch.logaddexp(la, lb)))
