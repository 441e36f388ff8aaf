import math

import pytest
import torch
from torch import nn

from attention_qa.checks import check_multihead
from attention_qa.multihead import MultiHeadAttention

pytestmark = pytest.mark.usefixtures("one_thread")


class LearnerMHA(nn.Module):
    """Multi-head attention as a learner would write it; BUG switches on one known slip."""

    BUG = None

    def __init__(self, d_model, num_heads):
        super().__init__()
        self.h, self.d_k = num_heads, d_model // num_heads
        self.w_q = nn.Linear(d_model, d_model)
        self.w_k = nn.Linear(d_model, d_model)
        self.w_v = nn.Linear(d_model, d_model)
        self.w_o = nn.Linear(d_model, d_model)

    def split(self, x):
        B, L, _ = x.shape
        if self.BUG == "split":
            return x.view(B, self.h, L, self.d_k)
        return x.view(B, L, self.h, self.d_k).transpose(1, 2)  # (B, h, L, d_k)

    def forward(self, query, key, value, mask=None):
        B, n, d_model = query.shape
        q_flat, k_flat, v_flat = self.w_q(query), self.w_k(key), self.w_v(value)
        if self.BUG == "v_flat from k":
            v_flat = k_flat
        if self.BUG == "v from key":
            v_flat = self.w_v(key)
        q, k, v = self.split(q_flat), self.split(k_flat), self.split(v_flat)
        scales = {"no scale": 1.0, "d_model scale": math.sqrt(d_model)}
        scale = scales.get(self.BUG, math.sqrt(self.d_k))
        scores = q @ k.transpose(-2, -1) / scale  # (B, h, n, m)
        if mask is not None and self.BUG != "ignore mask":
            blocked = mask if self.BUG == "inverted mask" else ~mask
            scores = scores.masked_fill(blocked, -1e9)
        dim = {"softmax dim -2": -2, "softmax over heads": 1}.get(self.BUG, -1)
        weights = torch.softmax(scores, dim=dim)
        out = weights @ v  # (B, h, n, d_k)
        if self.BUG == "unmerged":
            return out, weights
        if self.BUG == "merge":
            out = out.view(B, n, d_model)
        else:
            out = out.transpose(1, 2).reshape(B, n, d_model)
        if self.BUG == "no w_o":
            return out, weights
        if self.BUG == "transposed output":
            return self.w_o(out).transpose(0, 1), weights
        return self.w_o(out), weights


def learner_with(bug):
    return type(f"Learner_{bug}", (LearnerMHA,), {"BUG": bug})


class LearnerOutputOnly(LearnerMHA):
    """Returns the output alone, without the weights: also accepted."""

    def forward(self, query, key, value, mask=None):
        return super().forward(query, key, value, mask)[0]


class LearnerGQA(nn.Module):
    """A grouped-query learner; TILE switches on the i % num_kv_heads grouping slip."""

    TILE = False

    def __init__(self, d_model, num_heads, num_kv_heads=None, bias=False):
        super().__init__()
        self.h, self.h_kv = num_heads, num_kv_heads or num_heads
        self.d_k = d_model // num_heads
        self.w_q = nn.Linear(d_model, d_model, bias=bias)
        self.w_k = nn.Linear(d_model, self.h_kv * self.d_k, bias=bias)
        self.w_v = nn.Linear(d_model, self.h_kv * self.d_k, bias=bias)
        self.w_o = nn.Linear(d_model, d_model, bias=bias)

    def forward(self, query, key, value, mask=None):
        B, n, d_model = query.shape
        m = key.shape[1]
        q = self.w_q(query).view(B, n, self.h, self.d_k).transpose(1, 2)
        k = self.w_k(key).view(B, m, self.h_kv, self.d_k).transpose(1, 2)
        v = self.w_v(value).view(B, m, self.h_kv, self.d_k).transpose(1, 2)
        group = self.h // self.h_kv
        if self.TILE:
            k, v = k.repeat(1, group, 1, 1), v.repeat(1, group, 1, 1)
        else:
            k, v = k.repeat_interleave(group, 1), v.repeat_interleave(group, 1)
        out = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        return self.w_o(out.transpose(1, 2).reshape(B, n, d_model))


class LearnerGQATiled(LearnerGQA):
    TILE = True


@pytest.mark.parametrize("cls", [MultiHeadAttention, LearnerMHA, LearnerOutputOnly, LearnerGQA])
def test_accepts_correct_classes(cls):
    assert check_multihead(cls) is None


@pytest.mark.parametrize(
    "bug, message",
    [
        ("split", "the heads are split wrongly: view(B, h, n, d_k) cuts the token axis"),
        ("merge", "the heads are not merged back correctly: transpose"),
        ("no scale", "the scores are not scaled: divide Q Kᵀ by √d_k"),
        ("d_model scale", "divided by √d_model"),
        ("v_flat from k", "V is built from K"),
        ("v from key", "V is computed from the key input"),
        ("softmax dim -2", "not over the queries (dim=-2)"),
        ("softmax over heads", "not over the heads (dim=1)"),
        ("ignore mask", "the mask is ignored"),
        ("inverted mask", "the mask is read the wrong way round"),
        ("no w_o", "the output projection w_o is not applied"),
        ("unmerged", "the heads are not merged back; transpose to (B, n, h, d_k)"),
        ("transposed output", "the output has shape"),
    ],
)
def test_rejects_each_slip_with_its_message(bug, message):
    with pytest.raises(AssertionError) as err:
        check_multihead(learner_with(bug))
    assert message in str(err.value)
    assert str(err.value).startswith("on ")  # names the case it failed on


def test_rejects_tiled_kv_heads():
    with pytest.raises(AssertionError, match="repeat_interleave, not repeat"):
        check_multihead(LearnerGQATiled)


def test_rejects_missing_or_misshaped_layers():
    class NoWv(LearnerMHA):
        def __init__(self, d_model, num_heads):
            super().__init__(d_model, num_heads)
            del self.w_v

    class WideWk(LearnerMHA):
        def __init__(self, d_model, num_heads):
            super().__init__(d_model, num_heads)
            self.w_k = nn.Linear(d_model, 2 * d_model)

    with pytest.raises(AssertionError, match="has no layer w_v"):
        check_multihead(NoWv)
    with pytest.raises(
        AssertionError,
        match=r"w_k.weight has shape \(32, 16\) but should be "
        r"\(16, 16\)",
    ):
        check_multihead(WideWk)


def test_reports_a_learner_that_raises():
    class Unfinished(LearnerMHA):
        def forward(self, query, key, value, mask=None):
            raise RuntimeError("shape mismatch")

    class NotStarted(LearnerMHA):
        def forward(self, query, key, value, mask=None):
            raise NotImplementedError

    with pytest.raises(AssertionError, match="your function raised RuntimeError on self-attention"):
        check_multihead(Unfinished)
    with pytest.raises(NotImplementedError):
        check_multihead(NotStarted)


def test_wrong_weights_are_reported():
    class PreSoftmaxWeights(LearnerMHA):
        def forward(self, query, key, value, mask=None):
            out, _ = super().forward(query, key, value, mask)
            B, n, _ = query.shape
            return out, torch.zeros(B, self.h, n, key.shape[1])

    with pytest.raises(AssertionError, match="the output is right but the weights are not"):
        check_multihead(PreSoftmaxWeights)


def test_leaves_the_global_random_state_alone():
    state = torch.get_rng_state()
    check_multihead(LearnerMHA)
    assert torch.equal(torch.get_rng_state(), state)


# --- the per-head-loop layout of q10's exercise: masks of shape (n, m) or (B, n, m) ----------


class PerHeadLoop(nn.Module):
    """One head at a time on (B, n, m) scores, masked_fill with the mask as given."""

    def __init__(self, d_model, num_heads):
        super().__init__()
        self.h, self.d_k = num_heads, d_model // num_heads
        self.w_q, self.w_k = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)
        self.w_v, self.w_o = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)

    def forward(self, query, key, value, mask=None):
        q, k, v = self.w_q(query), self.w_k(key), self.w_v(value)
        outs, weights = [], []
        for i in range(self.h):
            cols = slice(i * self.d_k, (i + 1) * self.d_k)
            scores = q[..., cols] @ k[..., cols].transpose(-2, -1) / math.sqrt(self.d_k)
            if mask is not None:
                scores = scores.masked_fill(~mask, float("-inf"))  # (B, n, m)
            w = scores.softmax(-1)
            outs.append(w @ v[..., cols])
            weights.append(w)
        return self.w_o(torch.cat(outs, -1)), torch.stack(weights, 1)


class Vectorised(nn.Module):
    """All heads at once through F.scaled_dot_product_attention; written independently."""

    SLIP = None

    def __init__(self, d_model, num_heads):
        super().__init__()
        self.h = num_heads
        self.w_q, self.w_k = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)
        self.w_v, self.w_o = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)

    def heads(self, x):
        B, L, d = x.shape
        if self.SLIP == "heads along the token axis":
            return x.reshape(B, self.h, L, d // self.h)
        return x.unflatten(-1, (self.h, d // self.h)).transpose(1, 2)  # (B, h, L, d_k)

    def forward(self, query, key, value, mask=None):
        q, k = self.heads(self.w_q(query)), self.heads(self.w_k(key))
        v = self.heads(self.w_v(value))
        if mask is not None:
            mask = mask.unsqueeze(1) if mask.ndim == 3 else mask  # (B, 1, n, m) or (n, m)
            if self.SLIP == "mask inverted":
                mask = ~mask
        scale = 1.0 if self.SLIP == "no 1/sqrt(d_k)" else None
        out = torch.nn.functional.scaled_dot_product_attention(
            q, k, v, attn_mask=mask, scale=scale
        )  # (B, h, n, d_k)
        out = out.transpose(1, 2).flatten(2)  # (B, n, d_model)
        return out if self.SLIP == "no w_o" else self.w_o(out)


def vectorised_with(slip):
    return type(f"Vectorised_{slip}", (Vectorised,), {"SLIP": slip})


@pytest.mark.parametrize("cls", [PerHeadLoop, Vectorised])
def test_loop_layout_accepts_independent_right_answers(cls):
    assert check_multihead(cls, mask_layout="(B, n, m)") is None


@pytest.mark.parametrize(
    "slip, message",
    [
        ("mask inverted", "the mask is read the wrong way round"),
        ("no 1/sqrt(d_k)", "the scores are not scaled"),
        ("heads along the token axis", "the heads are split wrongly"),
        ("no w_o", "the output projection w_o is not applied"),
    ],
)
def test_loop_layout_rejects_wrong_answers(slip, message):
    with pytest.raises(AssertionError, match="^on ") as err:
        check_multihead(vectorised_with(slip), mask_layout="(B, n, m)")
    assert message in str(err.value)


def test_a_loop_given_a_four_d_mask_is_told_about_the_mask():
    # Under the (B, h, n, m) layout a (B, 1, 1, m) padding mask broadcasts one head's
    # (B, n, m) scores to (B, B, n, m): the feedback must name the mask, not only the shape.
    with pytest.raises(AssertionError, match=r"the mask has shape \(2, 1, 1, 7\)"):
        check_multihead(PerHeadLoop)
    assert check_multihead(Vectorised) is None


def test_rejects_an_unknown_mask_layout():
    with pytest.raises(ValueError, match="mask_layout"):
        check_multihead(PerHeadLoop, mask_layout="(n, m)")
