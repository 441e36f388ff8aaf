"""Input checks shared by the public helpers.

Every message names the argument, the shape it got and the shape it wanted, so a
learner can fix the call without reading the helper's source.
"""

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


def broadcast_or_raise(name: str, shape, target, what: str) -> torch.Size:
    """Broadcast ``shape`` with ``target``; on failure name the argument and both shapes."""
    try:
        return torch.broadcast_shapes(tuple(shape), tuple(target))
    except RuntimeError:
        raise ValueError(
            f"{name} has shape {shape_str(shape)} which does not broadcast to {what} "
            f"{shape_str(target)}"
        ) from None
