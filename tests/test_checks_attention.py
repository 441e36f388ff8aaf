import math

import pytest
import torch
import torch.nn.functional as F

from attention_qa.attention import scaled_dot_product_attention
from attention_qa.checks.attention import _attention_cases, attention_variant, check_attention


def learner(scale=None, dim=-1, mask_mode="ok", transpose="ok", returns="output"):
    """Attention as a learner would write it, with the slips the checker should name."""

    def attention(q, k, v, mask=None):
        d_k = q.size(-1)
        if transpose == "none":
            scores = q @ k
        elif transpose == "swapped":
            scores = k @ q.transpose(-2, -1)
        elif transpose == "dot_T":
            scores = q @ k.T
        else:
            scores = q @ k.transpose(-2, -1)
        scores = scores / math.sqrt(d_k) if scale is None else scores * scale(q, k, v)
        if mask is not None:
            if mask_mode == "ok":
                scores = scores.masked_fill(~mask, float("-inf"))
            elif mask_mode == "inverted":
                scores = scores.masked_fill(mask, float("-inf"))
            elif mask_mode == "zero":
                scores = scores * mask
        weights = torch.softmax(scores, dim=dim)
        if mask is not None and mask_mode == "after":
            weights = weights * mask
        if transpose == "weights":
            weights = weights.transpose(-2, -1)
        out = weights @ v
        if returns == "both":
            return out, weights
        if returns == "weights":
            return weights
        if returns == "out_T":
            return out.transpose(-2, -1)
        return out

    return attention


# --- correct implementations pass --------------------------------------------------------


def minus_1e9(q, k, v, mask=None):
    scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(k.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    return F.softmax(scores, dim=-1) @ v


@pytest.mark.parametrize(
    "fn",
    [
        learner(),
        learner(returns="both"),
        minus_1e9,
        scaled_dot_product_attention,  # the package's own, returning (output, weights)
        lambda q, k, v, mask=None: F.scaled_dot_product_attention(q, k, v, attn_mask=mask),
        lambda q, k, v, mask=None: learner()(q.double(), k.double(), v.double(), mask),
    ],
    ids=["learner", "with_weights", "minus_1e9", "package", "torch", "float64"],
)
def test_correct_implementations_pass(fn):
    assert check_attention(fn) is None


def test_reference_variant_matches_torch_and_cases_are_fair():
    g = torch.Generator().manual_seed(0)
    cases = _attention_cases()
    assert any(mask is None for *_, mask in cases) and any(m is not None for *_, m in cases)
    shapes = [(q, k, v) for _, q, k, v, _ in cases]
    assert any(len(q) > 2 for q, _, _ in shapes)  # batch dims
    assert any(q[-2] != k[-2] for q, k, _ in shapes)  # n ≠ m
    assert any(k[-1] != v[-1] for _, k, v in shapes)  # d_k ≠ d_v
    for _, q_shape, k_shape, v_shape, mask in cases:
        q, k, v = (torch.randn(s, generator=g) for s in (q_shape, k_shape, v_shape))
        out, weights = attention_variant(q, k, v, mask)
        torch.testing.assert_close(out, F.scaled_dot_product_attention(q, k, v, attn_mask=mask))
        if mask is not None:
            scores_shape = (*q.shape[:-1], k.shape[-2])
            full = mask.expand(scores_shape)
            # No query is fully masked, under the right convention or the inverted one.
            assert full.any(-1).all() and (~full).any(-1).all()
            assert (weights[~full] == 0).all()


def test_leaves_global_random_state_alone():
    before = torch.get_rng_state()
    check_attention(learner())
    assert torch.equal(before, torch.get_rng_state())


# --- each slip gets its own message ---------------------------------------------------------


@pytest.mark.parametrize(
    "fn, message",
    [
        (learner(dim=-2), r"softmax runs over the wrong axis \(dim=0, the queries\)"),
        (learner(dim=0), r"softmax runs over the wrong axis \(dim=0, the queries\)"),
        # dim=1 is right for 2-D inputs, so the slip shows only with batch dims.
        (learner(dim=1), r"q \(2, 3, 8\).*wrong axis \(dim=1, the queries\)"),
        (learner(transpose="none"), "k is not transposed"),
        (learner(transpose="swapped"), "the scores are transposed"),
        (learner(transpose="weights"), "the weights are transposed before they multiply v"),
        (learner(scale=lambda q, k, v: 1.0), "the scores are not scaled"),
        (learner(scale=lambda q, k, v: 1 / q.size(-1)), r"divided by d_k instead of √d_k"),
        (learner(scale=lambda q, k, v: math.sqrt(k.size(-1))), "multiplied by √d_k instead"),
        (learner(scale=lambda q, k, v: v.size(-1) ** -0.5), r"the scale uses d_v = v.shape\[-1\]"),
        (learner(scale=lambda q, k, v: k.size(-2) ** -0.5), r"the scale uses m = k.shape\[-2\]"),
        (learner(scale=lambda q, k, v: q.size(-2) ** -0.5), r"the scale uses n = q.shape\[-2\]"),
        (learner(scale=lambda q, k, v: 1 / math.sqrt(512)), "divided by √512, d_model"),
        (learner(mask_mode="ignored"), "the mask is ignored"),
        (learner(mask_mode="inverted"), "the mask is read the wrong way round"),
        (learner(mask_mode="zero"), "the masked scores are set to 0"),
        (learner(mask_mode="after"), "the mask is applied after the softmax"),
    ],
    ids=[
        "dim-2",
        "dim0",
        "dim1",
        "no_transpose",
        "swapped",
        "weights_T",
        "no_scale",
        "d_k",
        "times",
        "d_v",
        "m",
        "n",
        "512",
        "mask_ignored",
        "mask_inverted",
        "mask_zero",
        "mask_after",
    ],
)
def test_each_slip_is_named(fn, message):
    with pytest.raises(AssertionError, match=message) as info:
        check_attention(fn)
    # Every message says which input showed the slip.
    assert str(info.value).startswith("on q (")


def test_mask_slips_are_found_on_a_masked_case():
    with pytest.raises(AssertionError, match="padding mask of shape"):
        check_attention(learner(mask_mode="inverted"))


def test_wrong_output_shapes():
    with pytest.raises(AssertionError, match=r"shape \(4, 4\) = \(..., n, m\), the shape of"):
        check_attention(learner(returns="weights"))
    with pytest.raises(AssertionError, match=r"shape \(3, 4\) = \(..., d_v, n\): it is transp"):
        check_attention(learner(returns="out_T"))
    with pytest.raises(AssertionError, match=r"the output has shape \(4,\) but should be \(4, 3\)"):
        check_attention(lambda q, k, v, mask=None: learner()(q, k, v).sum(-1))
    with pytest.raises(AssertionError, match="the output should be a tensor, a NumPy array or a "
                       "list of numbers, got str"):
        check_attention(lambda q, k, v, mask=None: str(learner()(q, k, v)))


def test_wrong_weights_are_caught_when_the_output_is_right():
    def returns_scores(q, k, v, mask=None):
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
        return torch.softmax(scores, dim=-1) @ v, scores

    with pytest.raises(AssertionError, match="the output is right but the weights are not"):
        check_attention(returns_scores)

    def flat_weights(q, k, v, mask=None):
        out, weights = scaled_dot_product_attention(q, k, v, mask)
        return out, weights.flatten()

    with pytest.raises(AssertionError, match=r"the weights has shape \(16,\) but should be"):
        check_attention(flat_weights)


def test_nan_and_unknown_errors():
    def nan_out(q, k, v, mask=None):
        out = learner()(q, k, v, mask)
        out[..., 0, 0] = float("nan")
        return out

    with pytest.raises(AssertionError, match="NaN or inf in the output"):
        check_attention(nan_out)
    # Two slips at once match no single one: the message gives the size of the error.
    with pytest.raises(AssertionError, match=r"off by up to [0-9.e-]+ from softmax\(q kᵀ / √d_k"):
        check_attention(learner(dim=-2, scale=lambda q, k, v: 1.0))
    with pytest.raises(AssertionError, match="dtype torch.int64, not a float"):
        check_attention(lambda q, k, v, mask=None: learner()(q, k, v).long())


def test_raising_function_says_which_input():
    def broken(q, k, v, mask=None):
        raise ValueError("not yet")

    with pytest.raises(
        AssertionError, match=r"your function raised ValueError on q \(4, 4\), k \(4, 4\).*not yet"
    ):
        check_attention(broken)


def test_function_without_mask_argument_fails_on_the_masked_case():
    def no_mask(q, k, v):
        return learner()(q, k, v)

    with pytest.raises(AssertionError, match="raised TypeError on q .* with a padding mask"):
        check_attention(no_mask)


def test_two_d_only_code_gets_a_hint():
    with (
        pytest.warns(UserWarning),
        pytest.raises(
            AssertionError,
            match=r"raised RuntimeError on q \(2, 3, 8\).*It works without batch dims",
        ),
    ):
        check_attention(learner(transpose="dot_T"))
    with pytest.raises(AssertionError, match=r"not torch.mm"):
        check_attention(
            lambda q, k, v, mask=None: (
                torch.softmax(torch.mm(q, k.t()) / math.sqrt(q.size(-1)), dim=-1) @ v
            )
        )


def test_not_implemented_propagates():
    def stub(q, k, v, mask=None):
        raise NotImplementedError

    with pytest.raises(NotImplementedError):
        check_attention(stub)
