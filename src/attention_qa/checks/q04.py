"""The checker of q04's exercise: ``check_softmax_jacobian``."""

from __future__ import annotations

from typing import Callable

import torch

from attention_qa.checks.common import call_learner, diagnose, require_shape


def _softmax_jacobian_reference(p: torch.Tensor) -> torch.Tensor:
    return torch.diag_embed(p) - p.unsqueeze(-1) * p.unsqueeze(-2)  # (..., m, m)


def check_softmax_jacobian(fn: Callable) -> None:
    """Check ``fn(p) -> diag(p) − p pᵀ`` for probability vectors p of shape (..., m)."""
    g = torch.Generator().manual_seed(4)

    def random_p(*shape):
        return torch.softmax(torch.randn(*shape, generator=g, dtype=torch.float64), dim=-1)

    cases = [
        ("p of shape (3,)", random_p(3)),
        ("a one-hot p of shape (4,)", torch.tensor([0.0, 1.0, 0.0, 0.0], dtype=torch.float64)),
        ("p of shape (2, 5)", random_p(2, 5)),
        ("p of shape (2, 3, 4)", random_p(2, 3, 4)),
        ("p of shape (2, 1, 2, 3)", random_p(2, 1, 2, 3)),
    ]
    for case, p in cases:
        expected = _softmax_jacobian_reference(p)
        got = call_learner(fn, case, p.clone())
        got = require_shape(got, expected.shape, case, "the Jacobian")
        outer = p.unsqueeze(-1) * p.unsqueeze(-2)  # (..., m, m)
        mistakes = [
            (-expected, "the sign is flipped: it is diag(p) − p pᵀ, not p pᵀ − diag(p)"),
            (torch.diag_embed(p), "the − p pᵀ term is missing: off-diagonal entries are −pᵢpⱼ"),
            (-outer, "the diag(p) term is missing: diagonal entries are pᵢ(1 − pᵢ)"),
            (
                torch.diag_embed(p - p * p),
                "only the diagonal is right: off-diagonal entries are −pᵢpⱼ, not 0",
            ),
        ]
        wrongs = dict(enumerate(wrong for wrong, _ in mistakes))
        slips = dict(enumerate(message for _, message in mistakes))
        diagnose(got, expected, case, "the Jacobian", "diag(p) − p pᵀ", slips, wrongs.get)
