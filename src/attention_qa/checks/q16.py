"""The checker of q16's exercise: ``check_embedding``."""

from __future__ import annotations

from functools import partial
from typing import Callable

import torch

from attention_qa.checks.common import call_learner, diagnose, require_shape

EMBEDDING_SLIPS = {
    "no_scale": "the rows are not scaled: multiply the looked-up rows by √d_model",
    "scale_d": "the rows are multiplied by d_model; the factor is √d_model",
    "divide": "the rows are divided by √d_model; they must be multiplied by it",
    "scale_vocab": "the rows are scaled by √vocab_size; the factor is √d_model (weight.shape[1])",
}


def embedding_variant(tokens, weight, bug: str | None = None):
    vocab_size, d_model = weight.shape
    factor = {
        None: d_model**0.5,
        "no_scale": 1.0,
        "scale_d": float(d_model),
        "divide": d_model**-0.5,
        "scale_vocab": vocab_size**0.5,
    }[bug]
    return weight[tokens] * factor  # (..., d_model)


def check_embedding(fn: Callable) -> None:
    """Check ``fn(tokens, weight)`` = weight[tokens] · √d_model for integer tokens of any shape
    and weight of shape (vocab_size, d_model)."""
    g = torch.Generator().manual_seed(16)
    for case, vocab_size, d_model, shape in (
        ("tokens of shape (2, 5), weight (10, 16)", 10, 16, (2, 5)),
        ("tokens of shape (7,), weight (30, 9)", 30, 9, (7,)),
        ("tokens of shape (2, 3, 4), weight (300, 5)", 300, 5, (2, 3, 4)),
    ):
        weight = torch.randn(vocab_size, d_model, generator=g, dtype=torch.float64)
        tokens = torch.randint(0, vocab_size, shape, generator=g)
        expected = embedding_variant(tokens, weight)
        got = call_learner(fn, case, tokens.clone(), weight.clone())
        got = require_shape(got, expected.shape, case, "the embeddings")
        diagnose(
            got, expected, case, "the embeddings", "the rows weight[tokens] times √d_model",
            EMBEDDING_SLIPS, partial(embedding_variant, tokens, weight),
        )
