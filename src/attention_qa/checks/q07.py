"""The checker of q07's exercise: ``check_attention_mask``."""

from __future__ import annotations

from typing import Callable

import torch

from attention_qa.checks.common import call_learner, compare_masks
from attention_qa.masks import padding_mask


def mask_variant(lengths, n: int, causal: bool, bug: str | None = None) -> torch.Tensor:
    """The (B, n, n) mask, True = may attend, with one known slip switched on."""
    keys = padding_mask(lengths, n)  # (B, n)
    if bug == "padding_on_queries":
        allowed = keys.unsqueeze(2).expand(-1, n, n)  # hides rows instead of columns
    elif bug == "padding_ignored":
        allowed = torch.ones(len(lengths), n, n, dtype=torch.bool)
    else:
        allowed = keys.unsqueeze(1).expand(-1, n, n)  # (B, n, n): column j hidden past length
    if causal and bug != "causal_ignored":
        diagonal = -1 if bug == "diagonal_blocked" else 0
        allowed = allowed & torch.ones(n, n, dtype=torch.bool).tril(diagonal)
    return ~allowed if bug == "inverted" else allowed


MASK_SLIPS = {
    "inverted": (
        "the mask is inverted: True must mean may attend (the convention of "
        "F.scaled_dot_product_attention), so real tokens and the past are True"
    ),
    "padding_on_queries": (
        "the padding hides queries, not keys: mask[b, i, j] must be False when key j is "
        "padding (j ≥ lengths[b]), whatever the query i"
    ),
    "padding_ignored": "the padding is ignored: keys at j ≥ lengths[b] must be False",
    "causal_ignored": "the causal part is missing: with causal=True, key j > i must be False",
    "diagonal_blocked": (
        "the diagonal is blocked: a position may attend to itself, so the causal part is "
        "j ≤ i (tril with diagonal=0), not j < i"
    ),
}


def check_attention_mask(fn: Callable) -> None:
    """Check ``fn(lengths, n, causal) -> (B, n, n)`` boolean, True = may attend.

    Query i of sequence b may see key j when j < lengths[b] and, if causal, j ≤ i.
    """
    cases = [
        ("lengths=[3, 5], n=5, causal=False", [3, 5], 5, False),
        ("lengths=[3, 5], n=5, causal=True", [3, 5], 5, True),
        ("lengths=[2], n=4, causal=True", [2], 4, True),
        ("lengths=[6, 1, 4], n=6, causal=False", [6, 1, 4], 6, False),
    ]
    for case, lengths, n, causal in cases:
        expected = mask_variant(lengths, n, causal)
        got = call_learner(fn, case, list(lengths), n, causal)
        compare_masks(
            got,
            expected,
            case,
            {msg: mask_variant(lengths, n, causal, bug) for bug, msg in MASK_SLIPS.items()},
            "b, i, j",
        )
