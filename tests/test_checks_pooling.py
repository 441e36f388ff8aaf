"""check_pooling_weights (q01): passes right answers, names each classic slip."""

import pytest
import torch

from attention_qa.attention import attention_pooling
from attention_qa.checks import check_pooling_weights


def by_softmax(queries, keys, bandwidth):
    diffs = queries[:, None] - keys[None, :]  # (n, m)
    return torch.softmax(-(diffs**2) / (2 * bandwidth**2), dim=-1)


def by_library(queries, keys, bandwidth):
    return attention_pooling(queries, keys, torch.zeros_like(keys), bandwidth)[1]


def by_hand_stable(queries, keys, bandwidth):
    scores = -((queries[:, None] - keys[None, :]) ** 2) / (2 * bandwidth**2)
    e = torch.exp(scores - scores.max(dim=-1, keepdim=True).values)
    return e / e.sum(dim=-1, keepdim=True)


@pytest.mark.parametrize("fn", [by_softmax, by_library, by_hand_stable])
def test_right_answers_pass(fn):
    assert check_pooling_weights(fn) is None


def slip(kind):
    def fn(queries, keys, bandwidth):
        diffs = queries[:, None] - keys[None, :]
        h = bandwidth
        scores = {
            "minus": diffs**2 / (2 * h**2),
            "abs": -diffs.abs() / (2 * h**2),
            "two": -(diffs**2) / h**2,
            "h": -(diffs**2) / (2 * h),
        }.get(kind, -(diffs**2) / (2 * h**2))
        if kind == "exp":
            return torch.exp(scores)
        if kind == "naive":
            e = torch.exp(scores)
            return e / e.sum(dim=-1, keepdim=True)
        if kind == "transposed":
            return torch.softmax(scores, dim=-1).T
        if kind == "raises":
            raise RuntimeError("boom")
        return torch.softmax(scores, dim=0 if kind == "dim0" else -1)

    return fn


@pytest.mark.parametrize(
    "kind, message",
    [
        ("dim0", "runs over the queries"),
        ("minus", "minus sign is missing"),
        ("abs", "not squared: the Gaussian"),
        ("two", "factor 2 is missing"),
        ("h", "bandwidth is not squared"),
        ("exp", "not normalised"),
        ("naive", "NaN or inf"),
        ("transposed", "(m, n)"),
        ("raises", "raised RuntimeError"),
    ],
)
def test_each_slip_is_named(kind, message):
    with pytest.raises(AssertionError, match=message.replace("(", r"\(").replace(")", r"\)")):
        check_pooling_weights(slip(kind))


def test_a_wrong_answer_without_a_name_still_fails():
    with pytest.raises(AssertionError, match="off by up to"):
        check_pooling_weights(lambda q, k, h: by_softmax(q, k, h * 1.1))
