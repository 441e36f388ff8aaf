"""The checker of q40's exercise: ``check_clip_by_global_norm``."""

from __future__ import annotations

import numbers
from typing import Callable

import numpy as np
import torch

from attention_qa.checks.common import as_answer, call_learner, close

CLIP_SLIPS = {
    "per_tensor": (
        "each gradient is clipped by its own norm: clipping by the global norm scales every "
        "tensor by one factor, max_norm / ‖all gradients‖, so the update keeps its direction"
    ),
    "always_scale": (
        "the gradients were scaled to norm max_norm although their norm was already below it: "
        "clipping only ever shrinks, the factor is min(1, max_norm / total_norm)"
    ),
    "sum_of_norms": (
        "the total norm is the sum of the tensors' norms: it is the square root of the sum of "
        "their squared norms, √(Σ ‖g_i‖²)"
    ),
    "no_sqrt": (
        "the total norm is missing its square root: Σ g² is the squared norm"
    ),
    "clip_value": (
        "each element was clamped to [−max_norm, max_norm] (clipping by value, "
        "clip_grad_value_): clipping by norm scales whole tensors and keeps their direction"
    ),
    "mean_norm": (
        "the total norm is the root of the mean of the squares: it is the root of their sum "
        "over every element of every tensor"
    ),
}


def clip_variant(grads, max_norm, bug: str | None = None, eps: float = 0.0):
    """The gradients clipped by their global L2 norm, or one slip's version of them.

    ``eps = 0`` is the exercise's rule, g · min(1, max_norm / total_norm); ``eps = 1e-6`` is
    PyTorch's ``clip_grad_norm_``, max_norm / (total_norm + 1e-6), which the checker also
    accepts (and whose slips it also names)."""
    grads = [g.double() for g in grads]
    squares = torch.stack([g.pow(2).sum() for g in grads]).sum()
    if bug == "clip_value":
        return [g.clamp(-max_norm, max_norm) for g in grads]
    if bug == "per_tensor":
        return [g * torch.clamp(max_norm / (g.norm() + eps), max=1.0) for g in grads]
    total = {
        "sum_of_norms": sum(g.norm() for g in grads),
        "no_sqrt": squares,
        "mean_norm": (squares / sum(g.numel() for g in grads)).sqrt(),
    }.get(bug, squares.sqrt())
    factor = max_norm / (total + eps)
    if bug != "always_scale":
        factor = torch.clamp(factor, max=1.0)
    return [g * factor for g in grads]


TORCH_EPS = 1e-6  # torch.nn.utils.clip_grad_norm_ divides by total_norm + 1e-6


def _case_grads(g: torch.Generator, shapes, scale: float):
    return [torch.randn(shape, generator=g, dtype=torch.float64) * scale for shape in shapes]


def _one_number(x) -> bool:
    """Whether ``x`` is a single number: a Python or NumPy number, or a one-element tensor
    or array (a total norm), not a clipped gradient."""
    if isinstance(x, (bool, np.bool_)):
        return False
    if isinstance(x, numbers.Number):
        return True
    if isinstance(x, torch.Tensor):
        return x.numel() == 1
    return isinstance(x, np.ndarray) and x.size == 1


def check_clip_by_global_norm(fn: Callable) -> None:
    """Check ``fn(grads, max_norm)`` → the list of gradients clipped by their global L2 norm:
    every tensor times min(1, max_norm / total_norm), total_norm = √(Σ over all tensors of
    Σ g²), in the order given. ``grads`` is a list of float64 tensors of any shapes (a
    matrix, a bias vector, a 3-D tensor); the inputs must not be changed. Each clipped
    gradient may come back as a tensor, a NumPy array or a (nested) list."""
    gen = torch.Generator().manual_seed(40)
    cases = [
        ("a (4, 3) weight and a (3,) bias, total norm about 35, max_norm 1.0",
         _case_grads(gen, [(4, 3), (3,)], 10.0), 1.0),
        ("three tensors of shapes (2, 3, 4), (5,) and (6, 2), total norm about 150, "
         "max_norm 5.0", _case_grads(gen, [(2, 3, 4), (5,), (6, 2)], 20.0), 5.0),
        ("one large and one tiny tensor, (8, 8) and (2,), max_norm 2.0",
         [torch.randn(8, 8, generator=gen, dtype=torch.float64) * 30.0,
          torch.randn(2, generator=gen, dtype=torch.float64) * 0.01], 2.0),
        ("a (3, 4) weight and a (4,) bias with total norm below max_norm 10.0: nothing changes",
         _case_grads(gen, [(3, 4), (4,)], 0.5), 10.0),
    ]
    for case, grads, max_norm in cases:
        expected = clip_variant(grads, max_norm)
        copies = [g.clone() for g in grads]
        given = list(copies)  # the list itself, to tell a changed list from changed tensors
        got = call_learner(fn, case, given, max_norm)
        if any(not torch.equal(c, g) for c, g in zip(copies, grads, strict=True)):
            raise AssertionError(
                f"on {case}, your function changed the gradients it was given: return new "
                f"tensors (or clone first); PyTorch's clip_grad_norm_ works in place, this "
                f"exercise does not")
        if len(given) != len(copies) or any(
                a is not b for a, b in zip(given, copies, strict=True)):
            raise AssertionError(
                f"on {case}, you changed the list you were given (its items were replaced): "
                f"build a new list of the clipped gradients and return it")
        if (isinstance(got, tuple) and len(got) == 2 and isinstance(got[0], (list, tuple))
                and len(got[0]) == len(grads) and _one_number(got[1])):
            got = got[0]  # (clipped, total_norm), as recipe.clip_grad_norm returns
        if not isinstance(got, (list, tuple)) or len(got) != len(grads):
            raise AssertionError(
                f"on {case}, return a list of {len(grads)} clipped gradients, one per input, "
                f"in order; got {type(got).__name__}"
                + (f" of length {len(got)}" if isinstance(got, (list, tuple)) else ""))
        answers = []
        for i, (item, want) in enumerate(zip(got, expected, strict=True)):
            answer = as_answer(item, case, f"clipped gradient {i}")
            if tuple(answer.shape) != tuple(want.shape):
                raise AssertionError(
                    f"on {case}, clipped gradient {i} has shape {tuple(answer.shape)} but "
                    f"should be {tuple(want.shape)}, the shape of grads[{i}]")
            answers.append(answer)
        flat_got = torch.cat([a.reshape(-1) for a in answers])
        if any(close(flat_got, torch.cat([e.reshape(-1) for e in clip_variant(
                grads, max_norm, eps=eps)])) for eps in (0.0, TORCH_EPS)):
            continue  # the spec's rule, or PyTorch's (with its 1e-6)
        for bug, message in CLIP_SLIPS.items():
            for eps in (0.0, TORCH_EPS):
                wrong = torch.cat([w.reshape(-1)
                                   for w in clip_variant(grads, max_norm, bug, eps)])
                if close(flat_got, wrong):
                    raise AssertionError(f"on {case}, {message}")
        raise AssertionError(
            f"on {case}, the clipped gradients are off from g · min(1, max_norm / "
            f"√(Σ g²)) by up to "
            f"{(flat_got.double() - torch.cat([e.reshape(-1) for e in expected])).abs().max():.3g}")
