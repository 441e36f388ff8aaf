"""The checker of q20's exercise: ``check_linear_attention``."""

from __future__ import annotations

from contextlib import nullcontext
from functools import partial
from typing import Callable

import torch

from attention_qa.checks.common import call_learner, diagnose, require_shape
from attention_qa.checks.watch import NoScoreMatrix, Work


def linear_attention_variant(q, k, v, bug: str | None = None):
    """Non-causal linear attention with φ = elu + 1, or with one known slip switched on."""
    import torch.nn.functional as F

    if bug == "softmax":
        return torch.softmax(q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5, dim=-1) @ v
    if bug == "scaled_q":
        q = q / q.shape[-1] ** 0.5
    plus = 0.0 if bug == "no_plus_one" else 1.0
    phi_q, phi_k = F.elu(q) + plus, F.elu(k) + plus  # (..., n, d_k), (..., m, d_k)
    out = phi_q @ (phi_k.transpose(-2, -1) @ v)  # (..., n, d_v)
    if bug == "no_normalisation":
        return out
    den = phi_q @ phi_k.sum(dim=-2).unsqueeze(-1)  # (..., n, 1)
    return out / den


LINEAR_SLIPS = {
    "no_normalisation": (
        "the output is not normalised: divide φ(q_i)ᵀ(Σ_j φ(k_j) v_jᵀ) by φ(q_i)ᵀ Σ_j φ(k_j), "
        "so that the weights of each query sum to 1"
    ),
    "no_plus_one": (
        "the feature map is elu(x), not elu(x) + 1: without the + 1 features can be negative, "
        "and so can the weights and the denominator"
    ),
    "scaled_q": (
        "q is divided by √d_k: linear attention has no softmax to temper, so φ is applied to "
        "q and k as they are"
    ),
    "softmax": (
        "this is softmax attention, not linear attention: replace exp(q·k/√d_k) by "
        "φ(q)·φ(k) with φ = elu + 1 and group the product as φ(Q) (φ(K)ᵀ V)"
    ),
}


def check_linear_attention(fn: Callable) -> None:
    """Check ``fn(q, k, v)`` against non-causal linear attention with φ(x) = elu(x) + 1.

    q: (..., n, d_k), k: (..., m, d_k), v: (..., m, d_v) → (..., n, d_v)
    (``attention_qa.efficient.linear_attention``, Katharopoulos et al., 2020). On the last
    case, q (2, 37, 4), k (2, 29, 4), v (2, 29, 3), every tensor PyTorch computes during the
    call is watched: n = 37 and m = 29 are primes far above every size built from
    B, d_k and d_v, so a tensor with a dimension of n and one of m holds an n × m matrix,
    which the grouping φ(Q) (φ(K)ᵀ V) never builds; it fails the check once the values are
    right. The work is counted at two sizes (``watch.Work``), so only PyTorch's calls are
    seen: an answer PyTorch computed fewer numbers for than it holds (its work done in
    NumPy or plain Python) is refused.
    """
    g = torch.Generator().manual_seed(20)
    shapes = [
        ("q (4, 8), k (4, 8), v (4, 8)", (4, 8), (4, 8), (4, 8)),
        ("q (2, 3, 4), k (2, 6, 4), v (2, 6, 5)", (2, 3, 4), (2, 6, 4), (2, 6, 5)),
        (
            "q (1, 2, 5, 16), k (1, 2, 9, 16), v (1, 2, 9, 3)",
            (1, 2, 5, 16),
            (1, 2, 9, 16),
            (1, 2, 9, 3),
        ),
    ]
    watched_case = ("q (2, 37, 4), k (2, 29, 4), v (2, 29, 3)", (2, 37, 4), (2, 29, 4), (2, 29, 3))
    for case, qs, ks, vs in [*shapes, watched_case]:
        q, k, v = (torch.randn(s, generator=g, dtype=torch.float64) for s in (qs, ks, vs))
        expected = linear_attention_variant(q, k, v)
        n, m = q.shape[-2], k.shape[-2]
        watch = NoScoreMatrix(n, m)
        with watch if case == watched_case[0] else nullcontext():
            got = call_learner(fn, case, q.clone(), k.clone(), v.clone())
        got = require_shape(got, expected.shape, case, "the output")
        diagnose(
            got, expected, case, "the output", "linear attention with φ = elu + 1",
            LINEAR_SLIPS, partial(linear_attention_variant, q, k, v),
        )
        if watch.found is not None:
            shape, op = watch.found
            raise AssertionError(
                f"on {case}, the values are right but your function built a tensor of shape "
                f"{shape} ({op}), with n = {n} queries by m = {m} keys: that is the n × m "
                "matrix linear attention exists to avoid. Compute φ(K)ᵀ V, (d_k, d_v), and "
                "Σ_j φ(k_j) first, then multiply φ(Q) by them"
            )
    # The cost itself: the n × m weights built a query or a chunk of queries at a time never
    # show as one n × m tensor, but the work they take grows with n·m. Run the learner on
    # one case and on one with n and m doubled, counting every number its ops compute.
    work = []
    for n, m in ((64, 48), (128, 96)):
        q, k, v = (torch.randn(s, generator=g, dtype=torch.float64)
                   for s in ((1, n, 4), (1, m, 4), (1, m, 3)))
        case = f"q (1, {n}, 4), k (1, {m}, 4), v (1, {m}, 3)"
        with Work() as counted:
            got = call_learner(fn, case, q.clone(), k.clone(), v.clone())
        got = require_shape(got, (1, n, 3), case, "the output")
        diagnose(got, linear_attention_variant(q, k, v), case, "the output",
                 "linear attention with φ = elu + 1")
        if counted.computed < got.numel():
            # PyTorch computed fewer numbers than the answer holds: the work was done
            # elsewhere (NumPy, plain Python), where neither the n × m watch nor this count
            # can see it
            raise AssertionError(
                f"on {case}, the values are right, but PyTorch computed only "
                f"{counted.computed:,} numbers for an answer of {got.numel():,}: the work was "
                "done outside torch (in NumPy or plain Python), where the checker cannot see "
                "whether it builds the n × m weights. Compute it with torch operations")
        work.append(counted)
    growth = work[1].elements / max(work[0].elements, 1)
    if growth > 3:
        raise AssertionError(
            f"the values are right, but the work grows with n·m: with n and m doubled "
            f"(q (1, 64, 4), k (1, 48, 4) → q (1, 128, 4), k (1, 96, 4)) your function "
            f"computed {growth:.1f}× as many numbers ({work[0].elements:,} → "
            f"{work[1].elements:,}; linear attention: about 2×). It still scores every query "
            f"against every key, a query or a chunk of queries at a time. Compute φ(K)ᵀ V "
            f"and Σ_j φ(k_j) once, then multiply φ(Q) by them"
        )
