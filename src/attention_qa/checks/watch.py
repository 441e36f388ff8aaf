"""Watching a learner's torch calls, for what its code does rather than how it is written.

``Precision`` notes the least precise floating dtype along the tensors (and the arrays and
numbers taken out of them) that the learner's answer was computed from
(``common.call_learner`` runs every learner under it). ``Work`` counts, at the dispatch
level (inside ``einsum`` and ``matmul`` too), the elements every op computes and the largest
tensor: q20 compares the work at two sizes to tell linear from quadratic cost, and refuses
an answer PyTorch computed less than itself for. ``NoScoreMatrix`` notes the first tensor
with a dimension of n and one of m (q20's n × m weights). ``BlockReads`` follows where the
score columns lie in each tensor and how many it spans, which too-wide reductions (einsum
and norms included) it was computed from, and what torch did not compute from the scores
(q21's online softmax). None of them sees NumPy's or plain Python's work.
"""

from __future__ import annotations

import numpy as np
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
    functions called while it is active (None when no floating tensor came out).

    Each output also carries the least precise floating dtype along the tensors it was
    computed from (its own and its inputs', ``FLOWS``), so ``lowest_in(result)`` tells the
    precision of what the learner returned, whatever throwaway tensor was made beside it.
    """

    def __init__(self):
        super().__init__()
        self.lowest = None
        self.widest = {}  # dtype → the most elements one output of that dtype held
        self.exported = []  # (object, flow): arrays, lists and numbers taken out of tensors

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        outputs = [t for t in tensors_in(out) if t.dtype in _ORDER]
        for t in outputs:
            self.lowest = _less_precise(self.lowest, t.dtype)
            self.widest[t.dtype] = max(self.widest.get(t.dtype, 0), t.numel())
        flow = None
        for t in tensors_in(list(args) + list(kwargs.values())):
            flow = _less_precise(flow, _flow_of(t))
        if isinstance(out, (np.ndarray, np.generic, list, float)) and flow is not None:
            # numbers taken out of torch (numpy(), tolist(), item(), float(x)): their flow
            self.exported.append((out, flow))
        if outputs:
            for t in outputs:
                try:
                    setattr(t, FLOWS, _less_precise(_less_precise(flow, _flow_of(t)), t.dtype))
                except (AttributeError, RuntimeError):  # a tensor that takes no attributes
                    pass
        return out

    def lowest_in(self, result):
        """The least precise floating dtype the tensors in ``result`` (nested tuples, lists
        and dict values) were computed from; for an answer that is not a tensor (a NumPy
        array or numbers, whose history is lost) the least precise dtype of an output at
        least as large as the answer's largest part; None when nothing was computed."""
        flows, unknown = [], []
        for x in _leaves(result):
            if isinstance(x, torch.Tensor):
                flows.append(_flow_of(x))
                continue
            taken = next((f for obj, f in self.exported if obj is x), None)
            if taken is not None:
                flows.append(taken)
            elif isinstance(x, (list, tuple)) and not x:
                continue
            else:
                unknown.append(x)
        if unknown:
            size = max(_size(x) for x in unknown)
            flows += [d for d, n in self.widest.items() if n >= size]
        return max((f for f in flows if f is not None), key=_ORDER.index, default=None)


FLOWS = "_precision_flows"  # on a tensor: the least precise float dtype it was computed from


def _less_precise(a, b):
    """The less precise of two floating dtypes (None and non-float dtypes count as absent)."""
    if b not in _ORDER:
        return a
    if a is None or _ORDER.index(b) > _ORDER.index(a):
        return b
    return a


def _flow_of(t: torch.Tensor):
    """The least precise float dtype ``t`` was computed from (its own dtype if unwatched)."""
    return _less_precise(getattr(t, FLOWS, None), t.dtype)


def _leaves(x):
    """The parts of a result: tensors, arrays, numbers, and lists of numbers (whole, as
    ``tolist`` gives them)."""
    if isinstance(x, dict):
        x = list(x.values())
    if isinstance(x, (tuple, list)) and not _numbers_only(x):
        for item in x:
            yield from _leaves(item)
    elif x is not None:
        yield x


def _numbers_only(x) -> bool:
    """Whether a (nested) list or tuple holds numbers only, none of them tensors."""
    if isinstance(x, (tuple, list)):
        return bool(x) and all(_numbers_only(item) for item in x)
    return isinstance(x, (int, float))


def _size(x) -> int:
    try:
        return int(np.size(x))
    except (TypeError, ValueError):  # something np.size cannot measure counts as one number
        return 1


# ATen ops that bring numbers in, copy, cast or view them without computing any
_MOVES = {"detach", "lift_fresh", "lift", "lift_fresh_copy", "alias", "_to_copy", "clone",
          "copy_", "copy", "view", "_unsafe_view", "t", "transpose", "permute", "expand",
          "unsqueeze", "squeeze", "slice", "select", "as_strided", "reshape", "empty",
          "empty_strided", "_reshape_alias", "split", "unbind", "contiguous", "set_"}


class Work(TorchDispatchMode):
    """Counts ``elements`` (the sum of the sizes of every tensor every ATen op returns),
    ``ops`` and ``largest`` (the shape of the largest of them) while it is active, and
    ``computed``: the elements of the ops that compute (not those that only bring numbers in
    from NumPy or Python, copy, cast or view them)."""

    def __init__(self):
        super().__init__()
        self.elements, self.ops, self.largest, self.computed = 0, 0, (), 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        self.ops += 1
        moves = func.overloadpacket.__name__ in _MOVES
        for t in tensors_in(out):
            self.elements += t.numel()
            self.computed += 0 if moves else t.numel()
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


_DIM_AT_2 = {"topk", "kthvalue", "norm", "linalg_vector_norm", "linalg_norm",
             "linalg_matrix_norm", "normalize"}


_LAST_BY_DEFAULT = {"sort", "topk", "kthvalue"}


_PRODUCTS = {"matmul", "__matmul__", "mm", "mv", "bmm", "dot", "inner", "vdot", "vecdot"}


COVER = "_online_softmax_columns"  # on a tensor: how many score columns its last dim spans
FROM = "_online_softmax_from"  # on a tensor: computed (in torch) from the scores
_WIDE = "_online_softmax_wide"  # on a tensor: (order, op, columns) of a too-wide reduction it
# was computed from


AXIS = "_online_softmax_axis"  # on a tensor: where its score columns lie, counted from the
# end (−1: the last dim; −2 after ``unsqueeze(-1)`` or a transpose)


def _axis(t: torch.Tensor) -> int:
    return getattr(t, AXIS, -1)


def _reduces_last_dim(name: str, args: tuple, kwargs: dict, x: torch.Tensor) -> bool:
    """Whether a call of the reduction ``name`` on ``x`` folds x's score columns (its last
    dim unless they were moved, ``AXIS``)."""
    axis = _axis(x) % max(x.ndim, 1)
    if name in _PRODUCTS:  # the first operand's last dim, the second's last but one
        second = len(args) > 1 and args[1] is x and args[0] is not x and x.ndim >= 2
        return axis == x.ndim - (2 if second else 1)
    if "dim" in kwargs or "axis" in kwargs:
        dim = kwargs.get("dim", kwargs.get("axis"))
    else:
        at = 2 if name in _DIM_AT_2 else 1
        dim = args[at] if len(args) > at else None
        if isinstance(dim, torch.Tensor):  # torch.max(a, b): elementwise, no reduction
            return False
        if dim is None and name in _LAST_BY_DEFAULT:
            dim = -1
        if dim is None and name == "normalize":
            dim = 1
    if dim is None:
        return True
    dims = dim if isinstance(dim, (tuple, list)) else (dim,)
    return any(d % max(x.ndim, 1) == axis for d in dims if isinstance(d, int))


def _einsum_folds(args: tuple, block_size: int):
    """The first operand of an ``einsum`` call spanning more than ``block_size`` score
    columns whose column index the result sums over, or None."""
    if not args or not isinstance(args[0], str):
        return None
    operands = args[1:]
    if len(operands) == 1 and isinstance(operands[0], (tuple, list)):
        operands = tuple(operands[0])
    equation = args[0].replace(" ", "")
    inputs, _, output = equation.partition("->")
    terms = inputs.split(",")
    if not _:
        letters = inputs.replace(",", "").replace(".", "")
        output = "..." + "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    for term, x in zip(terms, operands, strict=False):
        if not isinstance(x, torch.Tensor) or getattr(x, COVER, 0) <= block_size:
            continue
        explicit = term.replace("...", "")
        if "..." in term:
            head, tail = term.split("...")
            tokens = list(head) + ["..."] * (x.ndim - len(explicit)) + list(tail)
        else:
            tokens = list(term)
        if len(tokens) != x.ndim:
            continue
        token = tokens[_axis(x) % x.ndim]
        if token not in output:
            return x
    return None


def _moved_axis(name: str, args: tuple, kwargs: dict, x: torch.Tensor, out: torch.Tensor):
    """Where x's score columns lie in ``out`` (from the end) after a view that moves dims
    (unsqueeze, transpose, mT, permute, movedim), or None when ``name`` moves none."""
    pos = _axis(x) % max(x.ndim, 1)
    if name in {"unsqueeze", "unsqueeze_"}:
        d = args[1] if len(args) > 1 else kwargs.get("dim", 0)
        d = d % out.ndim
        return (pos + (1 if d <= pos else 0)) - out.ndim
    if name in {"transpose", "swapaxes", "swapdims", "transpose_"} and x.ndim:
        a = args[1] if len(args) > 1 else kwargs.get("dim0")
        b = args[2] if len(args) > 2 else kwargs.get("dim1")
        a, b = a % x.ndim, b % x.ndim
        pos = b if pos == a else a if pos == b else pos
        return pos - out.ndim
    if name == "T":
        return (x.ndim - 1 - pos) - out.ndim
    if name in {"mT", "mH", "t"} and x.ndim >= 2:
        pos = {x.ndim - 1: x.ndim - 2, x.ndim - 2: x.ndim - 1}.get(pos, pos)
        return pos - out.ndim
    if name in {"permute"}:
        order = args[1:] if len(args) > 1 and isinstance(args[1], int) else (
            args[1] if len(args) > 1 else kwargs.get("dims"))
        order = [o % x.ndim for o in order]
        return order.index(pos) - out.ndim
    return None


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
        self.folds = 0  # reductions over score columns (of any width) seen
        self.exported = []  # (array, too-wide mark or ()): arrays taken out of such tensors

    def found_in(self, returned) -> tuple | None:
        """The first too-wide reduction (op, columns) that the tensors ``returned`` (the
        result and the trace) were computed from, NumPy arrays taken out of such tensors
        (``numpy()``, ``np.asarray``) too; when they hold numbers that are not tensors
        (whose history is lost), the first too-wide reduction made at all."""
        marks = []
        for x in _flatten(returned):
            if isinstance(x, torch.Tensor):
                marks += [getattr(x, _WIDE)] if hasattr(x, _WIDE) else []
            elif isinstance(x, np.ndarray) and self._exported(x) is not None:
                marks += [m for m in (self._exported(x),) if m != ()]
            else:
                return self.found and self.found[1:]
        return min(marks)[1:] if marks else None

    def unseen(self, returned) -> list:
        """The tensors and NumPy arrays in ``returned`` that PyTorch did not compute from
        the scores while watched (made in NumPy or from Python numbers), whose reads the
        watch cannot follow; Python numbers are not counted."""
        out = []
        for x in _flatten(returned):
            if isinstance(x, torch.Tensor) and not (hasattr(x, FROM) or hasattr(x, COVER)):
                out.append(x)
            elif isinstance(x, np.ndarray) and self._exported(x) is None:
                out.append(x)
        return out

    def _exported(self, array):
        """The too-wide mark (or ()) of the tensor the array ``array`` was taken out of,
        or None when it was not taken out of a tensor computed from the scores."""
        return next((mark for a, mark in self.exported if a is array), None)

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = getattr(func, "__name__", "")
        if name == "__get__":  # a property: x.mT, x.T …
            prop = getattr(func, "__self__", None)
            name = next((n for n in ("mT", "mH", "T") if prop is getattr(torch.Tensor, n)),
                        name)
        if "softmax" in name:
            raise AssertionError(
                "your function calls softmax: compute the running max and sum block by block"
            )
        out = func(*args, **kwargs)
        self.calls += 1
        inputs = list(tensors_in(list(args) + list(kwargs.values())))
        span = max((getattr(t, COVER, 0) for t in inputs), default=0)
        marks = [getattr(t, _WIDE) for t in inputs if hasattr(t, _WIDE)]
        if name == "einsum":
            wide = _einsum_folds(args, self.block_size)
            if wide is not None:
                marks.append((self.calls, name, getattr(wide, COVER)))
                self.found = self.found or marks[-1]
        elif name in _DIM_AT_1 | _DIM_AT_2 | _PRODUCTS:
            first = args[0] if args and isinstance(args[0], torch.Tensor) else None
            operands = (first,) if name not in _PRODUCTS else inputs[:2]
            wide = [t for t in operands
                    if t is not None and getattr(t, COVER, 0) > self.block_size
                    and _reduces_last_dim(name, args, kwargs, t)]
            if wide:
                marks.append((self.calls, name, getattr(wide[0], COVER)))
                self.found = self.found or marks[-1]
            self.folds += any(getattr(t, COVER, 0) and _reduces_last_dim(name, args, kwargs, t)
                              for t in operands if t is not None)
        elif span and not (name.startswith("new_") or name.endswith("_like")):
            widest = max((t for t in inputs if getattr(t, COVER, 0) == span), key=id)
            for t in tensors_in(out):
                moved = _moved_axis(name, args, kwargs, widest, t)
                axis = moved if moved is not None else _axis(widest)
                if t.ndim < -axis:
                    continue
                # a columns dim of stride 1 is still the scores' columns (not a transpose
                # done by copying, not scores[..., j] with the column indexed away)
                if t.shape[axis] == 1 or t.stride(axis) == 1 or moved is not None:
                    setattr(t, COVER, t.shape[axis])
                    setattr(t, AXIS, axis)
        if marks:
            for t in tensors_in(out):
                setattr(t, _WIDE, min(marks + ([getattr(t, _WIDE)] if hasattr(t, _WIDE) else [])))
        if any(hasattr(t, FROM) or hasattr(t, COVER) for t in inputs):
            for t in tensors_in(out):
                setattr(t, FROM, True)
            if isinstance(out, np.ndarray):  # x.numpy(), np.asarray(x): taken out of torch
                self.exported.append((out, min(marks) if marks else ()))
        return out


def _flatten(x):
    """The leaves of nested tuples and lists."""
    if isinstance(x, (tuple, list)):
        for item in x:
            yield from _flatten(item)
    else:
        yield x
