"""Watching a learner's torch calls, for what its code does rather than how it is written.

``Precision`` notes the least precise floating dtype among the tensors the learner's torch
calls produce (``common.call_learner`` runs every learner under it). ``Work`` counts, at the
dispatch level (inside ``einsum`` and ``matmul`` too), the elements every op computes and the
largest tensor: q20 compares the work at two sizes to tell linear from quadratic cost.
``NoScoreMatrix`` notes the first tensor with a dimension of n and one of m (q20's n × m
weights). ``BlockReads`` follows which score columns each tensor spans and which too-wide
reductions it was computed from (q21's online softmax).
"""

from __future__ import annotations

import torch
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode


def tensors_in(x):
    """The tensors in an op's output (a tensor, or tuples and lists of them)."""
    if isinstance(x, torch.Tensor):
        yield x
    elif isinstance(x, (tuple, list)):
        for item in x:
            yield from tensors_in(item)


_tensors = tensors_in  # the name older code imports

# from most to least precise
_ORDER = (torch.float64, torch.float32, torch.float16, torch.bfloat16)


class Precision(TorchFunctionMode):
    """Notes ``lowest``: the least precise floating dtype among the outputs of the torch
    functions called while it is active (None when no floating tensor came out)."""

    def __init__(self):
        super().__init__()
        self.lowest = None

    def __torch_function__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        for t in tensors_in(out):
            if t.dtype in _ORDER and (
                self.lowest is None or _ORDER.index(t.dtype) > _ORDER.index(self.lowest)
            ):
                self.lowest = t.dtype
        return out


class Work(TorchDispatchMode):
    """Counts ``elements`` (the sum of the sizes of every tensor every ATen op returns),
    ``ops`` and ``largest`` (the shape of the largest of them) while it is active."""

    def __init__(self):
        super().__init__()
        self.elements, self.ops, self.largest = 0, 0, ()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        self.ops += 1
        for t in tensors_in(out):
            self.elements += t.numel()
            if t.numel() > torch.Size(self.largest).numel():
                self.largest = tuple(t.shape)
        return out


class NoScoreMatrix(TorchDispatchMode):
    """Notes the first tensor any ATen op computes with a dimension of n and one of m.

    The dispatch level sees every intermediate, also those inside ``einsum`` and ``matmul``;
    n and m are chosen unlike every size built from the case's others, so such a tensor can
    only be an n × m matrix or hold one, as an (n, m, d_k) broadcast product does.
    """

    def __init__(self, n: int, m: int):
        super().__init__()
        self.n, self.m, self.found = n, m, None

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if self.found is None:
            for t in tensors_in(out):
                if self.n in t.shape and self.m in t.shape:
                    self.found = (tuple(t.shape), func.overloadpacket.__name__)
                    break
        return out


# Reductions (and matrix products, which sum too) whose dim is read as below; for the
# matrix products the contracted dim is the last of the first operand.
_DIM_AT_1 = {"amax", "amin", "max", "min", "sum", "nansum", "mean", "logsumexp", "cumsum",
             "cumprod", "cummax", "cummin", "logcumsumexp", "prod", "argmax", "argmin",
             "median", "nanmedian", "sort", "aminmax"}


_DIM_AT_2 = {"topk", "kthvalue"}


_LAST_BY_DEFAULT = {"sort", "topk", "kthvalue"}


_PRODUCTS = {"matmul", "__matmul__", "mm", "mv", "bmm", "dot", "inner", "vdot", "vecdot"}


COVER = "_online_softmax_columns"  # on a tensor: how many score columns its last dim spans
_WIDE = "_online_softmax_wide"  # on a tensor: (order, op, columns) of a too-wide reduction it
# was computed from


def _reduces_last_dim(name: str, args: tuple, kwargs: dict, x: torch.Tensor) -> bool:
    """Whether a call of the reduction ``name`` on ``x`` folds x's last dim."""
    if name in _PRODUCTS:
        return True
    if "dim" in kwargs or "axis" in kwargs:
        dim = kwargs.get("dim", kwargs.get("axis"))
    else:
        at = 2 if name in _DIM_AT_2 else 1
        dim = args[at] if len(args) > at else None
        if isinstance(dim, torch.Tensor):  # torch.max(a, b): elementwise, no reduction
            return False
        if dim is None and name in _LAST_BY_DEFAULT:
            dim = -1
    if dim is None:
        return True
    dims = dim if isinstance(dim, (tuple, list)) else (dim,)
    return any(d % max(x.ndim, 1) == x.ndim - 1 for d in dims if isinstance(d, int))


class BlockReads(TorchFunctionMode):
    """Watches every PyTorch call the learner makes for a reduction over too many scores.

    Each tensor carries the number of score columns its last dim spans: the scores all m,
    a slice ``scores[..., a:b]`` b − a, and the output of an elementwise op the span of its
    widest input (``exp(block − M)`` spans the block). A reduction's output spans nothing.
    A reduction over the last dim of a tensor spanning more than ``block_size`` columns
    (a max or sum over the whole row, or over the prefix read so far) is noted: an online
    softmax only ever folds one block into M and L. Every tensor computed from such a
    reduction carries it (``_WIDE``), so ``found_in`` tells whether what the learner returned
    depends on one; a check of the learner's own, such as ``result.sum(-1)`` compared with 1,
    does not count. Values taken out of tensors (``tolist``, ``item``) are not followed.
    """

    def __init__(self, block_size: int):
        super().__init__()
        self.block_size, self.found, self.calls = block_size, None, 0

    def found_in(self, returned) -> tuple | None:
        """The first too-wide reduction (op, columns) that the tensors ``returned`` (the
        result and the trace) were computed from; when the trace holds numbers that are not
        tensors (whose history is lost), the first too-wide reduction made at all."""
        result, trace = returned
        if not all(isinstance(x, torch.Tensor) for x in _flatten(trace)):
            return self.found and self.found[1:]
        values = [x for x in _flatten(returned) if isinstance(x, torch.Tensor)]
        marks = [getattr(x, _WIDE) for x in values if hasattr(x, _WIDE)]
        return min(marks)[1:] if marks else None

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = getattr(func, "__name__", "")
        if "softmax" in name:
            raise AssertionError(
                "your function calls softmax: compute the running max and sum block by block"
            )
        out = func(*args, **kwargs)
        self.calls += 1
        inputs = list(tensors_in(list(args) + list(kwargs.values())))
        span = max((getattr(t, COVER, 0) for t in inputs), default=0)
        marks = [getattr(t, _WIDE) for t in inputs if hasattr(t, _WIDE)]
        if name in _DIM_AT_1 | _DIM_AT_2 | _PRODUCTS:
            first = args[0] if args and isinstance(args[0], torch.Tensor) else None
            wide = [t for t in ((first,) if name not in {"dot", "inner", "vdot"} else inputs)
                    if t is not None and getattr(t, COVER, 0) > self.block_size]
            if wide and _reduces_last_dim(name, args, kwargs, wide[0]):
                marks.append((self.calls, name, getattr(wide[0], COVER)))
                self.found = self.found or marks[-1]
        elif span and not (name.startswith("new_") or name.endswith("_like")):
            for t in tensors_in(out):
                # a last dim of stride 1 is still the scores' last dim (not a transpose,
                # not scores[..., j] with the column indexed away)
                if t.ndim >= 1 and (t.shape[-1] == 1 or t.stride(-1) == 1):
                    setattr(t, COVER, t.shape[-1])
        if marks:
            for t in tensors_in(out):
                setattr(t, _WIDE, min(marks + ([getattr(t, _WIDE)] if hasattr(t, _WIDE) else [])))
        return out


def _flatten(x):
    """The leaves of nested tuples and lists."""
    if isinstance(x, (tuple, list)):
        for item in x:
            yield from _flatten(item)
    else:
        yield x
