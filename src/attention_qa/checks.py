"""Automatic checkers for the book's exercises.

A checker runs a learner's function on several cases against the package's reference.
It returns None when every case agrees; otherwise it raises ``AssertionError`` whose
message names the likely bug, so the feedback reads like a teacher's, not a diff.
"""

from __future__ import annotations

from typing import Callable

import torch


def call_learner(fn: Callable, case: str, *args, **kwargs):
    """Call the learner's function; if it raises, say which input it failed on."""
    try:
        return fn(*args, **kwargs)
    except NotImplementedError:
        raise
    except Exception as err:
        raise AssertionError(
            f"your function raised {type(err).__name__} on {case}: {err}"
        ) from None


def require_shape(result, expected: tuple, case: str, name: str = "result") -> torch.Tensor:
    if not isinstance(result, torch.Tensor):
        raise AssertionError(f"on {case}, {name} should be a tensor, got {type(result).__name__}")
    if tuple(result.shape) != tuple(expected):
        raise AssertionError(
            f"on {case}, {name} has shape {tuple(result.shape)} but should be {tuple(expected)}"
        )
    return result


def _softmax_jacobian_reference(p: torch.Tensor) -> torch.Tensor:
    return torch.diag_embed(p) - p.unsqueeze(-1) * p.unsqueeze(-2)  # (..., m, m)


def check_softmax_jacobian(fn: Callable) -> None:
    """Check ``fn(p) -> diag(p) − p pᵀ`` for probability vectors p of shape (..., m)."""
    g = torch.Generator().manual_seed(4)
    cases = [
        ("p of shape (3,)", torch.softmax(torch.randn(3, generator=g, dtype=torch.float64), -1)),
        ("a one-hot p of shape (4,)", torch.tensor([0.0, 1.0, 0.0, 0.0], dtype=torch.float64)),
        ("p of shape (2, 5)", torch.softmax(torch.randn(2, 5, generator=g, dtype=torch.float64), -1)),
    ]
    for case, p in cases:
        expected = _softmax_jacobian_reference(p)
        got = require_shape(call_learner(fn, case, p.clone()), expected.shape, case, "the Jacobian")
        if torch.allclose(got, expected, atol=1e-9):
            continue
        if torch.allclose(got, -expected, atol=1e-9):
            raise AssertionError(f"on {case}, the sign is flipped: it is diag(p) − p pᵀ, not p pᵀ − diag(p)")
        if torch.allclose(got, torch.diag_embed(p), atol=1e-9):
            raise AssertionError(f"on {case}, the − p pᵀ term is missing: off-diagonal entries are −pᵢpⱼ")
        if torch.allclose(got, -p.unsqueeze(-1) * p.unsqueeze(-2), atol=1e-9):
            raise AssertionError(f"on {case}, the diag(p) term is missing: diagonal entries are pᵢ(1 − pᵢ)")
        if torch.allclose(got, torch.diag_embed(p - p * p), atol=1e-9):
            raise AssertionError(f"on {case}, only the diagonal is right: off-diagonal entries are −pᵢpⱼ, not 0")
        worst = (got - expected).abs().max().item()
        raise AssertionError(f"on {case}, the Jacobian is off by up to {worst:.3g} from diag(p) − p pᵀ")
