"""The checker of q34's exercise: ``check_acceptance_rate``."""

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
from attention_qa.speculative import acceptance_rate

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
