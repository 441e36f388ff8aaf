"""The checker of q42's exercise: ``check_xl_attention_mask``."""

from __future__ import annotations

from typing import Callable

import torch

from attention_qa.checks.common import as_answer, call_learner, require_shape


def xl_mask_variant(segment_len: int, memory_len: int, bug: str | None = None):
    """Transformer-XL's (L, M + L) mask over [memory, segment], True = may attend, with one
    known slip switched on."""
    i = torch.arange(segment_len).unsqueeze(1)  # (L, 1)
    j = torch.arange(memory_len + segment_len).unsqueeze(0)  # (1, M + L)
    if bug == "no_offset":  # causal over the concatenation, as if queries started at key 0
        mask = j <= i
    elif bug == "no_memory":
        mask = (j >= memory_len) & (j <= memory_len + i)
    elif bug == "not_causal":
        mask = torch.ones(segment_len, memory_len + segment_len, dtype=torch.bool)
    elif bug == "strict":  # a query does not see its own key
        mask = j < memory_len + i
    elif bug == "memory_after":  # [segment, memory]: the segment's keys first
        mask = (j <= i) | (j >= segment_len)
    elif bug == "masked_unshifted":  # triu(ones, diagonal=memory_len), not negated
        mask = j >= memory_len + i
    else:
        mask = j <= memory_len + i
    return ~mask if bug == "inverted" else mask


XL_MASK_SLIPS = {
    "inverted": "the mask is inverted: True must mean may attend",
    "no_offset": (
        "the causal mask is not shifted by the memory: query i sits at position "
        "memory_len + i of [memory, segment], so it sees keys j ≤ memory_len + i"
    ),
    "no_memory": (
        "the memory is masked out: every query of the segment may read the whole memory "
        "(the cached states of the previous segment), that is the point of the recurrence"
    ),
    "not_causal": (
        "the segment is not causal: a query may see the memory and the segment's keys up "
        "to itself, not later ones"
    ),
    "strict": (
        "a query does not see its own key: key memory_len + i is allowed (j ≤ memory_len + i)"
    ),
    "memory_after": (
        "the memory is placed after the segment: the keys are [memory, segment], memory first"
    ),
    "masked_unshifted": (
        "the mask marks the masked keys, and one too many: this looks like "
        "triu(ones, diagonal=memory_len), where True means masked and each query loses its "
        "own key; negate the paper's triu(ones, diagonal=1 + memory_len) instead"
    ),
}


def check_xl_attention_mask(fn: Callable) -> None:
    """Check ``fn(segment_len, memory_len) -> (segment_len, memory_len + segment_len)``,
    True = may attend: query i sees key j of [memory, segment] when j ≤ memory_len + i.
    Bool or 0/1 answers (a tensor, a NumPy array, nested lists) are accepted."""
    cases = [(4, 4), (3, 5), (6, 2), (5, 0), (1, 3), (12, 12)]
    for segment_len, memory_len in cases:
        case = f"segment_len = {segment_len}, memory_len = {memory_len}"
        expected = xl_mask_variant(segment_len, memory_len)
        got = as_answer(call_learner(fn, case, segment_len, memory_len), case, "the mask")
        if tuple(got.shape) == (*expected.shape, 1):
            raise AssertionError(
                f"on {case}, the mask has shape {tuple(got.shape)}: drop the last axis "
                f"(the paper's code adds [:, :, None] to broadcast over the batch; "
                f".squeeze(-1) removes it)"
            )
        got = require_shape(got, expected.shape, case, "the mask")
        if not ((got == 0) | (got == 1)).all():
            values = got.to(torch.float64)
            if (values < 0).any():
                raise AssertionError(
                    f"on {case}, the mask holds negative values: this looks like an additive "
                    f"mask (0 where a query may attend, -inf where it may not); return a "
                    f"boolean mask, True = may attend"
                )
            if ((values == 254) | (values == 255)).all():
                raise AssertionError(
                    f"on {case}, the mask holds 254/255: ~ on a uint8 tensor flips every bit "
                    f"(~1 = 254, ~0 = 255); negate a bool tensor, or return 1 - mask"
                )
            raise AssertionError(f"on {case}, the mask should hold only True/False (or 1/0)")
        got = got.bool()
        if torch.equal(got, expected):
            continue
        for bug, message in XL_MASK_SLIPS.items():
            wrong = xl_mask_variant(segment_len, memory_len, bug)
            if not torch.equal(wrong, expected) and torch.equal(got, wrong):
                raise AssertionError(f"on {case}, {message}")
        i, j = (got != expected).nonzero()[0].tolist()
        raise AssertionError(
            f"on {case}, the mask is wrong at [i, j] = [{i}, {j}]: it should be "
            f"{bool(expected[i, j])} (query i sees key j when j ≤ memory_len + i)"
        )
