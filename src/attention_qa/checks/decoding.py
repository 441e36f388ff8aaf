"""Checkers for decoding: the distribution nucleus (top-p) sampling draws from (q28), and
speculative sampling's acceptance rate (q34)."""

from __future__ import annotations

from functools import partial
from typing import Callable

import torch

from attention_qa.checks.common import (
    as_real_tensor,
    call_learner,
    close,
    diagnose,
    require_shape,
)
from attention_qa.decoding import next_token_probs
from attention_qa.speculative import acceptance_rate

NUCLEUS_SLIPS = {
    "crossing_dropped": (
        "the token whose probability crosses top_p is dropped (kept only while the running "
        "sum ≤ top_p); keep it: the nucleus is the smallest set whose mass *reaches* top_p"
    ),
    "unsorted": (
        "the running sum is taken in vocabulary order; sort the probabilities from the "
        "largest down first, so that the nucleus holds the most probable tokens"
    ),
    "ascending": (
        "the probabilities are sorted from the smallest up: the nucleus must start from the "
        "most probable token (sort descending)"
    ),
    "filter_before_temperature": (
        "the nucleus is chosen from softmax(logits) and the temperature applied afterwards; "
        "divide the logits by the temperature first, then choose the nucleus"
    ),
    "no_renormalise": (
        "the kept probabilities do not sum to 1: renormalise them (a softmax over the kept "
        "logits, or divide by their sum)"
    ),
    "no_temperature": "the temperature is ignored: divide the logits by it before the softmax",
    "times_temperature": "the logits are multiplied by the temperature; divide them by it",
}


def nucleus_variant(logits, temperature, top_p, bug: str | None = None):
    scaled = logits * temperature if bug == "times_temperature" else logits / temperature
    if bug == "no_temperature":
        scaled = logits
    chooser = logits if bug == "filter_before_temperature" else scaled
    probs = torch.softmax(chooser, dim=-1)  # (..., V)
    if bug == "unsorted":
        order = torch.arange(logits.shape[-1]).expand_as(probs)
    else:
        order = probs.argsort(dim=-1, descending=(bug != "ascending"), stable=True)
    sorted_probs = probs.gather(-1, order)  # (..., V)
    cumulative = sorted_probs.cumsum(dim=-1)  # (..., V)
    if bug == "crossing_dropped":
        keep_sorted = cumulative <= top_p
        keep_sorted[..., 0] = True
    else:
        keep_sorted = (cumulative - sorted_probs) < top_p
    keep = torch.zeros_like(keep_sorted).scatter_(-1, order, keep_sorted)  # (..., V)
    final = torch.softmax(scaled, dim=-1) * keep  # (..., V)
    return final if bug == "no_renormalise" else final / final.sum(dim=-1, keepdim=True)


def check_nucleus_probs(fn: Callable) -> None:
    """Check ``fn(logits, temperature, top_p) -> probs`` (..., V): divide by the temperature,
    keep the smallest set of most probable tokens whose probability reaches top_p, and
    renormalise; compared with ``attention_qa.decoding.next_token_probs``."""
    g = torch.Generator().manual_seed(28)
    for case, shape, temperature, top_p in (
        ("logits of shape (3, 10), temperature 0.7, top_p 0.8", (3, 10), 0.7, 0.8),
        ("logits of shape (2, 4, 12), temperature 1.6, top_p 0.6", (2, 4, 12), 1.6, 0.6),
        ("logits of shape (16,), temperature 1.0, top_p 0.9", (16,), 1.0, 0.9),
    ):
        logits = torch.randn(shape, generator=g, dtype=torch.float64) * 2
        expected = next_token_probs(logits, temperature, top_p=top_p)
        got = call_learner(fn, case, logits.clone(), temperature, top_p)
        got = require_shape(got, expected.shape, case, "the probabilities")
        diagnose(
            got, expected, case, "the probabilities",
            "softmax(logits / T) restricted to the smallest top set reaching top_p, renormalised",
            NUCLEUS_SLIPS, partial(nucleus_variant, logits, temperature, top_p),
            nan_hint="a row kept no token; the most probable token must always stay",
        )


ACCEPTANCE_SLIPS = {
    "product": (
        "this is Σ p(x)·q(x), the chance that a draw from q equals an independent draw from "
        "p; speculative sampling keeps x with probability min(1, p(x)/q(x)), so α = Σ min(p, q)"
    ),
    "full_distance": (
        "this is 1 − Σ|p − q|; the total variation distance is half of Σ|p − q|, so "
        "α = 1 − ½ Σ|p − q| = Σ min(p, q)"
    ),
    "max": "this is Σ max(p, q), which exceeds 1; take the minimum of p and q",
    "mean": "this is the mean of min(p, q) over the vocabulary; sum it instead",
    "ratio": (
        "this sums min(1, p/q) over the vocabulary; weigh each token's acceptance by q(x), "
        "the chance that the draft proposes it"
    ),
}


def acceptance_variant(p, q, bug: str | None = None):
    if bug == "product":
        return (p * q).sum(-1)
    if bug == "full_distance":
        return 1 - (p - q).abs().sum(-1)
    if bug == "max":
        return torch.maximum(p, q).sum(-1)
    if bug == "mean":
        return torch.minimum(p, q).mean(-1)
    if bug == "ratio":
        return torch.clamp(p / q, max=1).sum(-1)
    return torch.minimum(p, q).sum(-1)


# Rows with zeros, as temperature 0, top-k and top-p make them: each case is a row of p and
# a row of q over three tokens, with its α.
EDGE_ROWS = (
    ("a one-hot target (temperature 0)", (0.0, 1.0, 0.0), (0.0, 0.7, 0.3)),  # α = 0.7
    ("a one-hot draft (a greedy draft)", (0.6, 0.3, 0.1), (1.0, 0.0, 0.0)),  # α = 0.6
    ("p equal to q, with a zero", (0.2, 0.8, 0.0), (0.2, 0.8, 0.0)),  # α = 1
    ("disjoint supports", (0.5, 0.5, 0.0), (0.0, 0.0, 1.0)),  # α = 0
    ("two one-hot rows that disagree", (1.0, 0.0, 0.0), (0.0, 1.0, 0.0)),  # α = 0
)
EDGE_CASE = "p, q of shape (5, 3), rows with zeros (one-hot, equal, disjoint)"
ZERO_HINT = (
    "where q(x) = 0, p(x)/q(x) is 0/0 = NaN (or p(x)/0 = inf); a token the draft never "
    "proposes adds nothing to α, so use Σ min(p, q), which needs no division"
)




def check_acceptance_rate(fn: Callable) -> None:
    """Check ``fn(p, q) -> alpha``: p, q of shape (..., V), each row a distribution; alpha
    (...) the probability that speculative sampling keeps a token drawn from q, compared
    with ``attention_qa.speculative.acceptance_rate``.

    The checker passes float64 tensors: random softmax rows of shapes (12,), (3, 5) and
    (2, 4, 8), all positive, then ``EDGE_ROWS``, five rows with zeros. The answer may be a
    tensor, a NumPy array or (for a single row) a number, in any floating dtype, right to
    that dtype's precision; shape (...), with no trailing 1."""
    g = torch.Generator().manual_seed(34)
    cases = []
    for case, shape in (("p, q of shape (12,)", (12,)), ("p, q of shape (3, 5)", (3, 5)),
                        ("p, q of shape (2, 4, 8)", (2, 4, 8))):
        p = torch.softmax(torch.randn(shape, generator=g, dtype=torch.float64) * 1.5, -1)
        q = torch.softmax(torch.randn(shape, generator=g, dtype=torch.float64) * 1.5, -1)
        cases.append((case, p, q))
    cases.append((EDGE_CASE, torch.tensor([r[1] for r in EDGE_ROWS], dtype=torch.float64),
                  torch.tensor([r[2] for r in EDGE_ROWS], dtype=torch.float64)))
    for case, p, q in cases:
        expected = acceptance_rate(p, q)
        got = as_real_tensor(call_learner(fn, case, p.clone(), q.clone()), case)
        if got.shape == (*expected.shape, 1):
            raise AssertionError(f"on {case}, alpha has shape {tuple(got.shape)} but should "
                                 f"be {tuple(expected.shape)}: sum over the last dim without "
                                 f"keepdim")
        got = require_shape(got, expected.shape, case, "alpha")
        if case == EDGE_CASE and not close(got, expected):
            bad = [i for i in range(len(EDGE_ROWS))
                   if not close(got[i:i + 1], expected[i:i + 1])]
            if bad and not torch.isfinite(got).all():
                raise AssertionError(f"on {case}, α is NaN or inf for {EDGE_ROWS[bad[0]][0]}: "
                                     f"{ZERO_HINT}")
            if bad:
                row = bad[0]
                raise AssertionError(
                    f"on {case}, for {EDGE_ROWS[row][0]} (p = {list(EDGE_ROWS[row][1])}, "
                    f"q = {list(EDGE_ROWS[row][2])}) α is {got[row].item():.4g}, expected "
                    f"{expected[row].item():.4g} = Σ_x min(p(x), q(x))")
        diagnose(got, expected, case, "alpha", "Σ_x min(p(x), q(x))", ACCEPTANCE_SLIPS,
                 partial(acceptance_variant, p, q), nan_hint=ZERO_HINT)
