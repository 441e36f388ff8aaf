"""Watching a learner's torch calls, for what its code does rather than how it is written.

``Precision`` notes the least precise floating dtype among the tensors the learner's torch
calls produce (``common.call_learner`` runs every learner under it). ``Work`` counts, at the
dispatch level (inside ``einsum`` and ``matmul`` too), the elements every op computes and the
largest tensor: q20 compares the work at two sizes to tell linear from quadratic cost. q21's
``_BlockReads`` (in q21.py) follows which score columns each tensor spans.
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
