"""The checker of q02's exercise: ``check_output_shape``."""

from __future__ import annotations

from typing import Callable

import numpy as np
import torch

from attention_qa.checks.common import call_learner, whole_numbers


def _shape_cases() -> list:
    """(case, q shape, k shape, v shape): valid ones first, then five that must fail
    (2-D and batched)."""
    return [
        ("q (3, 4), k (5, 4), v (5, 2)", (3, 4), (5, 4), (5, 2)),
        ("q (2, 6, 8), k (2, 6, 8), v (2, 6, 8) (self-attention)", (2, 6, 8), (2, 6, 8), (2, 6, 8)),
        (
            "q (2, 3, 4, 6), k (2, 3, 7, 6), v (2, 3, 7, 5)",
            (2, 3, 4, 6),
            (2, 3, 7, 6),
            (2, 3, 7, 5),
        ),
        ("q (1, 4), k (9, 4), v (9, 3)", (1, 4), (9, 4), (9, 3)),
        ("q (3, 4), k (5, 6), v (5, 2) (q and k disagree on d_k)", (3, 4), (5, 6), (5, 2)),
        ("q (3, 4), k (5, 4), v (6, 2) (5 keys but 6 values)", (3, 4), (5, 4), (6, 2)),
        # the same two errors with leading dims, where q[1] and k[0] are not d_k and m
        ("q (2, 3, 4, 6), k (2, 3, 7, 5), v (2, 3, 7, 5) (q and k disagree on d_k)",
         (2, 3, 4, 6), (2, 3, 7, 5), (2, 3, 7, 5)),
        ("q (2, 3, 4, 6), k (2, 3, 7, 6), v (2, 3, 8, 5) (7 keys but 8 values)",
         (2, 3, 4, 6), (2, 3, 7, 6), (2, 3, 8, 5)),
        ("q (2, 4, 64), k (2, 4, 32), v (2, 4, 16) (q and k disagree on d_k)",
         (2, 4, 64), (2, 4, 32), (2, 4, 16)),
    ]


def check_output_shape(fn: Callable) -> None:
    """Check ``fn(q_shape, k_shape, v_shape)`` returns the shape of attention's output.

    The shapes are tuples, q (..., n, d_k), k (..., m, d_k), v (..., m, d_v) with the same
    leading dims. ``fn`` must return ``(..., n, d_v)``, and raise ``ValueError`` when q and k
    disagree on d_k or k and v on m. A tuple, list, ``torch.Size``, or 1-D NumPy array or
    tensor of whole numbers is accepted; a number with a fractional part is refused. The
    reference is what ``attention.scaled_dot_product_attention`` returns or raises on zero
    tensors.
    """
    from attention_qa.attention import scaled_dot_product_attention

    for case, q_shape, k_shape, v_shape in _shape_cases():
        try:
            out, _ = scaled_dot_product_attention(
                torch.zeros(q_shape), torch.zeros(k_shape), torch.zeros(v_shape)
            )
            expected = tuple(out.shape)
        except ValueError:
            expected = None
        try:
            got = call_learner(fn, case, q_shape, k_shape, v_shape, passthrough=(ValueError,))
        except ValueError:
            if expected is None:
                continue
            raise AssertionError(
                f"on {case}, your function raised ValueError, but these shapes are fine: "
                f"the output is {expected}"
            ) from None
        if expected is None:
            if q_shape[-1] != k_shape[-1]:
                raise AssertionError(
                    f"on {case}, your function returned {got!r} instead of raising ValueError: "
                    f"q·k needs vectors of one length, d_k = {q_shape[-1]} vs {k_shape[-1]}"
                )
            raise AssertionError(
                f"on {case}, your function returned {got!r} instead of raising ValueError: "
                f"every key needs one value, so k and v must both have m rows"
            )
        if isinstance(got, (np.ndarray, torch.Tensor)) and got.ndim == 1:
            got = got.tolist()  # a shape held in an array: any sequence of whole numbers
        if not isinstance(got, (tuple, list, torch.Size)):
            raise AssertionError(
                f"on {case}, your function should return a tuple, got {type(got).__name__}"
            )
        got = tuple(whole_numbers(got, case, "the shape"))
        if got == expected:
            continue
        lead, n, d_k = q_shape[:-2], q_shape[-2], q_shape[-1]
        m, d_v = k_shape[-2], v_shape[-1]
        mistakes = [
            ((*lead, n, d_k), "the last dim is d_k: the output has d_v columns, taken from v"),
            (
                (*lead, n, m),
                "that is the shape of the weights (..., n, m): the output is "
                "weights @ v, with d_v columns",
            ),
            ((*lead, m, d_v), "the output has one row per query (n), not per key (m)"),
            ((n, d_v), "the leading (batch) dims are missing: keep q's leading dims"),
            ((*lead, d_v, n), "the output is transposed: it is (..., n, d_v)"),
        ]
        for wrong, message in mistakes:
            if got == tuple(wrong):
                raise AssertionError(f"on {case}, you returned {got}: {message}")
        raise AssertionError(f"on {case}, you returned {got}, but the output is {expected}")
