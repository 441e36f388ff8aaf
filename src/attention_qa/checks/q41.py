"""The checker of q41's exercise: ``check_masked_lm_loss``."""

from __future__ import annotations

import math
from functools import partial
from typing import Callable

import torch

from attention_qa.checks.common import as_number, call_learner, close_at, computed_in, diagnose

IGNORE_INDEX = -100

MLM_LOSS_SLIPS = {
    "all_positions": (
        "the sum is divided by every position, the ignored ones (label −100) too; average "
        "over the labelled positions only"
    ),
    "per_sequence": (
        "each sequence's loss is averaged first and then the sequences: the loss is the mean "
        "over all labelled tokens, so a sequence with more of them weighs more"
    ),
    "sum": "the losses are summed; the loss is their mean over the labelled positions",
    "no_log_softmax": (
        "the logits are used as log-probabilities: take log_softmax over the vocabulary "
        "(logit − logsumexp) first"
    ),
    "perplexity": "this is the perplexity, exp(loss); return the cross-entropy itself",
    "log2": "the loss is in bits (log base 2); cross_entropy uses the natural log (nats)",
    "label_smoothing": (
        "this is the loss with label smoothing 0.1, which mixes in the mean −log p over the "
        "vocabulary; the MLM loss is the plain cross-entropy (label_smoothing=0)"
    ),
}

HALF_PRECISION = (torch.float16, torch.bfloat16)


def mlm_loss_variant(logits, labels, bug: str | None = None):
    """The mean token-level cross-entropy over the positions whose label is not −100, or one
    of the slips in ``MLM_LOSS_SLIPS``."""
    keep = labels != IGNORE_INDEX  # (..., n)
    log_probs = logits if bug == "no_log_softmax" else torch.log_softmax(logits, dim=-1)
    picked = log_probs.gather(-1, labels.clamp(min=0).unsqueeze(-1)).squeeze(-1)  # (..., n)
    if bug == "label_smoothing":  # F.cross_entropy(..., label_smoothing=0.1)
        picked = 0.9 * picked + 0.1 * log_probs.mean(-1)
    nll = torch.where(keep, -picked, torch.zeros_like(picked))  # (..., n)
    if bug == "sum":
        return nll.sum()
    if bug == "all_positions":
        return nll.sum() / nll.numel()
    if bug == "per_sequence" and logits.ndim >= 3:  # one sequence: the same as the right loss
        return (nll.sum(-1) / keep.sum(-1)).mean()
    loss = nll.sum() / keep.sum()
    if bug == "perplexity":
        return loss.exp()
    if bug == "log2":
        return loss / math.log(2)
    return loss


def _case(generator, shape, vocab, scale, ignored):
    logits = torch.randn(*shape, vocab, generator=generator, dtype=torch.float64) * scale
    labels = torch.randint(0, vocab, shape, generator=generator)
    labels[ignored] = IGNORE_INDEX
    return logits, labels


def check_masked_lm_loss(fn: Callable) -> None:
    """Check ``fn(logits, labels)`` → the mean cross-entropy over the positions whose label
    is not −100, for logits of shape (..., n, V) in float64 and int64 labels of shape
    (..., n): one sequence (n, V), a batch (B, n, V) whose sequences hold different numbers
    of labelled positions, a batch with one sequence that has none (it adds nothing to the
    mean), and two leading dimensions (2, 3, n, V); ids up to V − 1 = 49.

    The answer must be right at float32's precision: in float16 or bfloat16 the tolerance
    would be wide enough to let a slip such as label smoothing 0.1 pass, so an answer that
    went through half precision and is not right to float32's is refused, named (one whose
    half-precision step was exact, a 0/1 mask in bfloat16, passes)."""
    g = torch.Generator().manual_seed(41)
    cases = []
    logits, labels = _case(g, (7,), 50, 2.0, [0, 3])
    cases.append(("one sequence, logits (7, 50), 5 labelled positions", logits, labels))
    logits, labels = _case(g, (3, 6), 50, 3.0, ([0, 0, 0, 0, 1, 2], [0, 1, 2, 4, 5, 5]))
    cases.append(("a batch, logits (3, 6, 50), 2, 5 and 5 labelled positions",
                  logits, labels))
    logits, labels = _case(g, (3, 4), 50, 2.0, ([1, 1, 1, 1, 0, 2], [0, 1, 2, 3, 1, 0]))
    cases.append(("a batch, logits (3, 4, 50), whose middle sequence has no labelled "
                  "position", logits, labels))
    ignored = (torch.tensor([0, 0, 1, 1, 1]), torch.tensor([0, 2, 1, 1, 2]),
               torch.tensor([1, 3, 0, 4, 2]))
    logits, labels = _case(g, (2, 3, 5), 12, 1.5, ignored)
    cases.append(("logits (2, 3, 5, 12) with two leading dimensions", logits, labels))
    for case, logits, labels in cases:
        expected = mlm_loss_variant(logits, labels)
        got = as_number(call_learner(fn, case, logits.clone(), labels.clone()), case)
        half = got.dtype if got.dtype in HALF_PRECISION else computed_in()
        if half in HALF_PRECISION and not close_at(got, expected, [torch.float32]):
            raise AssertionError(
                f"on {case}, the loss was computed in {str(half).removeprefix('torch.')}; "
                "compute it in float32 or better: half precision keeps about three "
                "significant digits, too few to tell a slightly wrong loss from a right one")
        diagnose(got, expected, case, "the loss",
                 "the mean of −log softmax(logits)[label] over the labels that are not −100",
                 MLM_LOSS_SLIPS, partial(mlm_loss_variant, logits, labels))
