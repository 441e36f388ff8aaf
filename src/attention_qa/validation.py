"""Input checks shared by the public helpers.

Every message names the argument, the shape it got and the shape it wanted, so a
learner can fix the call without reading the helper's source.
"""

import math
import numbers

import torch


def shape_str(shape) -> str:
    """``(2, 5, 8)`` for a shape; ``(8,)`` for a one-dimensional one."""
    dims = tuple(shape)
    return f"({dims[0]},)" if len(dims) == 1 else str(dims)


def require_tensor(name: str, x, *, min_ndim: int = 0, floating: bool = False) -> None:
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(x).__name__}")
    if x.ndim < min_ndim:
        raise ValueError(
            f"{name} has shape {shape_str(x.shape)} but needs at least {min_ndim} dimensions"
        )
    if floating and not x.is_floating_point():
        raise TypeError(f"{name} must be a floating-point tensor, got dtype {x.dtype}")


def require_positive_int(name: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return value


def require_nonnegative_int(name: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{name} must be a non-negative integer, got {value!r}")
    return value


def require_positive_number(name: str, value) -> float:
    """A positive, finite real number (not a bool), returned as a float."""
    if (isinstance(value, bool) or not isinstance(value, numbers.Real)
            or not 0 < value < math.inf):
        raise ValueError(f"{name} must be a positive, finite number, got {value!r}")
    return float(value)


def require_heads_divide(d_model: int, num_heads: int, width: str = "d_k") -> int:
    """Both positive and ``num_heads`` dividing ``d_model``; returns the head width."""
    require_positive_int("d_model", d_model)
    require_positive_int("num_heads", num_heads)
    if d_model % num_heads != 0:
        raise ValueError(
            f"num_heads={num_heads} must divide d_model={d_model} so that every head "
            f"gets the same width {width} = d_model / num_heads"
        )
    return d_model // num_heads


def require_weight_dtype(name: str, x: torch.Tensor, weight: torch.Tensor) -> None:
    """``x`` in the dtype of a module's weights, or a message saying how to match them."""
    if x.dtype != weight.dtype:
        raise TypeError(
            f"{name} has dtype {x.dtype} but the module's weights have dtype "
            f"{weight.dtype}; convert one to match (e.g. module.to({name}.dtype))"
        )


def require_generator(name: str, generator) -> None:
    """None (PyTorch's global random state) or a ``torch.Generator``."""
    if generator is not None and not isinstance(generator, torch.Generator):
        raise TypeError(
            f"{name} must be a torch.Generator or None, got {type(generator).__name__}"
        )


def broadcast_or_raise(name: str, shape, target, what: str) -> torch.Size:
    """Broadcast ``shape`` with ``target``; on failure name the argument and both shapes."""
    try:
        return torch.broadcast_shapes(tuple(shape), tuple(target))
    except RuntimeError:
        raise ValueError(
            f"{name} has shape {shape_str(shape)} which does not broadcast to {what} "
            f"{shape_str(target)}"
        ) from None


def check_qkv(q, k, v, mask, same_d_k: bool = True) -> None:
    """Validate q, k, v and mask for attention over (..., n, m) scores.

    same_d_k=False drops the check that q and k share their last dim: additive
    attention projects each into its own hidden space, so d_query and d_key may differ.
    """
    for name, x in (("q", q), ("k", k), ("v", v)):
        require_tensor(name, x, min_ndim=2, floating=True)
    if not q.dtype == k.dtype == v.dtype:
        raise TypeError(f"q, k and v must share a dtype, got {q.dtype}, {k.dtype} and {v.dtype}")
    d_k = q.shape[-1]
    if same_d_k and k.shape[-1] != d_k:
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
