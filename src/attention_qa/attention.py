"""Scaled dot-product attention, written out so that every step can be read.

Follows Vaswani et al. (2017), "Attention Is All You Need", equation (1):
``softmax(Q Kᵀ / √d_k) V``. The mask convention is PyTorch's
``torch.nn.functional.scaled_dot_product_attention``: a boolean mask where
**True means "may attend"**.
"""

import math

import torch

from attention_qa.validation import broadcast_or_raise, require_tensor, shape_str


def _check_qkv(q, k, v, mask) -> None:
    for name, x in (("q", q), ("k", k), ("v", v)):
        require_tensor(name, x, min_ndim=2, floating=True)
    if not q.dtype == k.dtype == v.dtype:
        raise TypeError(f"q, k and v must share a dtype, got {q.dtype}, {k.dtype} and {v.dtype}")
    d_k = q.shape[-1]
    if k.shape[-1] != d_k:
        raise ValueError(
            f"k has shape {shape_str(k.shape)} but q has d_k={d_k}; "
            f"k must be (..., m, {d_k})"
        )
    m = k.shape[-2]
    if v.shape[-2] != m:
        raise ValueError(
            f"v has shape {shape_str(v.shape)} but k has m={m} keys; v must be (..., {m}, d_v)"
        )
    batch = broadcast_or_raise("k", k.shape[:-2], q.shape[:-2], "the leading dims of q")
    batch = broadcast_or_raise("v", v.shape[:-2], batch, "the leading dims of q and k")
    if mask is not None:
        require_tensor("mask", mask)
        if mask.dtype != torch.bool:
            raise TypeError(
                f"mask must be a boolean tensor (True = may attend), got dtype {mask.dtype}"
            )
        scores_shape = (*batch, q.shape[-2], m)
        if broadcast_or_raise("mask", mask.shape, scores_shape, "the scores") != scores_shape:
            raise ValueError(
                f"mask has shape {shape_str(mask.shape)} which does not broadcast to the "
                f"scores (..., n, m) = {shape_str(scores_shape)}"
            )


def scaled_dot_product_attention(q, k, v, mask=None, scale=None):
    """Return ``(output, weights)`` of scaled dot-product attention.

    q: (..., n, d_k), k: (..., m, d_k), v: (..., m, d_v); leading dims broadcast.
    mask: boolean, broadcastable to (..., n, m), True = may attend.
    scale: multiplies the scores; defaults to 1/√d_k.

    A query whose keys are all masked gets zero weights and a zero output.
    """
    _check_qkv(q, k, v, mask)
    if scale is None:
        scale = 1.0 / math.sqrt(q.shape[-1])
    scores = (q @ k.transpose(-2, -1)) * scale  # (..., n, m)
    if mask is not None:
        # The most negative finite value of the dtype: -1e9 would overflow float16.
        scores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
    weights = torch.softmax(scores, dim=-1)  # (..., n, m)
    if mask is not None:
        # A fully masked row would otherwise be uniform over forbidden keys.
        weights = weights.masked_fill(~mask.any(dim=-1, keepdim=True), 0.0)
    output = weights @ v  # (..., n, d_v)
    return output, weights
