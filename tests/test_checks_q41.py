"""q41's checker: right answers in several styles and forms pass; each slip fails, named."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from attention_qa.checks import check_masked_lm_loss
from attention_qa.checks.q41 import MLM_LOSS_SLIPS, mlm_loss_variant


def by_cross_entropy(logits, labels):
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), labels.reshape(-1))


def by_hand(logits, labels):
    """log-sum-exp by hand, the labelled positions picked with a boolean index."""
    keep = labels != -100
    rows, targets = logits[keep], labels[keep]  # (k, V), (k,)
    top = rows.max(-1, keepdim=True).values
    log_z = top.squeeze(-1) + (rows - top).exp().sum(-1).log()
    return (log_z - rows[torch.arange(len(targets)), targets]).mean()


def by_nll_loss(logits, labels):
    log_probs = F.log_softmax(logits, dim=-1).flatten(0, -2)
    return F.nll_loss(log_probs, labels.flatten(), ignore_index=-100, reduction="mean")


def by_numpy(logits, labels):
    x, y = logits.numpy().reshape(-1, logits.shape[-1]), labels.numpy().reshape(-1)
    keep = y != -100
    x, y = x[keep], y[keep]
    log_z = np.log(np.exp(x - x.max(-1, keepdims=True)).sum(-1)) + x.max(-1)
    return np.mean(log_z - x[np.arange(len(y)), y])


RIGHT = [by_cross_entropy, by_hand, by_nll_loss, by_numpy]


@pytest.mark.parametrize("right", RIGHT, ids=lambda f: f.__name__)
@pytest.mark.parametrize("form", ["tensor", "numpy", "float", "list", "float32"])
def test_right_answers_pass_in_every_form(right, form):
    def learner(logits, labels):
        if form == "float32" and right is not by_numpy:
            logits = logits.float()
        out = right(logits, labels)
        if form == "numpy":
            return np.asarray(out.item() if isinstance(out, torch.Tensor) else out)
        if form == "float":
            return float(out)
        if form == "list":
            return [float(out)]
        return out

    assert check_masked_lm_loss(learner) is None


@pytest.mark.parametrize("bug", list(MLM_LOSS_SLIPS))
def test_each_slip_is_named(bug):
    def slipped(logits, labels):
        return mlm_loss_variant(logits, labels, bug)

    with pytest.raises(AssertionError) as info:
        check_masked_lm_loss(slipped)
    assert MLM_LOSS_SLIPS[bug] in str(info.value)
    with pytest.raises(AssertionError):  # also as a float
        check_masked_lm_loss(lambda lo, la: float(slipped(lo, la)))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("smoothing", [0.0, 0.1, 0.2])
def test_half_precision_is_refused_named(dtype, smoothing):
    """In half precision the tolerance would let label smoothing 0.1 (0.2 in bfloat16) pass;
    a loss computed in half precision is refused unless it is right to float32's precision
    (a 0/1 mask in half precision is exact: tests/test_checks_forms.py), and so is a half
    answer."""
    with pytest.raises(AssertionError, match="compute it in float32 or better"):
        check_masked_lm_loss(lambda lo, la: by_cross_entropy_smoothed(lo.to(dtype), la,
                                                                      smoothing))
    with pytest.raises(AssertionError, match="compute it in float32 or better"):
        check_masked_lm_loss(lambda lo, la: by_cross_entropy(lo, la).to(dtype))
    with pytest.raises(AssertionError, match="compute it in float32 or better"):
        check_masked_lm_loss(lambda lo, la: np.float16(by_cross_entropy(lo, la).item()))
    for widen in (float, lambda t: t.double()):  # half work returned as a wider number
        with pytest.raises(AssertionError, match="compute it in float32 or better"):
            check_masked_lm_loss(lambda lo, la, widen=widen: widen(
                by_cross_entropy_smoothed(lo.to(dtype), la, smoothing)))


def by_cross_entropy_smoothed(logits, labels, smoothing):
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), labels.reshape(-1),
                           label_smoothing=smoothing)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_label_smoothing_is_named_in_float32_and_float64(dtype):
    with pytest.raises(AssertionError, match="label smoothing 0.1"):
        check_masked_lm_loss(lambda lo, la: by_cross_entropy_smoothed(lo.to(dtype), la, 0.1))
    with pytest.raises(AssertionError, match="the loss is off by up to"):
        check_masked_lm_loss(lambda lo, la: by_cross_entropy_smoothed(lo.to(dtype), la, 0.2))


def test_a_sequence_without_labels_adds_nothing():
    """The checker's fourth case has a sequence with no labelled position: the right loss
    skips it; averaging per sequence gives 0/0 = NaN there, and skipping such a sequence
    but still averaging per sequence is caught by the second case."""
    def per_sequence_skipping_empty(logits, labels):
        nll = F.cross_entropy(logits.movedim(-1, 1), labels, reduction="none")  # (B, n)
        count = (labels != -100).sum(-1)
        means = nll.sum(-1) / count.clamp(min=1)
        return means[count > 0].mean()

    with pytest.raises(AssertionError, match="a sequence with more of them weighs more"):
        check_masked_lm_loss(per_sequence_skipping_empty)
    seen = []

    def spy(logits, labels):
        seen.append(((labels != -100).sum(-1) == 0).any().item())
        return by_cross_entropy(logits, labels)

    check_masked_lm_loss(spy)
    assert any(seen)


def test_other_wrong_answers_fail():
    with pytest.raises(AssertionError, match="the loss is off by up to"):
        check_masked_lm_loss(lambda lo, la: by_cross_entropy(lo, la) + 0.01)
    with pytest.raises(AssertionError, match="one number"):  # per-token losses, not their mean
        check_masked_lm_loss(lambda lo, la: F.cross_entropy(
            lo.reshape(-1, lo.shape[-1]), la.reshape(-1), reduction="none"))
    with pytest.raises(AssertionError, match="raised"):  # labels −100 used as an index
        check_masked_lm_loss(lambda lo, la: -lo.log_softmax(-1)[..., la].mean())
    with pytest.raises(AssertionError, match="one number"):
        check_masked_lm_loss(lambda lo, la: "2.3")


def test_the_scaffold_passes_through():
    def scaffold(logits, labels):
        raise NotImplementedError

    with pytest.raises(NotImplementedError):
        check_masked_lm_loss(scaffold)
