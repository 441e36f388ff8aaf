import numpy as np
import pytest
import torch
import torch.nn.functional as F

from attention_qa.activations import glu_ffn
from attention_qa.checks import check_swiglu
from attention_qa.checks.q39 import SWIGLU_SLIPS, swiglu_variant


def by_formula(x, w_gate, w_up, w_down):
    a = x @ w_gate  # (..., d_ff)
    return (a * torch.sigmoid(a) * (x @ w_up)) @ w_down


def with_linear_layers(x, w_gate, w_up, w_down):
    return F.linear(F.silu(F.linear(x, w_gate.T)) * F.linear(x, w_up.T), w_down.T)


def by_einsum(x, w_gate, w_up, w_down):
    hidden = F.silu(torch.einsum("...d,df->...f", x, w_gate)) * torch.einsum(
        "...d,df->...f", x, w_up)
    return torch.einsum("...f,fd->...d", hidden, w_down)


def with_the_package(x, w_gate, w_up, w_down):
    return glu_ffn(x, w_gate, w_up, w_down, "silu")


def in_numpy(x, w_gate, w_up, w_down):
    x, w_gate, w_up, w_down = (t.numpy() for t in (x, w_gate, w_up, w_down))
    a = x @ w_gate
    return (a / (1 + np.exp(-a)) * (x @ w_up)) @ w_down


RIGHT = [by_formula, with_linear_layers, by_einsum, with_the_package, in_numpy]


@pytest.mark.parametrize("fn", RIGHT, ids=lambda f: f.__name__)
@pytest.mark.parametrize("form", ["tensor", "numpy", "list", "float32", "float16"])
def test_right_answers_pass_in_every_form(fn, form):
    def learner(*args):
        if form in ("float32", "float16") and fn is not in_numpy:
            dtype = torch.float32 if form == "float32" else torch.float16
            args = [a.to(dtype) for a in args]
        out = fn(*args)
        if form == "numpy" and isinstance(out, torch.Tensor):
            return out.numpy()
        if form == "list":
            return out.tolist()
        return out

    check_swiglu(learner)


@pytest.mark.parametrize("bug", list(SWIGLU_SLIPS))
def test_each_slip_is_named(bug):
    def buggy(x, w_gate, w_up, w_down):
        return swiglu_variant(x, w_gate, w_up, w_down, bug)

    with pytest.raises(AssertionError) as info:
        check_swiglu(buggy)
    assert SWIGLU_SLIPS[bug] in str(info.value)


@pytest.mark.parametrize("bug", list(SWIGLU_SLIPS))
def test_slips_fail_in_float32_and_as_lists(bug):
    def buggy(x, w_gate, w_up, w_down):
        args = [a.float() for a in (x, w_gate, w_up, w_down)]
        return swiglu_variant(*args, bug).tolist()

    with pytest.raises(AssertionError, match="on x of shape"):
        check_swiglu(buggy)


def test_other_errors_are_reported():
    with pytest.raises(AssertionError, match="has shape"):
        check_swiglu(lambda x, wg, wu, wd: (F.silu(x @ wg) * (x @ wu))[..., 0, :] @ wd)
    with pytest.raises(AssertionError, match="off by up to"):
        check_swiglu(lambda x, wg, wu, wd: 2 * by_formula(x, wg, wu, wd))
    # An answer right only for (B, n, d_model) inputs fails on the others.
    with pytest.raises(AssertionError, match=r"on x of shape \(4, 3\)"):
        check_swiglu(lambda x, wg, wu, wd: by_formula(x, wg, wu, wd)
                     if x.ndim == 3 else torch.zeros(x.shape, dtype=x.dtype))


def test_a_scaffold_is_let_through():
    def scaffold(x, w_gate, w_up, w_down):
        raise NotImplementedError

    with pytest.raises(NotImplementedError):
        check_swiglu(scaffold)


def test_the_reference_is_silu_gated():
    torch.manual_seed(0)
    x, wg, wu, wd = torch.randn(3, 4), torch.randn(4, 6), torch.randn(4, 6), torch.randn(6, 4)
    assert torch.allclose(swiglu_variant(x, wg, wu, wd), by_formula(x, wg, wu, wd), atol=1e-5)
