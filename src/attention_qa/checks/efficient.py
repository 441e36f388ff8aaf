"""Checkers for efficient attention and head analysis: linear attention (q20), online softmax
(q21), previous-token score (q22).
"""

from __future__ import annotations

from contextlib import nullcontext
from functools import partial
from typing import Callable

import torch
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode

from attention_qa.checks.common import call_learner, diagnose, require_shape

# --- check_linear_attention, check_online_softmax, check_previous_token_score (q20–q22) -----


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


def _tensors(x):
    """The tensors in an op's output (a tensor, or tuples and lists of them)."""
    if isinstance(x, torch.Tensor):
        yield x
    elif isinstance(x, (tuple, list)):
        for item in x:
            yield from _tensors(item)


class _NoScoreMatrix(TorchDispatchMode):
    """Notes the first tensor any ATen op computes with a dimension of n and one of m.

    The dispatch level sees every intermediate, also those inside ``einsum`` and ``matmul``;
    n and m are chosen unlike every size built from the case's others, so such a tensor can
    only be an n × m matrix or hold one, as an (n, m, d_k) broadcast product does.
    """

    def __init__(self, n: int, m: int):
        super().__init__()
        self.n, self.m, self.found = n, m, None

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if self.found is None:
            for t in _tensors(out):
                if self.n in t.shape and self.m in t.shape:
                    self.found = (tuple(t.shape), func.overloadpacket.__name__)
                    break
        return out


def check_linear_attention(fn: Callable) -> None:
    """Check ``fn(q, k, v)`` against non-causal linear attention with φ(x) = elu(x) + 1.

    q: (..., n, d_k), k: (..., m, d_k), v: (..., m, d_v) → (..., n, d_v)
    (``attention_qa.efficient.linear_attention``, Katharopoulos et al., 2020). On the last
    case, q (2, 37, 4), k (2, 29, 4), v (2, 29, 3), every tensor PyTorch computes during the
    call is watched: n = 37 and m = 29 are primes far above every size built from
    B, d_k and d_v, so a tensor with a dimension of n and one of m holds an n × m matrix,
    which the grouping φ(Q) (φ(K)ᵀ V) never builds; it fails the check once the values are
    right.
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
        watch = _NoScoreMatrix(n, m)
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


def online_softmax_trace_variant(scores, block_size: int, bug: str | None = None):
    """Block-by-block softmax over the last dim and its trace, or with one known slip on.

    Returns ``(result, trace)``: ``trace[i]`` is ``(M, L)`` after block i, each of shape
    ``scores.shape[:-1]``, with M the max so far and L = Σ_seen exp(s − M).
    """
    m = scores.shape[-1]
    run_max = scores.new_full((*scores.shape[:-1], 1), float("-inf"))
    run_sum = scores.new_zeros((*scores.shape[:-1], 1))
    trace = []
    if bug == "two_pass":  # the whole row's max and sum, whatever the block
        run_max = scores.amax(dim=-1, keepdim=True)
        run_sum = torch.exp(scores - run_max).sum(dim=-1, keepdim=True)
        trace = [(run_max[..., 0], run_sum[..., 0])] * -(-m // block_size)
        return torch.exp(scores - run_max) / run_sum, trace
    for start in range(0, m, block_size):
        block = scores[..., start : start + block_size]
        new_max = torch.maximum(run_max, block.amax(dim=-1, keepdim=True))
        fresh = torch.exp(block - new_max).sum(dim=-1, keepdim=True)
        if bug == "no_rescale":
            run_sum = run_sum + fresh
        elif bug == "last_block_only":
            run_sum = fresh
        else:
            run_sum = run_sum * torch.exp(run_max - new_max) + fresh
        run_max = new_max
        trace.append((run_max[..., 0], run_sum[..., 0]))
    return torch.exp(scores - run_max) / run_sum, trace


def online_softmax_variant(scores, block_size: int, bug: str | None = None):
    """Block-by-block softmax over the last dim, or with one known slip switched on."""
    return online_softmax_trace_variant(scores, block_size, bug)[0]


ONLINE_SLIPS = {
    "no_rescale": (
        "the running sum is not rescaled when the max grows: multiply it by "
        "exp(old max − new max) before adding the new block's exponentials"
    ),
    "last_block_only": (
        "the sum keeps only the last block: add each block's exponentials to the running sum "
        "instead of replacing it"
    ),
    "two_pass": (
        "the trace holds the whole row's max and sum after every block: that is a two-pass "
        "softmax. After block i, M and L must cover only the entries read so far"
    ),
}

_FORBIDDEN = (
    (torch, "softmax"),
    (torch, "log_softmax"),
    (torch.nn.functional, "softmax"),
    (torch.nn.functional, "log_softmax"),
    (torch.Tensor, "softmax"),
    (torch.Tensor, "log_softmax"),
    (torch.special, "softmax"),
    (torch.special, "log_softmax"),
)


# Reductions (and matrix products, which sum too) whose dim is read as below; for the
# matrix products the contracted dim is the last of the first operand.
_DIM_AT_1 = {"amax", "amin", "max", "min", "sum", "nansum", "mean", "logsumexp", "cumsum",
             "cumprod", "cummax", "cummin", "logcumsumexp", "prod", "argmax", "argmin",
             "median", "nanmedian", "sort", "aminmax"}
_DIM_AT_2 = {"topk", "kthvalue"}
_LAST_BY_DEFAULT = {"sort", "topk", "kthvalue"}
_PRODUCTS = {"matmul", "__matmul__", "mm", "mv", "bmm", "dot", "inner", "vdot", "vecdot"}
_COVER = "_online_softmax_columns"  # on a tensor: how many score columns its last dim spans


def _reduces_last_dim(name: str, args: tuple, kwargs: dict, x: torch.Tensor) -> bool:
    """Whether a call of the reduction ``name`` on ``x`` folds x's last dim."""
    if name in _PRODUCTS:
        return True
    if "dim" in kwargs or "axis" in kwargs:
        dim = kwargs.get("dim", kwargs.get("axis"))
    else:
        at = 2 if name in _DIM_AT_2 else 1
        dim = args[at] if len(args) > at else None
        if isinstance(dim, torch.Tensor):  # torch.max(a, b): elementwise, no reduction
            return False
        if dim is None and name in _LAST_BY_DEFAULT:
            dim = -1
    if dim is None:
        return True
    dims = dim if isinstance(dim, (tuple, list)) else (dim,)
    return any(d % max(x.ndim, 1) == x.ndim - 1 for d in dims if isinstance(d, int))


class _BlockReads(TorchFunctionMode):
    """Watches every PyTorch call the learner makes for a reduction over too many scores.

    Each tensor carries the number of score columns its last dim spans: the scores all m,
    a slice ``scores[..., a:b]`` b − a, and the output of an elementwise op the span of its
    widest input (``exp(block − M)`` spans the block). A reduction's output spans nothing.
    A reduction over the last dim of a tensor spanning more than ``block_size`` columns
    (a max or sum over the whole row, or over the prefix read so far) is noted: an online
    softmax only ever folds one block into M and L. Values taken out of tensors (``tolist``,
    ``item``) are not followed.
    """

    def __init__(self, block_size: int):
        super().__init__()
        self.block_size, self.found = block_size, None

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = getattr(func, "__name__", "")
        if "softmax" in name:
            raise AssertionError(
                "your function calls softmax: compute the running max and sum block by block"
            )
        out = func(*args, **kwargs)
        inputs = list(_tensors(list(args) + list(kwargs.values())))
        span = max((getattr(t, _COVER, 0) for t in inputs), default=0)
        if name in _DIM_AT_1 | _DIM_AT_2 | _PRODUCTS:
            first = args[0] if args and isinstance(args[0], torch.Tensor) else None
            wide = [t for t in ((first,) if name not in {"dot", "inner", "vdot"} else inputs)
                    if t is not None and getattr(t, _COVER, 0) > self.block_size]
            if self.found is None and wide and _reduces_last_dim(name, args, kwargs, wide[0]):
                self.found = (name, getattr(wide[0], _COVER))
        elif span and not (name.startswith("new_") or name.endswith("_like")):
            for t in _tensors(out):
                # a last dim of stride 1 is still the scores' last dim (not a transpose,
                # not scores[..., j] with the column indexed away)
                if t.ndim >= 1 and (t.shape[-1] == 1 or t.stride(-1) == 1):
                    setattr(t, _COVER, t.shape[-1])
        return out


def _as_stat(x, shape: tuple, case: str, what: str) -> torch.Tensor:
    """One running statistic as a tensor of ``shape`` (a trailing dim of 1 is dropped)."""
    if isinstance(x, (int, float)):
        x = torch.tensor(float(x), dtype=torch.float64)
    if not isinstance(x, torch.Tensor):
        raise AssertionError(f"on {case}, {what} should be a tensor, got {type(x).__name__}")
    if tuple(x.shape) == (*shape, 1):
        x = x[..., 0]
    if tuple(x.shape) != tuple(shape):
        raise AssertionError(
            f"on {case}, {what} has shape {tuple(x.shape)} but should be {tuple(shape)} "
            f"(or {(*shape, 1)})"
        )
    return x


def check_online_softmax(fn: Callable) -> None:
    """Check ``fn(scores, block_size) -> (result, trace)``: an online softmax and its trace.

    ``result`` must equal ``torch.softmax(scores, dim=-1)``. ``trace`` must be a list (or
    tuple) with one ``(M, L)`` pair per block, ⌈m / block_size⌉ of them, in the order the
    blocks are read: after block i, M is the max of the entries read so far and
    L = Σ_seen exp(s − M), each a tensor of shape ``scores.shape[:-1]`` (a trailing dim of
    1 is also accepted; for a 1-D row a Python float too). A two-pass softmax, which knows
    the whole row's max from the start, gets the trace wrong; one that recomputes max and sum
    over the prefix read so far gets it right, so the checker also watches the learner's
    PyTorch calls (``_BlockReads``): no reduction over the last dim (max, sum, logsumexp,
    cumulative ops, matrix products …) may span more than ``block_size`` score columns.
    Cases: shapes (m,), (n, m), (B, n, m); block sizes that do and do not divide m, of 1 and
    larger than m; scores too large for a plain exp. Any float dtype is accepted, at its
    precision. The checker disables every softmax and log_softmax function while it runs.
    """
    from contextlib import ExitStack
    from unittest import mock

    g = torch.Generator().manual_seed(21)
    big = torch.randn(3, 9, generator=g, dtype=torch.float64) * 500
    rising = torch.arange(10, dtype=torch.float64) * 3  # the max keeps moving to later blocks
    cases = [
        ("scores of shape (7,), block_size 2", torch.randn(7, generator=g, dtype=torch.float64), 2),
        ("rising scores 0, 3, …, 27, block_size 3", rising, 3),
        ("rising scores 0, 3, …, 27, block_size 4", rising, 4),
        (
            "scores of shape (2, 3, 8), block_size 4",
            torch.randn(2, 3, 8, generator=g, dtype=torch.float64),
            4,
        ),
        (
            "scores of shape (4, 5), block_size 1",
            torch.randn(4, 5, generator=g, dtype=torch.float64),
            1,
        ),
        (
            "scores of shape (3, 11), block_size 3",
            torch.randn(3, 11, generator=g, dtype=torch.float64) * 4,
            3,
        ),
        ("scores of shape (3, 9) as large as ±1500, block_size 4", big, 4),
        (
            "scores of shape (2, 6), block_size 10 (one block)",
            torch.randn(2, 6, generator=g, dtype=torch.float64),
            10,
        ),
    ]

    def forbidden(*args, **kwargs):
        raise AssertionError(
            "your function calls softmax: compute the running max and sum block by block"
        )

    too_wide = None  # the first reduction over more than one block: (case, …, op, columns)
    for case, scores, block_size in cases:
        expected, expected_trace = online_softmax_trace_variant(scores, block_size)
        given = scores.clone()
        setattr(given, _COVER, given.shape[-1])
        watch = _BlockReads(block_size)
        with ExitStack() as stack:
            for owner, name in _FORBIDDEN:
                if hasattr(owner, name):
                    stack.enter_context(mock.patch.object(owner, name, forbidden))
            stack.enter_context(watch)
            # the AssertionError of a forbidden softmax call reaches the learner as it is
            got = call_learner(fn, case, given, block_size, passthrough=(AssertionError,))
        if not (isinstance(got, (tuple, list)) and len(got) == 2):
            raise AssertionError(
                f"on {case}, return a pair (result, trace), where trace lists (M, L) after "
                f"each block; got {type(got).__name__}"
            )
        result, trace = got
        result = require_shape(result, expected.shape, case, "the softmax")
        if not torch.isfinite(result).all():
            raise AssertionError(
                f"on {case}, the result has inf or NaN: exp overflowed. Subtract the running "
                "max before exponentiating"
            )
        diagnose(
            result, expected, case, "the result", "softmax",
            ONLINE_SLIPS, partial(online_softmax_variant, scores, block_size),
        )
        if not isinstance(trace, (tuple, list)):
            raise AssertionError(
                f"on {case}, the trace should be a list of (M, L) pairs, one per block; "
                f"got {type(trace).__name__}"
            )
        if len(trace) != len(expected_trace):
            raise AssertionError(
                f"on {case}, the trace has {len(trace)} entries but should have "
                f"{len(expected_trace)}: one (M, L) pair after each block of {block_size} "
                f"(the last block may be shorter)"
            )
        lead = tuple(scores.shape[:-1])
        for i, (pair, (exp_max, exp_sum)) in enumerate(zip(trace, expected_trace, strict=True)):
            if not (isinstance(pair, (tuple, list)) and len(pair) == 2):
                raise AssertionError(f"on {case}, trace entry {i} should be a pair (M, L)")
            at = f"{case}, after block {i}"
            run_max = _as_stat(pair[0], lead, case, f"M after block {i}")
            run_sum = _as_stat(pair[1], lead, case, f"L after block {i}")

            def slip(bug, i=i, which=0, scores=scores, block_size=block_size):
                return online_softmax_trace_variant(scores, block_size, bug)[1][i][which]

            diagnose(run_max, exp_max, at, "the running max M", "the max of the entries "
                     "read so far", {"two_pass": ONLINE_SLIPS["two_pass"]}, slip)
            diagnose(run_sum, exp_sum, at, "the running sum L", "Σ_seen exp(s − M)",
                     ONLINE_SLIPS, partial(slip, which=1))
        if watch.found is not None and too_wide is None:
            too_wide = (case, block_size, scores.shape[-1], *watch.found)
    # after every case's numbers, so that a numeric slip is named first
    if too_wide is not None:
        case, block_size, m, op, columns = too_wide
        whole = "the whole row" if columns == m else "the entries read so far"
        raise AssertionError(
            f"on {case}, the numbers are right, but your function applied {op} over the "
            f"last dim of {columns} scores at once, more than one block of {block_size}: "
            f"that recomputes over {whole} instead of reading each block once. Fold "
            "each block into M and L, rescaling L by exp(old M − new M), and write the "
            "result as exp(s − M) / L with the final M and L"
        )


PREVIOUS_TOKEN_SLIPS = {
    "self": "this is the weight on the token itself, w[i, i]: the previous token is w[i, i − 1]",
    "next": (
        "this is the weight on the next token, w[i, i + 1] (rows and columns swapped): "
        "query i is row i, and its previous token is column i − 1"
    ),
    "divide_by_n": (
        "the mean counts query 0, which has no previous token: average over the n − 1 "
        "queries i = 1 … n − 1"
    ),
}


def previous_token_variant(weights, bug: str | None = None):
    n = weights.shape[-1]
    if bug == "self":
        return weights.diagonal(dim1=-2, dim2=-1).mean(dim=-1)
    if bug == "next":
        return weights.diagonal(offset=1, dim1=-2, dim2=-1).mean(dim=-1)
    sub = weights.diagonal(offset=-1, dim1=-2, dim2=-1)  # (..., n − 1)
    return sub.sum(dim=-1) / n if bug == "divide_by_n" else sub.mean(dim=-1)


def check_previous_token_score(fn: Callable) -> None:
    """Check ``fn(weights)``: (..., n, n) maps → (...) mean over i ≥ 1 of w[i, i − 1]."""
    g = torch.Generator().manual_seed(22)

    def maps(*shape):
        return torch.softmax(torch.randn(*shape, generator=g, dtype=torch.float64), dim=-1)

    shift = torch.zeros(5, 5, dtype=torch.float64)
    shift[0, 0] = 1.0
    shift[torch.arange(1, 5), torch.arange(4)] = 1.0  # a perfect previous-token head
    cases = [
        ("one map of shape (6, 6)", maps(6, 6)),
        ("a perfect previous-token head of shape (5, 5)", shift),
        ("maps of shape (2, 3, 4, 4)", maps(2, 3, 4, 4)),
    ]
    for case, weights in cases:
        expected = previous_token_variant(weights)
        got = call_learner(fn, case, weights.clone())
        if isinstance(got, float) and expected.ndim == 0:
            got = torch.tensor(got, dtype=torch.float64)
        got = require_shape(got, expected.shape, case, "the score")
        diagnose(
            got, expected, case, "the score", "the mean of w[i, i − 1]",
            PREVIOUS_TOKEN_SLIPS, partial(previous_token_variant, weights),
        )
