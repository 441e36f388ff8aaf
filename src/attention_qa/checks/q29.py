"""The checker of q29's exercise: ``check_blocks_needed``."""

from __future__ import annotations

import math
from typing import Callable

from attention_qa.checks.common import _number, call_learner, first_slip

BLOCKS_SLIPS = {
    "floor": (
        "a partly filled last block is not counted: a sequence of length L takes "
        "ceil(L / block_size) blocks, e.g. 5 tokens in blocks of 4 take 2"
    ),
    "plus_one": (
        "L // block_size + 1 counts one block too many when L is a multiple of block_size: "
        "use ceil(L / block_size), which is -(-L // block_size)"
    ),
    "pooled_slots": (
        "the positions of all sequences were pooled before dividing: a block belongs to one "
        "sequence, so round up per sequence, then add"
    ),
    "reserved": (
        "every sequence was given the blocks of the longest one, as a contiguous cache "
        "reserves its maximum length: paging takes only the blocks a sequence uses"
    ),
    "slots": "that counts positions (tokens), not blocks of block_size positions",
}


def blocks_variant(lengths, block_size, bug: str | None = None) -> int:
    """Blocks a paged cache takes for these lengths, or the answer of one slip."""
    if bug == "floor":
        return sum(n // block_size for n in lengths)
    if bug == "plus_one":
        return sum(n // block_size + 1 for n in lengths)
    if bug == "pooled_slots":
        return math.ceil(sum(lengths) / block_size)
    if bug == "reserved":
        return len(lengths) * math.ceil(max(lengths) / block_size)
    if bug == "slots":
        return sum(lengths)
    return sum(math.ceil(n / block_size) for n in lengths)


def check_blocks_needed(fn: Callable) -> None:
    """Check ``fn(lengths, block_size)``: the blocks a paged K/V cache (Kwon et al., 2023)
    takes for sequences of these lengths, ``Σ ceil(length / block_size)``. Any one real
    number is accepted (Python, numpy, a one-element tensor); a string is not."""
    cases = [
        ("lengths=[5, 3], block_size=4", [5, 3], 4),
        ("lengths=[8, 16, 1], block_size=8 (exact multiples)", [8, 16, 1], 8),
        ("lengths=[7, 7, 7], block_size=16", [7, 7, 7], 16),
        ("lengths=[100, 33, 64, 2], block_size=16", [100, 33, 64, 2], 16),
        ("lengths=[9], block_size=1", [9], 1),
    ]
    for case, lengths, block_size in cases:
        expected = blocks_variant(lengths, block_size)
        got = _number(call_learner(fn, case, list(lengths), block_size), case)
        if got == expected:
            continue
        first_slip(got, case, BLOCKS_SLIPS,
                    lambda bug, lengths=lengths, b=block_size: blocks_variant(lengths, b, bug),
                    expected)
        raise AssertionError(
            f"on {case}, got {got} blocks but the sequences take {expected}: "
            f"Σ ceil(length / block_size)"
        )
