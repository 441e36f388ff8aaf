"""check_attend_one (q03): passes right answers, names each classic slip."""

import math

import pytest
import torch
import torch.nn.functional as F

from attention_qa.checks import check_attend_one


def by_steps(q, k, v):
    scores = k @ q / math.sqrt(q.shape[0])  # (m,)
    e = torch.exp(scores - scores.max())
    return (e / e.sum()) @ v


def by_torch(q, k, v):
    return F.scaled_dot_product_attention(q[None], k, v)[0]


def by_loop(q, k, v):
    scores = [float(q @ kj) / math.sqrt(len(q)) for kj in k]
    top = max(scores)
    e = [math.exp(s - top) for s in scores]
    return sum((ej / sum(e)) * vj for ej, vj in zip(e, v, strict=True))


@pytest.mark.parametrize("fn", [by_steps, by_torch, by_loop])
def test_right_answers_pass(fn):
    assert check_attend_one(fn) is None


def slip(kind):
    def fn(q, k, v):
        d_k = q.shape[0]
        scale = {
            "none": 1.0,
            "d_k": 1 / d_k,
            "d_v": v.shape[1] ** -0.5,
            "m": k.shape[0] ** -0.5,
            "after": 1.0,
        }.get(kind, d_k**-0.5)
        scores = k @ q * scale
        if kind == "naive":
            e = torch.exp(scores)
            return (e / e.sum()) @ v
        w = torch.softmax(scores, dim=-1)
        if kind == "after":
            w = w / math.sqrt(d_k)
        if kind == "unnormalised":
            w = torch.exp(scores)
        if kind == "weights":
            return w
        if kind == "sum":
            return v.sum(0)
        if kind == "mean":
            return v.mean(0)
        return w @ v

    return fn


@pytest.mark.parametrize(
    "kind, message",
    [
        ("none", "not scaled"),
        ("d_k", "divided by d_k instead"),
        ("d_v", "uses d_v"),
        ("m", "uses m"),
        ("after", "after the softmax"),
        ("unnormalised", "must sum to 1"),
        ("weights", "length m = 3, the weights"),
        ("sum", "plain sum of the values"),
        ("mean", "plain mean"),
        ("naive", "NaN or inf"),
    ],
)
def test_each_slip_is_named(kind, message):
    with pytest.raises(AssertionError, match=message):
        check_attend_one(slip(kind))


def test_a_wrong_answer_without_a_name_still_fails():
    with pytest.raises(AssertionError, match="off by up to"):
        check_attend_one(lambda q, k, v: by_steps(q, k, v) + 0.01)
