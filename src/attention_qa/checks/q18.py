"""The checker of q18's exercise: ``check_feed_forward``."""

from __future__ import annotations

from functools import partial
from typing import Callable

import torch

from attention_qa.checks.common import call_learner, close, diagnose, require_shape

FEED_FORWARD_SLIPS = {
    "no_relu": (
        "there is no ReLU between the two layers; without it they collapse into one linear "
        "map x @ (w1 @ w2)"
    ),
    "relu_output": (
        "a ReLU is applied to the output too; FFN(x) = max(0, x w1 + b1) w2 + b2 ends linear"
    ),
    "relu_input": "the ReLU is applied to x before w1; it belongs after the first layer",
    "no_b1": "b1 is missing: the hidden layer is max(0, x w1 + b1)",
    "no_b2": "b2 is missing: the output is … w2 + b2",
}


def feed_forward_variant(x, w1, b1, w2, b2, bug: str | None = None):
    inner = torch.relu(x) if bug == "relu_input" else x
    hidden = inner @ w1 + (0 if bug == "no_b1" else b1)  # (..., d_ff)
    if bug not in ("no_relu", "relu_input"):
        hidden = torch.relu(hidden)
    out = hidden @ w2 + (0 if bug == "no_b2" else b2)  # (..., d_model)
    return torch.relu(out) if bug == "relu_output" else out


def check_feed_forward(fn: Callable) -> None:
    """Check ``fn(x, w1, b1, w2, b2)`` = max(0, x w1 + b1) w2 + b2 with w1 (d_model, d_ff) and
    w2 (d_ff, d_model), on x of shape (..., d_model) with 0 to 3
    leading dims."""
    g = torch.Generator().manual_seed(18)
    for case, shape, d_ff in (
        ("x of shape (2, 5, 4), d_ff 8", (2, 5, 4), 8),
        ("x of shape (3, 6), d_ff 12", (3, 6), 12),
        ("x of shape (6,), d_ff 10", (6,), 10),
        ("x of shape (2, 2, 3, 4), d_ff 8", (2, 2, 3, 4), 8),
    ):
        d_model = shape[-1]
        x = torch.randn(shape, generator=g, dtype=torch.float64)
        w1 = torch.randn(d_model, d_ff, generator=g, dtype=torch.float64)
        b1 = torch.randn(d_ff, generator=g, dtype=torch.float64)
        w2 = torch.randn(d_ff, d_model, generator=g, dtype=torch.float64)
        b2 = torch.randn(d_model, generator=g, dtype=torch.float64)
        expected = feed_forward_variant(x, w1, b1, w2, b2)
        got = call_learner(fn, case, x.clone(), w1.clone(), b1.clone(), w2.clone(), b2.clone())
        got = require_shape(got, expected.shape, case, "the output")
        if not close(got, expected):
            # Mixing positions: a change at one position must not move another's output.
            moved = x.clone()
            moved[..., 0, :] += 1.0
            again = call_learner(fn, case, moved, w1.clone(), b1.clone(), w2.clone(), b2.clone())
            if isinstance(again, torch.Tensor) and again.shape == got.shape:
                if not close(again[..., 1:, :], got[..., 1:, :]):
                    raise AssertionError(
                        f"on {case}, changing position 0 changed the output at other "
                        f"positions: the FFN must treat every position on its own"
                    )
        diagnose(
            got, expected, case, "the output", "max(0, x w1 + b1) w2 + b2",
            FEED_FORWARD_SLIPS, partial(feed_forward_variant, x, w1, b1, w2, b2),
        )
