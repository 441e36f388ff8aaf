"""The checker of q06's exercise: ``check_attention``."""

from __future__ import annotations

from functools import partial
from typing import Callable

import torch

from attention_qa.checks.common import (
    NAN_SCORES,
    as_answer,
    call_learner,
    check_weights,
    diagnose,
    require_shape,
)
from attention_qa.masks import padding_mask

# One line of feedback per known slip, keyed by the switch of ``attention_variant`` that
# copies it. The softmax-axis slip is added per case, since which axes exist depends on it.
ATTENTION_SLIPS = {
    "k_not_transposed": (
        "k is not transposed: the scores are q @ kᵀ, i.e. q @ k.transpose(-2, -1), "
        "of shape (..., n, m)"
    ),
    "scores_transposed": (
        "the scores are transposed: they are q @ kᵀ, of shape (..., n, m) (one row per "
        "query), not k @ qᵀ"
    ),
    "weights_transposed": (
        "the weights are transposed before they multiply v: the output is weights @ v "
        "with weights of shape (..., n, m)"
    ),
    "no_scale": "the scores are not scaled: divide q @ kᵀ by √d_k before the softmax",
    "scale_d_k": "the scores are divided by d_k instead of √d_k",
    "scale_times_sqrt_d_k": "the scores are multiplied by √d_k instead of divided by it",
    "scale_d_v": (
        "the scale uses d_v = v.shape[-1]; it must use d_k = q.shape[-1], the length of "
        "the vectors in each dot product"
    ),
    "scale_m": (
        "the scale uses m = k.shape[-2], the number of keys; it must use d_k = k.shape[-1], "
        "the length of each key vector"
    ),
    "scale_n": (
        "the scale uses n = q.shape[-2], the number of queries; it must use "
        "d_k = q.shape[-1], the length of each query vector"
    ),
    "scale_d_model_512": (
        "the scores are divided by √512, d_model of the paper's base model; divide by "
        "√d_k of these inputs, q.shape[-1]"
    ),
    "mask_ignored": "the mask is ignored: a key where mask is False must get zero weight",
    "mask_inverted": (
        "the mask is read the wrong way round: True means may attend (the convention of "
        "F.scaled_dot_product_attention), so fill the scores where mask is False"
    ),
    "mask_zero": (
        "the masked scores are set to 0, which still gives those keys weight; set them to "
        "−∞ (or the dtype's most negative value) before the softmax"
    ),
    "mask_after_softmax": (
        "the mask is applied after the softmax, so the remaining weights no longer sum "
        "to 1; mask the scores before the softmax"
    ),
}


def attention_variant(q, k, v, mask, bug: str | None = None, dim: int = -1):
    """Scaled dot-product attention with one known slip switched on (None: no slip).

    Returns ``(output, weights)``; ``dim`` is the softmax axis for the "softmax_dim" slip.
    """
    d_k = q.shape[-1]
    if bug == "k_not_transposed":
        scores = q @ k  # only runs when d_k = m
    elif bug == "scores_transposed":
        scores = k @ q.transpose(-2, -1)  # (..., m, n); only lines up with v when n = m
    else:
        scores = q @ k.transpose(-2, -1)  # (..., n, m)
    scale = {
        "no_scale": 1.0,
        "scale_d_k": 1.0 / d_k,
        "scale_times_sqrt_d_k": d_k**0.5,
        "scale_d_v": v.shape[-1] ** -0.5,
        "scale_m": k.shape[-2] ** -0.5,
        "scale_n": q.shape[-2] ** -0.5,
        "scale_d_model_512": 512**-0.5,
    }.get(bug, d_k**-0.5)
    scores = scores * scale
    if mask is not None and bug not in ("mask_ignored", "mask_after_softmax"):
        if bug == "mask_zero":
            scores = scores.masked_fill(~mask, 0.0)
        else:
            blocked = mask if bug == "mask_inverted" else ~mask
            scores = scores.masked_fill(blocked, torch.finfo(scores.dtype).min)
    weights = torch.softmax(scores, dim=dim if bug == "softmax_dim" else -1)  # (..., n, m)
    if mask is not None and bug == "mask_after_softmax":
        weights = weights * mask
    if bug == "weights_transposed":
        weights = weights.transpose(-2, -1)
    return weights @ v, weights  # (..., n, d_v), (..., n, m)


def _attention_cases() -> list:
    """(case, q shape, k shape, v shape, mask) for check_attention.

    The first case has n = m = d_k so that the transposition slips still run and can be
    named; the later ones make n, m, d_k and d_v differ, so that each scale slip differs
    from the others. Every mask row has a True and a False, so no query is fully masked
    (a hand-written softmax over -inf scores returns NaN there, while the pinned
    F.scaled_dot_product_attention returns zeros, so a correct answer could disagree with
    the reference) and the inverted mask has no fully masked query either.
    """
    n, m = 4, 6
    i = torch.arange(n).unsqueeze(1)  # (n, 1)
    j = torch.arange(m).unsqueeze(0)  # (1, m)
    window = (j - i - (m - n)).abs() <= 1  # (n, m): each query sees its neighbours only
    return [
        (
            "q (4, 4), k (4, 4), v (4, 3) (no batch dims, n = m = d_k, no mask)",
            (4, 4),
            (4, 4),
            (4, 3),
            None,
        ),
        ("q (3, 6), k (5, 6), v (5, 2) (no batch dims, no mask)", (3, 6), (5, 6), (5, 2), None),
        (
            "q (2, 3, 8), k (2, 5, 8), v (2, 5, 4) (batch dims, no mask)",
            (2, 3, 8),
            (2, 5, 8),
            (2, 5, 4),
            None,
        ),
        (
            "q (2, 2, 4, 6), k (2, 2, 7, 6), v (2, 2, 7, 5) (dims (B, h, n, d), no mask)",
            (2, 2, 4, 6),
            (2, 2, 7, 6),
            (2, 2, 7, 5),
            None,
        ),
        (
            "q (2, 4, 5), k (2, 6, 5), v (2, 6, 3) with a padding mask of shape (2, 1, 6)",
            (2, 4, 5),
            (2, 6, 5),
            (2, 6, 3),
            padding_mask([4, 2], 6).unsqueeze(1),
        ),
        (
            "q (3, 4, 8), k (3, 6, 8), v (3, 6, 2) with a sliding-window mask of shape (4, 6)",
            (3, 4, 8),
            (3, 6, 8),
            (3, 6, 2),
            window,
        ),
        (
            "q (2, 2, 3, 4), k (2, 2, 5, 4), v (2, 2, 5, 6) with a padding mask of shape "
            "(2, 1, 1, 5)",
            (2, 2, 3, 4),
            (2, 2, 5, 4),
            (2, 2, 5, 6),
            padding_mask([3, 4], 5)[:, None, None, :],
        ),
    ]


def _axis_name(dim: int, ndim: int) -> str:
    return "the queries" if dim == ndim - 2 else "a batch axis"


def _attention_output_variant(q, k, v, mask, switch: tuple) -> torch.Tensor:
    bug, dim = switch
    return attention_variant(q, k, v, mask, bug, dim)[0]


def check_attention(fn: Callable) -> None:
    """Check a learner's ``fn(q, k, v, mask=None)`` against PyTorch's attention.

    ``fn`` gets q (..., n, d_k), k (..., m, d_k), v (..., m, d_v) and, in the masked cases,
    a boolean mask (True = may attend) as a fourth argument; it returns the output
    (..., n, d_v), or ``(output, weights)`` with weights (..., n, m). The reference is
    ``torch.nn.functional.scaled_dot_product_attention``, i.e. ``softmax(q kᵀ / √d_k) v``
    (Vaswani et al., 2017, equation 1). The global random state is left untouched.
    """
    g = torch.Generator().manual_seed(11)
    passed_without_batch = False
    for case, q_shape, k_shape, v_shape, mask in _attention_cases():
        q = torch.randn(q_shape, generator=g)
        k = torch.randn(k_shape, generator=g)
        v = torch.randn(v_shape, generator=g)
        expected = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        _, expected_weights = attention_variant(q, k, v, mask)
        args = (q.clone(), k.clone(), v.clone()) + (() if mask is None else (mask.clone(),))
        try:
            result = call_learner(fn, case, *args)
        except AssertionError as err:
            if q.ndim > 2 and passed_without_batch:
                raise AssertionError(
                    f"{err}. It works without batch dims, so look for an operation that "
                    f"only handles 2-D tensors: use k.transpose(-2, -1) (not k.T or k.t()) "
                    f"and @ (not torch.mm)"
                ) from None
            raise
        got = as_answer(result, case, "the output", output_only=True)
        n, m, d_v = q.shape[-2], k.shape[-2], v.shape[-1]
        if isinstance(got, torch.Tensor) and got.shape != expected.shape:
            if tuple(got.shape) == (*expected.shape[:-2], n, m):
                raise AssertionError(
                    f"on {case}, the output has shape {tuple(got.shape)} = (..., n, m), the "
                    f"shape of the weights: multiply them by v to get (..., n, d_v)"
                )
            if tuple(got.shape) == (*expected.shape[:-2], d_v, n):
                raise AssertionError(
                    f"on {case}, the output has shape {tuple(got.shape)} = (..., d_v, n): it "
                    f"is transposed; it should be (..., n, d_v) = {tuple(expected.shape)}"
                )
        got = require_shape(got, expected.shape, case, "the output")
        if not got.is_floating_point():
            raise AssertionError(f"on {case}, the output has dtype {got.dtype}, not a float")
        # A switch is (slip, softmax axis); the axis slip is named per case, since which
        # axes exist depends on it.
        slips = {
            ("softmax_dim", d): (
                f"the softmax runs over the wrong axis (dim={d}, {_axis_name(d, q.ndim)}): it "
                f"must run over the keys, dim=-1, so that each query's weights sum to 1"
            )
            for d in range(q.ndim - 1)
        }
        slips.update({(bug, -1): message for bug, message in ATTENTION_SLIPS.items()})
        diagnose(
            got, expected, case, "the output",
            "softmax(q kᵀ / √d_k) v (Vaswani et al., 2017, equation 1)",
            slips, partial(_attention_output_variant, q, k, v, mask),
            nan_hint=NAN_SCORES,
        )
        check_weights(
            result, expected_weights, case,
            "softmax(q kᵀ / √d_k) with masked keys at 0, shape (..., n, m)",
        )
        passed_without_batch = passed_without_batch or q.ndim == 2
