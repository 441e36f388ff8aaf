"""Integer quantisation of weights and of the K/V cache: round to nearest on a grid.

``quantize`` maps a float tensor to integers q and a scale (and a zero point): symmetric
absmax quantisation, scale = max|x| / (2^(bits−1) − 1), q = round(x / scale), as LLM.int8()
calls it (Dettmers et al., 2022, §2), or asymmetric (zero-point) quantisation, scale =
(max − min) / (2^bits − 1), whose grid covers [min, max]. One scale per tensor, per index
along one axis (per channel, per token) or per contiguous group of ``group_size`` along the
last dimension. ``dequantize`` gives back (q − zero_point) · scale. Rounding is half to even
(``torch.round``). ``kv_attention_error`` measures what quantising K and V does to the
output of attention, the K per channel and V per token split of KIVI (Liu et al., 2024, §3).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from attention_qa.attention import scaled_dot_product_attention
from attention_qa.validation import require_positive_int, require_tensor, shape_str


@dataclass(frozen=True)
class QTensor:
    """q: integers, x's shape; scale and zero_point broadcast against q (against q viewed as
    (..., groups, group_size) when ``group_size`` is set)."""

    q: torch.Tensor
    scale: torch.Tensor
    zero_point: torch.Tensor
    group_size: int | None = None


def quantize(x: torch.Tensor, bits: int = 8, *, symmetric: bool = True, axis: int | None = None,
             group_size: int | None = None) -> QTensor:
    """Round-to-nearest quantisation of ``x`` to ``bits``-bit integers.

    One scale for the whole tensor (default), one per index along ``axis`` (the other
    dimensions share it), or one per contiguous group of ``group_size`` entries along the
    last dimension. Symmetric: scale = absmax / (2^(bits−1) − 1), q in ±(2^(bits−1) − 1),
    zero_point 0. Asymmetric: min and max taken with 0 included (as PyTorch's observers do,
    so that 0 is exact), scale = (max − min) / (2^bits − 1), zero_point = round(−min / scale),
    q = round(x / scale) + zero_point in [0, 2^bits − 1]. A group of zeros gets scale 1.
    """
    bits = _check(x, bits, axis, group_size)
    if group_size is not None:
        grouped = x.reshape(*x.shape[:-1], x.shape[-1] // group_size, group_size)  # (..., G, g)
        dims = (-1,)
    else:
        grouped = x
        dims = tuple(i for i in range(x.ndim) if axis is None or i != axis % x.ndim)
    if symmetric:
        qmin, qmax = -(2 ** (bits - 1) - 1), 2 ** (bits - 1) - 1
        absmax = grouped.abs().amax(dim=dims, keepdim=True) if dims else grouped.abs()
        scale = absmax / qmax
        scale = torch.where(scale == 0, torch.ones_like(scale), scale)
        zero_point = torch.zeros_like(scale)
    else:
        qmin, qmax = 0, 2**bits - 1
        if dims:
            low = grouped.amin(dim=dims, keepdim=True).clamp(max=0)
            high = grouped.amax(dim=dims, keepdim=True).clamp(min=0)
        else:
            low, high = grouped.clamp(max=0), grouped.clamp(min=0)
        scale = (high - low) / qmax
        scale = torch.where(scale == 0, torch.ones_like(scale), scale)
        zero_point = torch.round(-low / scale).clamp(qmin, qmax)
    q = (torch.round(grouped / scale) + zero_point).clamp(qmin, qmax)
    q = q.reshape(x.shape).to(_int_dtype(qmin, qmax))
    return QTensor(q, scale, zero_point, group_size)


def dequantize(qt: QTensor) -> torch.Tensor:
    """(q − zero_point) · scale, in the scale's dtype and q's shape."""
    if not isinstance(qt, QTensor):
        raise TypeError(f"dequantize takes a QTensor from quantize, got {type(qt).__name__}")
    q = qt.q.to(qt.scale.dtype)
    if qt.group_size is not None:
        q = q.reshape(*q.shape[:-1], q.shape[-1] // qt.group_size, qt.group_size)
    return ((q - qt.zero_point) * qt.scale).reshape(qt.q.shape)


def fake_quantize(x: torch.Tensor, bits: int = 8, **options) -> torch.Tensor:
    """dequantize(quantize(x, bits, **options)): x on its quantisation grid."""
    return dequantize(quantize(x, bits, **options))


def relative_error(x_hat: torch.Tensor, x: torch.Tensor) -> float:
    """‖x̂ − x‖ / ‖x‖ (Frobenius norms)."""
    norm = x.double().norm().item()
    if norm == 0:
        raise ValueError("x is all zeros: its relative error is undefined")
    return (x_hat.double() - x.double()).norm().item() / norm


def kv_attention_error(q, k, v, bits: int, key_axis: int | None, value_axis: int | None,
                       mask=None) -> dict:
    """Quantise K and V symmetrically (one scale per index along ``key_axis`` /
    ``value_axis`` of the (…, m, d) caches: −1 per channel, −2 per token, None per tensor)
    and compare attention's output with the full-precision one.

    Returns the relative errors of K, V and of the output softmax(q K̂ᵀ/√d) V̂.
    """
    require_tensor("k", k, min_ndim=2, floating=True)
    require_tensor("v", v, min_ndim=2, floating=True)
    k_hat = fake_quantize(k, bits, axis=key_axis)
    v_hat = fake_quantize(v, bits, axis=value_axis)
    exact, _ = scaled_dot_product_attention(q, k, v, mask)
    approx, _ = scaled_dot_product_attention(q, k_hat, v_hat, mask)
    return {"K": relative_error(k_hat, k), "V": relative_error(v_hat, v),
            "output": relative_error(approx, exact)}


def _int_dtype(qmin: int, qmax: int) -> torch.dtype:
    for dtype in (torch.int8, torch.uint8, torch.int16, torch.int32):
        info = torch.iinfo(dtype)
        if info.min <= qmin and qmax <= info.max:
            return dtype
    return torch.int64


def _check(x, bits, axis, group_size) -> int:
    require_tensor("x", x, floating=True)
    require_positive_int("bits", bits)
    if not 2 <= bits <= 16:
        raise ValueError(f"bits must be between 2 and 16, got {bits}")
    if not torch.isfinite(x).all():
        raise ValueError("x holds NaN or inf: there is no scale for it")
    if axis is not None and group_size is not None:
        raise ValueError("give axis or group_size, not both")
    if axis is not None:
        if isinstance(axis, bool) or not isinstance(axis, int) or not -x.ndim <= axis < x.ndim:
            raise ValueError(f"axis={axis!r} is out of range for x of shape "
                             f"{shape_str(x.shape)}")
    if group_size is not None:
        require_positive_int("group_size", group_size)
        if x.ndim == 0 or x.shape[-1] % group_size != 0:
            last = x.shape[-1] if x.ndim else "no"
            raise ValueError(f"group_size={group_size} must divide x's last dimension, but x "
                             f"has shape {shape_str(x.shape)} ({last} entries)")
    return bits


def fp8_limits(exponent_bits: int, mantissa_bits: int, ieee_like: bool) -> dict:
    """The largest finite value, the smallest normal value and the relative step (2^−m) of
    an 8-bit float with bias 2^(e−1) − 1. ``ieee_like`` (E5M2): the top exponent is kept for
    inf and NaN; otherwise (E4M3, Micikevicius et al., 2022, Table 1) only the all-ones
    mantissa of the top exponent is NaN, so the top exponent holds numbers too."""
    require_positive_int("exponent_bits", exponent_bits)
    require_positive_int("mantissa_bits", mantissa_bits)
    bias = 2 ** (exponent_bits - 1) - 1
    top = 2**exponent_bits - 1  # the largest exponent field
    if ieee_like:
        largest = 2.0 ** (top - 1 - bias) * (2 - 2.0**-mantissa_bits)
    else:
        largest = 2.0 ** (top - bias) * (2 - 2 * 2.0**-mantissa_bits)
    return {"max": largest, "min_normal": 2.0 ** (1 - bias),
            "step": 2.0**-mantissa_bits, "bits": 1 + exponent_bits + mantissa_bits,
            "decades": math.log10(largest / 2.0 ** (1 - bias))}


# q43's toy: one scale per tensor, per row, per column or per group of 8 along the rows, for a
# weight matrix W (d_out × d_in, rows = output channels) and a K/V cache (rows = tokens,
# columns = channels). Options for (W, K, V).
GRANULARITIES = {
    "per tensor": ({}, {}, {}),
    "per row": ({"axis": 0}, {"axis": 0}, {"axis": 0}),
    "per column": ({"axis": 1}, {"axis": 1}, {"axis": 1}),
    "per group of 8": ({"group_size": 8}, {"group_size": 8}, {"group_size": 8}),
    "K per column, V per row": ({"axis": 0}, {"axis": 1}, {"axis": 0}),
}
TOY_TOKENS, TOY_CHANNELS, TOY_D_IN, TOY_OUTLIER_CHANNEL = 32, 16, 64, 3


def toy_tensors(outlier_factor: float = 1.0, seed: int = 43) -> tuple:
    """q, K, V (32 tokens × 16 channels) and W (16 × 64), standard normal (W divided by √64),
    float64, with K's channel 3 multiplied by ``outlier_factor``."""
    g = torch.Generator().manual_seed(seed)
    q, k, v = (torch.randn(TOY_TOKENS, TOY_CHANNELS, generator=g, dtype=torch.float64)
               for _ in range(3))
    w = torch.randn(TOY_CHANNELS, TOY_D_IN, generator=g, dtype=torch.float64) / TOY_D_IN**0.5
    k[:, TOY_OUTLIER_CHANNEL] *= outlier_factor
    return q, k, v, w


def granularity_errors(bits: int, granularity: str, outlier_factor: float = 1.0) -> dict:
    """Relative errors of W, K, V and of attention's output softmax(q K̂ᵀ/√d) V̂ on the toy,
    each quantised symmetrically with the scales ``granularity`` names; also K̂ − K."""
    if granularity not in GRANULARITIES:
        raise ValueError(f"granularity must be one of {list(GRANULARITIES)}, got "
                         f"{granularity!r}")
    q, k, v, w = toy_tensors(outlier_factor)
    w_opts, k_opts, v_opts = GRANULARITIES[granularity]
    w_hat = fake_quantize(w, bits, **w_opts)
    k_hat = fake_quantize(k, bits, **k_opts)
    v_hat = fake_quantize(v, bits, **v_opts)
    exact, _ = scaled_dot_product_attention(q, k, v)  # (tokens, channels)
    approx, _ = scaled_dot_product_attention(q, k_hat, v_hat)
    return {"W": relative_error(w_hat, w), "K": relative_error(k_hat, k),
            "V": relative_error(v_hat, v), "output": relative_error(approx, exact),
            "K error": k_hat - k}
