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
@pytest.mark.parametrize("form", ["tensor", "numpy", "float", "list", "float32", "float16"])
def test_right_answers_pass_in_every_form(right, form):
    def learner(logits, labels):
        if form in ("float32", "float16") and right is not by_numpy:
            logits = logits.to(getattr(torch, form))
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


def test_other_wrong_answers_fail():
    with pytest.raises(AssertionError, match="off by up to"):
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
