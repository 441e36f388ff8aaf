"""The checker of q35's exercise: ``check_selective_scan``."""

from __future__ import annotations

from functools import partial
from typing import Callable

import torch
import torch.nn.functional as F

from attention_qa.checks.common import as_real_tensor, call_learner, diagnose, require_shape
from attention_qa.recurrent import selective_scan

SCAN_SLIPS = {
    "no_delta_in_decay": (
        "the state decays by exp(A), the same at every token; discretise with the step: "
        "Ā_t = exp(Δ_t A), so a large Δ forgets more and a small one keeps the state"
    ),
    "euler_decay": (
        "the decay is 1 + Δ_t A (Euler's step); Mamba's zero-order hold uses exp(Δ_t A), which "
        "stays in (0, 1) for A < 0 however large Δ is"
    ),
    "no_delta_on_input": (
        "the input is written as B_t x_t; it must be scaled by the step too: Δ_t B_t x_t"
    ),
    "read_before_write": (
        "y_t reads the state before token t is written (h_{t−1} C_t); update h first, then "
        "read y_t = h_t C_t"
    ),
    "no_skip": "the skip term D ⊙ x_t is missing from y_t",
    "decay_the_input": (
        "the new input is decayed with the old state, exp(Δ_t A)(h_{t−1} + Δ_t B_t x_t); only "
        "h_{t−1} decays: h_t = exp(Δ_t A) h_{t−1} + Δ_t B_t x_t"
    ),
}


def scan_variant(x, delta, A, B, C, D, bug: str | None = None):
    """The selective scan with one slip switched on (None: the right scan)."""
    dA = delta.unsqueeze(-1) * A  # (batch, L, d, N)
    if bug == "no_delta_in_decay":
        decay = torch.exp(A).expand_as(dA)
    elif bug == "euler_decay":
        decay = 1 + dA
    else:
        decay = torch.exp(dA)
    scale = torch.ones_like(delta) if bug == "no_delta_on_input" else delta
    drive = (scale * x).unsqueeze(-1) * B.unsqueeze(-2)  # (batch, L, d, N)
    h = x.new_zeros(x.shape[0], x.shape[2], A.shape[1])  # (batch, d, N)
    ys = []
    for t in range(x.shape[1]):
        before = h
        h = decay[:, t] * (h + drive[:, t]) if bug == "decay_the_input" else (
            decay[:, t] * h + drive[:, t])
        read = before if bug == "read_before_write" else h
        ys.append((read * C[:, t].unsqueeze(-2)).sum(-1))  # (batch, d)
    y = torch.stack(ys, dim=1)  # (batch, L, d)
    return y if (D is None or bug == "no_skip") else y + D * x


def scan_case(batch: int, L: int, d: int, N: int, with_skip: bool, g: torch.Generator):
    """x, Δ = softplus(·) > 0, A = −exp(·) < 0, B, C, D (or None), all float64."""
    def randn(*shape):
        return torch.randn(*shape, generator=g, dtype=torch.float64)

    x = randn(batch, L, d)
    delta = F.softplus(randn(batch, L, d))
    A = -torch.exp(randn(d, N))
    B, C = randn(batch, L, N), randn(batch, L, N)
    D = randn(d) if with_skip else None
    return x, delta, A, B, C, D


CASES = (
    ("x (1, 6, 2), A (2, 3), D None", (1, 6, 2, 3, False)),
    ("x (2, 9, 3), A (3, 4), D (3,)", (2, 9, 3, 4, True)),
    ("x (1, 12, 4), A (4, 2), D (4,)", (1, 12, 4, 2, True)),
)


def check_selective_scan(fn: Callable) -> None:
    """Check ``fn(x, delta, A, B, C, D) -> y`` against ``attention_qa.recurrent.selective_scan``.

    The checker passes float64 tensors: x, delta (batch, L, d) with delta > 0; A (d, N) < 0;
    B, C (batch, L, N); D (d,) or None; the cases are in ``CASES``. y must be (batch, L, d),
    right to its dtype's precision; the usual slips are named."""
    g = torch.Generator().manual_seed(35)
    for case, sizes in CASES:
        x, delta, A, B, C, D = scan_case(*sizes, g)
        expected = selective_scan(x, delta, A, B, C, D)
        args = [t.clone() if t is not None else None for t in (x, delta, A, B, C, D)]
        got = as_real_tensor(call_learner(fn, case, *args), case, "y")
        got = require_shape(got, expected.shape, case, "y")
        diagnose(got, expected, case, "y", "h_t = exp(Δ_t A) h_{t−1} + Δ_t B_t x_t, "
                 "y_t = h_t C_t + D x_t", SCAN_SLIPS,
                 partial(scan_variant, x, delta, A, B, C, D))
