"""q40's checker: right clippings in every form pass, each slip fails with its name."""

import numpy as np
import pytest
import torch

from attention_qa.checks import check_clip_by_global_norm
from attention_qa.checks.q40 import CLIP_SLIPS, clip_variant
from attention_qa.recipe import clip_grad_norm


def by_torch_utils(grads, max_norm):
    """PyTorch's own in-place clipping, on copies."""
    params = [torch.nn.Parameter(torch.zeros_like(g)) for g in grads]
    for p, g in zip(params, grads, strict=True):
        p.grad = g.clone()
    torch.nn.utils.clip_grad_norm_(params, max_norm)
    return [p.grad for p in params]


def by_flat_vector(grads, max_norm):
    """Flatten everything into one vector, clip it, cut it back into shapes."""
    flat = torch.cat([g.reshape(-1) for g in grads])
    norm = torch.linalg.vector_norm(flat)
    flat = flat * (max_norm / norm if norm > max_norm else 1.0)
    pieces = torch.split(flat, [g.numel() for g in grads])
    return [piece.reshape(g.shape) for piece, g in zip(pieces, grads, strict=True)]


def by_numpy(grads, max_norm):
    arrays = [g.numpy() for g in grads]
    total = np.sqrt(sum(float((a**2).sum()) for a in arrays))
    return [a * min(1.0, max_norm / total) for a in arrays]


def _clipped(result):
    """The list of clipped gradients (the package also returns the total norm)."""
    return result[0] if isinstance(result, tuple) else result


def in_float32(fn):
    return lambda grads, m: fn([g.float() for g in grads], m)


def as_lists(fn):
    return lambda grads, m: [torch.as_tensor(x).tolist() for x in _clipped(fn(grads, m))]


def as_numpy(fn):
    return lambda grads, m: [torch.as_tensor(x).numpy() for x in _clipped(fn(grads, m))]


RIGHT = {
    "torch utils": by_torch_utils,
    "flat vector": by_flat_vector,
    "numpy": by_numpy,
    "package (with its total norm)": clip_grad_norm,
}


@pytest.mark.parametrize("name", RIGHT)
@pytest.mark.parametrize("form", ["as is", "float32", "lists", "numpy", "tuple"])
def test_right_answers_in_every_form_pass(name, form):
    fn = RIGHT[name]
    wrapped = {
        "as is": fn,
        "float32": in_float32(fn),
        "lists": as_lists(fn),
        "numpy": as_numpy(fn),
        "tuple": lambda g, m: tuple(_clipped(fn(g, m))),
    }[form]
    assert check_clip_by_global_norm(wrapped) is None


@pytest.mark.parametrize("eps", [0.0, 1e-6], ids=["spec", "torch eps"])
@pytest.mark.parametrize("bug", CLIP_SLIPS)
def test_every_slip_fails_and_is_named(bug, eps):
    """Named whether the learner divides by total_norm (the spec) or total_norm + 1e-6."""
    with pytest.raises(AssertionError) as info:
        check_clip_by_global_norm(lambda g, m: clip_variant(g, m, bug, eps))
    assert CLIP_SLIPS[bug][:40] in str(info.value)
    with pytest.raises(AssertionError):
        check_clip_by_global_norm(as_lists(lambda g, m: clip_variant(g, m, bug, eps)))


@pytest.mark.parametrize("eps", [0.0, 1e-6], ids=["spec", "torch eps"])
def test_the_spec_and_torchs_epsilon_both_pass(eps):
    """The exercise's rule has no ε; PyTorch's clip_grad_norm_ adds 1e-6: both are right."""
    assert check_clip_by_global_norm(lambda g, m: clip_variant(g, m, eps=eps)) is None


def test_the_reference_is_the_spec_without_epsilon():
    """Near a total norm of 1.2 the 1e-6 moves the answer by ~7e-7 of its size: the
    reference must be the spec's g · min(1, max_norm / total_norm), ε-free."""
    g = [torch.tensor([0.72, 0.96], dtype=torch.float64)]  # norm 1.2
    spec = clip_variant(g, 1.0)[0]
    assert torch.allclose(spec, g[0] / 1.2, rtol=0, atol=1e-15)
    assert (clip_variant(g, 1.0, eps=1e-6)[0] - spec).abs().max() > 1e-7


def test_in_place_clipping_is_refused():
    def in_place(grads, max_norm):
        total = torch.sqrt(sum((g**2).sum() for g in grads))
        for g in grads:
            g.mul_(min(1.0, max_norm / total.item()))
        return grads

    with pytest.raises(AssertionError, match="changed the gradients it was given"):
        check_clip_by_global_norm(in_place)


def test_wrong_forms_are_refused():
    with pytest.raises(AssertionError, match="return a list of 2 clipped gradients"):
        check_clip_by_global_norm(lambda g, m: torch.cat([x.reshape(-1) for x in g]))
    with pytest.raises(AssertionError, match="has shape"):
        check_clip_by_global_norm(lambda g, m: [x.reshape(-1) for x in g])


def test_the_cases_say_the_norms_they_have():
    gen = torch.Generator().manual_seed(40)
    first = [torch.randn(s, generator=gen, dtype=torch.float64) * 10 for s in ((4, 3), (3,))]
    second = [torch.randn(s, generator=gen, dtype=torch.float64) * 20
              for s in ((2, 3, 4), (5,), (6, 2))]
    norms = [clip_grad_norm(grads, 1.0)[1].item() for grads in (first, second)]
    assert 25 < norms[0] < 45 and 120 < norms[1] < 180, norms


@pytest.mark.parametrize("dtype", [torch.float16, torch.float32, torch.float64], ids=str)
def test_a_right_answer_passes_in_any_float_dtype(dtype):
    """The pattern of test_checks_dtypes.py, with the list of gradients cast inside."""
    def learner(grads, max_norm):
        grads = [g.to(dtype) for g in grads]
        total = torch.sqrt(sum((g**2).sum() for g in grads))
        return [g * torch.clamp(max_norm / total, max=1.0) for g in grads]

    assert check_clip_by_global_norm(learner) is None
    with pytest.raises(AssertionError):
        check_clip_by_global_norm(lambda g, m: [x.float() * 1.01 + 0.01 for x in learner(g, m)])
