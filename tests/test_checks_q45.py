import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from attention_qa.checks import check_gated_cross_attention
from attention_qa.checks.q45 import GATED_CROSS_ATTENTION_SLIPS, gated_cross_attention_variant
from attention_qa.vision import gated_cross_attention


def by_formula(x, media, w_q, w_k, w_v, w_o, alpha):
    q, k, v = x @ w_q, media @ w_k, media @ w_v  # (..., n, d), (..., m, d), (..., m, d)
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
    return x + torch.tanh(alpha) * (weights @ v @ w_o)


def with_sdpa(x, media, w_q, w_k, w_v, w_o, alpha):
    attn = F.scaled_dot_product_attention(x @ w_q, media @ w_k, media @ w_v)
    return torch.addcmul(x, torch.tanh(alpha), attn @ w_o)


def by_einsum(x, media, w_q, w_k, w_v, w_o, alpha):
    q = torch.einsum("...nd,de->...ne", x, w_q)
    k = torch.einsum("...md,de->...me", media, w_k)
    v = torch.einsum("...md,de->...me", media, w_v)
    s = torch.einsum("...ne,...me->...nm", q, k) / q.shape[-1] ** 0.5
    return x + alpha.tanh() * torch.einsum("...nm,...me,ef->...nf", s.softmax(-1), v, w_o)


def with_the_package(x, media, w_q, w_k, w_v, w_o, alpha):
    return gated_cross_attention(x, media, w_q, w_k, w_v, w_o, alpha)


def in_numpy(x, media, w_q, w_k, w_v, w_o, alpha):
    x, media, w_q, w_k, w_v, w_o = (t.numpy() for t in (x, media, w_q, w_k, w_v, w_o))
    q, k, v = x @ w_q, media @ w_k, media @ w_v
    s = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    p = np.exp(s - s.max(-1, keepdims=True))
    return x + np.tanh(float(alpha)) * (p / p.sum(-1, keepdims=True) @ v @ w_o)


RIGHT = [by_formula, with_sdpa, by_einsum, with_the_package, in_numpy]


@pytest.mark.parametrize("fn", RIGHT, ids=lambda f: f.__name__)
@pytest.mark.parametrize("form", ["tensor", "numpy", "list", "float32"])
def test_right_answers_pass_in_every_form(fn, form):
    def learner(*args):
        if form == "float32" and fn is not in_numpy:
            args = [a.float() for a in args]
        out = fn(*args)
        if form == "numpy" and isinstance(out, torch.Tensor):
            return out.numpy()
        if form == "list":
            return out.tolist()
        return out

    check_gated_cross_attention(learner)


@pytest.mark.parametrize("bug", list(GATED_CROSS_ATTENTION_SLIPS))
def test_each_slip_is_named(bug):
    def buggy(*args):
        return gated_cross_attention_variant(*args, bug=bug)

    with pytest.raises(AssertionError) as info:
        check_gated_cross_attention(buggy)
    assert GATED_CROSS_ATTENTION_SLIPS[bug] in str(info.value)


@pytest.mark.parametrize("bug", list(GATED_CROSS_ATTENTION_SLIPS))
def test_slips_fail_in_float32_and_as_lists(bug):
    def buggy(*args):
        return gated_cross_attention_variant(*(a.float() for a in args), bug=bug).tolist()

    with pytest.raises(AssertionError, match=r"x \("):
        check_gated_cross_attention(buggy)


def test_other_errors_are_reported():
    with pytest.raises(AssertionError, match="has shape"):
        check_gated_cross_attention(lambda *a: by_formula(*a)[..., 0, :])
    with pytest.raises(AssertionError, match="off by up to"):
        check_gated_cross_attention(lambda *a: by_formula(*a) + 0.1)
    # An answer right only with a batch dimension fails on the (n, d_model) case.
    with pytest.raises(AssertionError, match=r"x \(4, 6\)"):
        check_gated_cross_attention(lambda x, *a: by_formula(x, *a) if x.ndim == 3
                                    else torch.zeros_like(x))


def test_a_scaffold_is_let_through():
    def scaffold(*args):
        raise NotImplementedError

    with pytest.raises(NotImplementedError):
        check_gated_cross_attention(scaffold)


def test_the_reference_is_the_package():
    g = torch.Generator().manual_seed(0)
    x, media = torch.randn(2, 3, 4, generator=g), torch.randn(2, 5, 6, generator=g)
    w = [torch.randn(*s, generator=g) for s in ((4, 8), (6, 8), (6, 8), (8, 4))]
    alpha = torch.tensor(0.4)
    torch.testing.assert_close(gated_cross_attention_variant(x, media, *w, alpha),
                               gated_cross_attention(x, media, *w, alpha))


def test_a_clipped_gate_is_named_as_no_tanh():
    # clamp(α, −1, 1) equals α on the first case (α = 0.7), so it meets the no-tanh message,
    # which names clipping too.
    def clipped(*args):
        return gated_cross_attention_variant(*args, bug="clamped_gate")

    with pytest.raises(AssertionError) as info:
        check_gated_cross_attention(clipped)
    assert GATED_CROSS_ATTENTION_SLIPS["no_tanh"] in str(info.value)
    assert "clamp or hardtanh" in str(info.value)
