"""The checker of q24's exercise: ``check_top_k_gates``."""

from __future__ import annotations

from functools import partial
from typing import Callable

import torch

from attention_qa.checks.common import call_learner, diagnose, require_shape
from attention_qa.moe import top_k_gates

TOP_K_GATES_SLIPS = {
    "full_softmax": (
        "every expert has a gate: the softmax runs over all experts. Keep each token's top_k "
        "logits only, softmax those, and set the other experts' gates to 0"
    ),
    "no_renormalise": (
        "the gates of a token do not sum to 1: they are the full softmax's probabilities of "
        "the chosen experts. Softmax the top_k logits themselves (that renormalises them)"
    ),
    "bottom_k": (
        "the chosen experts are those with the smallest logits: take the top_k largest "
        "(topk's default, largest=True)"
    ),
    "hard": (
        "every chosen expert gets a gate of 1: the gates are the softmax of the chosen "
        "logits, so they sum to 1 and the better expert gets more"
    ),
    "token_dim": (
        "the softmax runs over the tokens (dim 0), not over each token's chosen experts "
        "(the last dim)"
    ),
}


def top_k_gates_variant(logits, top_k: int, bug: str | None = None):
    """Dense (..., E) gates, or with one known slip switched on."""
    if bug == "full_softmax":
        return torch.softmax(logits, dim=-1)
    top_logits, top_experts = logits.topk(top_k, dim=-1, largest=bug != "bottom_k")
    if bug == "no_renormalise":
        gates = torch.softmax(logits, dim=-1).gather(-1, top_experts)
    elif bug == "hard":
        gates = torch.ones_like(top_logits)
    elif bug == "token_dim":
        if logits.ndim < 2:
            raise RuntimeError("no token dimension")
        gates = torch.softmax(top_logits, dim=0)
    else:
        gates = torch.softmax(top_logits, dim=-1)
    return torch.zeros_like(logits).scatter(-1, top_experts, gates)


def _spaced_logits(shape, g: torch.Generator) -> torch.Tensor:
    """Logits whose entries in a row differ by at least 0.3: no tie, even in float16."""
    E = shape[-1]
    rows = int(torch.tensor(shape[:-1]).prod())
    order = torch.stack([torch.randperm(E, generator=g) for _ in range(rows)])  # (rows, E)
    jitter = torch.rand(rows, E, generator=g, dtype=torch.float64) * 0.1
    logits = (order.double() - E / 2) * 0.4 + jitter  # spaced 0.4 ± 0.1
    return logits.reshape(shape)


def check_top_k_gates(fn: Callable) -> None:
    """Check ``fn(logits, top_k)``: logits (..., E) → dense gates (..., E).

    Each token's gates are the softmax of its top_k logits on its top_k experts and 0
    elsewhere (``attention_qa.moe.top_k_gates``, Shazeer et al., 2017).
    """
    g = torch.Generator().manual_seed(24)
    cases = [((6, 4), 2), ((2, 3, 8), 2), ((5, 8), 3), ((7, 4), 1), ((4,), 2), ((3, 5), 5)]
    for shape, top_k in cases:
        case = f"logits of shape {tuple(shape)}, top_k={top_k}"
        logits = _spaced_logits(shape, g)
        expected = top_k_gates(logits, top_k)
        got = call_learner(fn, case, logits.clone(), top_k)
        got = require_shape(got, expected.shape, case, "the gates")
        diagnose(
            got, expected, case, "the gates", "softmax over each token's top_k logits",
            TOP_K_GATES_SLIPS, partial(top_k_gates_variant, logits, top_k),
        )
