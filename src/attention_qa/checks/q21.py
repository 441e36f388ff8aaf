"""The checker of q21's exercise: ``check_online_softmax``."""

from __future__ import annotations

from functools import partial
from typing import Callable

import numpy as np
import torch

from attention_qa.checks.common import call_learner, diagnose, require_shape
from attention_qa.checks.watch import COVER, BlockReads


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


def _as_stat(x, shape: tuple, case: str, what: str) -> torch.Tensor:
    """One running statistic as a tensor of ``shape`` (a trailing dim of 1 is dropped)."""
    if isinstance(x, (int, float)):
        x = torch.tensor(float(x), dtype=torch.float64)
    if isinstance(x, (np.ndarray, np.floating)) and np.asarray(x).dtype.kind == "f":
        x = torch.from_numpy(np.array(x))
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
    1 is also accepted; for a 1-D row a Python float too; NumPy arrays too, when PyTorch did
    the folding, since only its calls are watched). A two-pass softmax, which knows
    the whole row's max from the start, gets the trace wrong; one that recomputes max and sum
    over the prefix read so far gets it right, so the checker also watches the learner's
    PyTorch calls (``watch.BlockReads``): no reduction over the last dim (max, sum, logsumexp,
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
        setattr(given, COVER, given.shape[-1])
        watch = BlockReads(block_size)
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
        if watch.unseen(got):
            # NumPy's or Python's work is invisible to the watch
            raise AssertionError(
                f"on {case}, the numbers are right, but some of what you returned was not "
                "computed by PyTorch from the scores (it was made in NumPy or from Python "
                "numbers), where the checker cannot see how many scores each step reads. "
                "Compute M, L and the result with torch operations (a NumPy array taken out "
                "of such a tensor at the end is fine)")
        found = watch.found_in(got)
        if found is not None and too_wide is None:
            too_wide = (case, block_size, scores.shape[-1], *found)
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
    # A prefix re-read one column at a time makes no wide reduction, but its calls grow with
    # blocks × prefix: count the PyTorch calls at m = 32 and m = 64 (block 4); reading each
    # block once, they about double.
    calls = []
    for m in (32, 64):
        scores = torch.randn(2, m, generator=g, dtype=torch.float64)
        case = f"scores of shape (2, {m}), block_size 4"
        given = scores.clone()
        setattr(given, COVER, m)
        watch = BlockReads(4)
        with watch:
            got = call_learner(fn, case, given, 4, passthrough=(AssertionError,))
        result = require_shape(got[0], scores.shape, case, "the softmax")
        diagnose(result, online_softmax_variant(scores, 4), case, "the result", "softmax")
        calls.append(watch.calls)
    if calls[1] > 3 * calls[0]:
        raise AssertionError(
            f"the numbers are right, but your function's PyTorch calls grow with the blocks "
            f"times the entries read so far: {calls[0]:,} calls for scores of shape (2, 32) "
            f"and {calls[1]:,} for (2, 64), block_size 4 (reading each block once: about "
            "twice as many). It re-reads the prefix, a column at a time. Fold each block "
            "into M and L once")
