"""The checker of q39's exercise: ``check_swiglu``."""

from __future__ import annotations

from functools import partial
from typing import Callable

import torch
import torch.nn.functional as F

from attention_qa.checks.common import call_learner, diagnose, require_shape

SWIGLU_SLIPS = {
    "sigmoid_gate": (
        "the gate is σ(x w_gate): that is the original GLU; SwiGLU's gate is "
        "Swish(x w_gate) = x w_gate · σ(x w_gate)"
    ),
    "relu_gate": "the gate is ReLU(x w_gate) (ReGLU); SwiGLU uses Swish/SiLU",
    "gelu_gate": "the gate is GELU(x w_gate) (GEGLU); SwiGLU uses Swish/SiLU",
    "swapped": (
        "the activation is applied to x w_up instead of x w_gate: only the gate branch goes "
        "through SiLU, the up branch stays linear"
    ),
    "no_up": (
        "there is no up projection: SiLU(x w_gate) w_down is a plain Swish FFN; SwiGLU "
        "multiplies it elementwise by x w_up first"
    ),
    "sum": "the two branches are added; a GLU multiplies them elementwise",
    "act_after_product": (
        "SiLU is applied after the product, SiLU(x w_gate ⊙ x w_up); it applies to the gate "
        "branch only, SiLU(x w_gate) ⊙ x w_up"
    ),
}


def swiglu_variant(x, w_gate, w_up, w_down, bug: str | None = None):
    a, b = x @ w_gate, x @ w_up  # (..., d_ff) each
    if bug == "sigmoid_gate":
        hidden = torch.sigmoid(a) * b
    elif bug == "relu_gate":
        hidden = torch.relu(a) * b
    elif bug == "gelu_gate":
        hidden = F.gelu(a) * b
    elif bug == "swapped":
        hidden = a * F.silu(b)
    elif bug == "no_up":
        hidden = F.silu(a)
    elif bug == "sum":
        hidden = F.silu(a) + b
    elif bug == "act_after_product":
        hidden = F.silu(a * b)
    else:
        hidden = F.silu(a) * b
    return hidden @ w_down  # (..., d_model)


def check_swiglu(fn: Callable) -> None:
    """Check ``fn(x, w_gate, w_up, w_down)`` = (SiLU(x w_gate) ⊙ x w_up) w_down, no biases,
    with w_gate and w_up (d_model, d_ff) and w_down (d_ff, d_model), on x of shape
    (B, n, d_model), (n, d_model) and (2, 2, n, d_model)."""
    g = torch.Generator().manual_seed(39)
    for case, shape, d_ff in (
        ("x of shape (2, 5, 6), d_ff 16", (2, 5, 6), 16),
        ("x of shape (4, 3), d_ff 8", (4, 3), 8),
        ("x of shape (2, 2, 3, 4), d_ff 12", (2, 2, 3, 4), 12),
    ):
        d_model = shape[-1]
        x = 2 * torch.randn(shape, generator=g, dtype=torch.float64)
        w_gate = torch.randn(d_model, d_ff, generator=g, dtype=torch.float64)
        w_up = torch.randn(d_model, d_ff, generator=g, dtype=torch.float64)
        w_down = torch.randn(d_ff, d_model, generator=g, dtype=torch.float64)
        expected = swiglu_variant(x, w_gate, w_up, w_down)
        got = call_learner(fn, case, x.clone(), w_gate.clone(), w_up.clone(), w_down.clone())
        got = require_shape(got, expected.shape, case, "the output")
        diagnose(
            got, expected, case, "the output", "(SiLU(x w_gate) ⊙ x w_up) w_down",
            SWIGLU_SLIPS, partial(swiglu_variant, x, w_gate, w_up, w_down),
        )
