"""The checker of q46's exercise: ``check_glm_positions``."""

from __future__ import annotations

from typing import Callable

import torch

from attention_qa.checks.common import as_answer, call_learner, require_shape


def glm_positions_variant(n: int, spans, order=None, bug: str | None = None) -> torch.Tensor:
    """GLM's 2-D positions (Du et al., 2022, §2.2 and Figure 2) as a (2, N) int64 tensor:
    row 0 the position ids, row 1 the block position ids, over part A (``n`` tokens with each
    span replaced by one [MASK]) then part B (each span in ``order``: [START] and its tokens),
    with one known slip switched on."""
    order = list(range(len(spans))) if order is None else list(order)
    if bug == "spans_in_text_order":
        order = sorted(order)
    masks, part_a, cursor = [], 0, 0
    for start, end in spans:
        part_a += start - cursor
        masks.append(part_a)  # the position of this span's [MASK] in part A
        part_a += 1
        cursor = end
    part_a += n - cursor
    positions, blocks = list(range(part_a)), [0] * part_a
    if bug == "original_positions":  # part A counted as in the uncorrupted text
        positions, masks = [], []
        for p in range(n):
            inside = [s for s, e in spans if s <= p < e]
            if not inside:
                positions.append(p)
            elif p == inside[0]:
                masks.append(p)
                positions.append(p)
    for i in order:
        start, end = spans[i]
        length = end - start + 1  # [START] and the span's tokens
        if bug == "continue_counting":  # part B carries on after part A
            positions += list(range(len(positions), len(positions) + length))
        elif bug == "original_start":  # the span's start in the text, not its [MASK]'s
            positions += [start] * length
        else:
            positions += [masks[i]] * length
        first = 0 if bug == "blocks_from_zero" else 1
        blocks += list(range(first, first + length))
    out = torch.tensor([positions, blocks], dtype=torch.int64)  # (2, N)
    if bug == "one_based":  # Figure 2 prints the position ids from 1
        out[0] += 1
    return out.flip(0) if bug == "rows_swapped" else out


GLM_POSITIONS_SLIPS = {
    "rows_swapped": ("the two rows are swapped: row 0 is the position id (where the token "
                     "sits in part A), row 1 the block position id (its place within its span)"),
    "continue_counting": (
        "part B's position ids carry on counting after part A: every token of a span takes "
        "the position of that span's [MASK] in part A, so the model does not learn how long "
        "the span is"
    ),
    "blocks_from_zero": (
        "the block position ids of part B start at 0: 0 marks part A; within a span they "
        "count 1, 2, … from its [START] token"
    ),
    "spans_in_text_order": (
        "part B follows the spans in text order: it must follow ``order`` (GLM shuffles the "
        "spans, §2.1)"
    ),
    "one_based": (
        "the position ids count from 1, as Figure 2 of the paper prints them: count them "
        "from 0, as the exercise asks (the first token has position id 0)"
    ),
    "original_start": (
        "part B's position ids are each span's start in the original text: a span's tokens "
        "take the position of its [MASK] in part A, which is smaller once an earlier span "
        "has shrunk to one [MASK]"
    ),
    "original_positions": (
        "part A's position ids count the original text: they count the corrupted text, where "
        "a whole span is one [MASK] token"
    ),
}

CASES = (  # (n, spans, order): Figure 2, one span, spans at the ends, spans side by side
    (6, [(2, 3), (4, 6)], [1, 0]),
    (5, [(1, 4)], [0]),
    (12, [(0, 2), (5, 6), (9, 12)], [2, 0, 1]),
    (9, [(2, 4), (4, 7)], [0, 1]),
    (14, [(1, 2), (3, 7), (10, 11), (12, 13)], [3, 1, 0, 2]),
)


def check_glm_positions(fn: Callable) -> None:
    """Check ``fn(n, spans, order) -> (2, N)``: GLM's position ids (row 0) and block
    position ids (row 1) for ``n`` tokens whose ``spans`` ((start, end), end exclusive)
    are blanked, part B in ``order``. Any integer form is accepted (a tensor, a NumPy
    array, a pair of lists)."""
    for n, spans, order in CASES:
        case = f"n = {n}, spans = {spans}, order = {order}"
        expected = glm_positions_variant(n, spans, order)
        result = call_learner(fn, case, n, [tuple(s) for s in spans], list(order))
        got = as_answer(result, case, "the answer")
        if got.ndim == 2 and tuple(got.shape) == tuple(expected.shape[::-1]):
            raise AssertionError(
                f"on {case}, the answer has shape {tuple(got.shape)}: return the two "
                f"rows, shape {tuple(expected.shape)} (stack them with dim=0)")
        got = require_shape(got, tuple(expected.shape), case, "the answer")
        if got.is_floating_point() or got.dtype == torch.bool:
            if got.dtype != torch.bool and torch.equal(got.to(torch.int64).to(got.dtype), got) \
                    and torch.equal(got.to(torch.int64), expected):
                raise AssertionError(
                    f"on {case}, the positions are right but their dtype is {got.dtype}: "
                    f"position ids index an embedding table, so keep them integers "
                    f"(torch.long)")
            raise AssertionError(f"on {case}, the positions should be integers, got "
                                 f"dtype {got.dtype}")
        got = got.to(torch.int64)
        if torch.equal(got, expected):
            continue
        for bug, message in GLM_POSITIONS_SLIPS.items():
            wrong = glm_positions_variant(n, spans, order, bug)
            if wrong.shape == expected.shape and not torch.equal(wrong, expected) \
                    and torch.equal(got, wrong):
                raise AssertionError(f"on {case}, {message}")
        row, col = (got != expected).nonzero()[0].tolist()
        what = ("position id", "block position id")[row]
        raise AssertionError(
            f"on {case}, the {what} of token {col} should be {int(expected[row, col])}, "
            f"got {int(got[row, col])}")
