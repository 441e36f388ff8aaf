"""The checker of q08's exercise: ``check_shift_right``."""

from __future__ import annotations

from typing import Callable

import torch

from attention_qa.checks.common import (
    as_answer,
    call_learner,
    require_integer_ids,
    require_shape,
)


def check_shift_right(fn: Callable) -> None:
    """Check ``fn(targets, bos) -> decoder inputs``: (B, T) → (B, T), ``[bos, y_0 … y_{T-2}]``."""
    cases = [
        ("targets [[5, 6, 7, 8]], bos=1", torch.tensor([[5, 6, 7, 8]]), 1),
        ("targets [[4, 9, 2], [3, 3, 7]], bos=0", torch.tensor([[4, 9, 2], [3, 3, 7]]), 0),
        ("targets [[6]], bos=2", torch.tensor([[6]]), 2),
        (
            "GPT-2 ids [[464, 3290, 318], [40, 1101, 50255]], bos=50256",
            torch.tensor([[464, 3290, 318], [40, 1101, 50255]]),
            50256,
        ),
    ]
    for case, targets, bos in cases:
        B, T = targets.shape
        start = torch.full((B, 1), bos, dtype=targets.dtype)
        expected = torch.cat([start, targets[:, :-1]], dim=1)  # (B, T)
        got = as_answer(call_learner(fn, case, targets.clone(), bos), case, "the decoder inputs")
        if isinstance(got, torch.Tensor) and got.ndim == 2 and got.shape[0] == B:
            if got.shape[1] == T + 1 and torch.equal(got[:, :-1], expected):
                raise AssertionError(
                    f"on {case}, the last target is kept: drop it, so the inputs have T={T} "
                    f"tokens like the targets (y_{T - 1} is only ever predicted, never read)"
                )
            if got.shape[1] == T - 1 and torch.equal(got, targets[:, :-1]):
                raise AssertionError(
                    f"on {case}, the start token bos is missing: the inputs begin with bos"
                )
        got = require_shape(got, expected.shape, case, "the decoder inputs")
        if torch.equal(got, expected):
            require_integer_ids(
                got, case, "the ids",
                " (nn.Embedding takes int64 or int32); keep the targets' dtype, "
                "e.g. torch.full((B, 1), bos, dtype=targets.dtype)",
            )
            continue
        mistakes = [
            (
                targets.roll(1, dims=1),
                "the last target wraps round to the front (roll): the first input is bos, so "
                "position 0 cannot see the answer",
            ),
            (
                torch.cat([targets[:, 1:], start], dim=1),
                "the targets are shifted left, not right: input t must be y_{t-1}, with bos first",
            ),
            (targets, "the targets are not shifted: each position would read its own answer"),
        ]
        for wrong, message in mistakes:
            if torch.equal(got, wrong):
                raise AssertionError(f"on {case}, {message}")
        raise AssertionError(
            f"on {case}, got {got.tolist()} but the decoder inputs are {expected.tolist()}"
        )
