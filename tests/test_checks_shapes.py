"""check_output_shape (q02): passes right answers, names each classic slip."""

import pytest
import torch

from attention_qa.checks import check_output_shape


def right(q_shape, k_shape, v_shape):
    if q_shape[-1] != k_shape[-1]:
        raise ValueError("d_k differs")
    if k_shape[-2] != v_shape[-2]:
        raise ValueError("m differs")
    return (*q_shape[:-1], v_shape[-1])


def by_running(q_shape, k_shape, v_shape):
    q, k, v = torch.zeros(q_shape), torch.zeros(k_shape), torch.zeros(v_shape)
    try:
        return tuple(torch.nn.functional.scaled_dot_product_attention(q, k, v).shape)
    except RuntimeError as err:
        raise ValueError(str(err)) from None


@pytest.mark.parametrize("fn", [right, by_running])
def test_right_answers_pass(fn):
    assert check_output_shape(fn) is None


def checked(shape_fn):
    def fn(q_shape, k_shape, v_shape):
        right(q_shape, k_shape, v_shape)
        return shape_fn(q_shape, k_shape, v_shape)

    return fn


@pytest.mark.parametrize(
    "fn, message",
    [
        (checked(lambda q, k, v: q), "the last dim is d_k"),
        (checked(lambda q, k, v: (*q[:-1], k[-2])), "shape of the weights"),
        (checked(lambda q, k, v: v), "one row per query"),
        (checked(lambda q, k, v: (q[-2], v[-1])), "leading (batch) dims are missing"),
        (checked(lambda q, k, v: (*q[:-2], v[-1], q[-2])), "transposed"),
        (lambda q, k, v: (*q[:-1], v[-1]), "d_k = 4 vs 6"),
        (lambda q, k, v: right(q, k, k[:-1] + v[-1:]), "k and v must both have m rows"),
        (lambda q, k, v: f"{q}", "should return a tuple"),
        (lambda q, k, v: 1 / 0, "raised ZeroDivisionError"),
        (lambda q, k, v: (_ for _ in ()).throw(ValueError("no")), "these shapes are fine"),
        (checked(lambda q, k, v: (*q[:-1], v[-1] + 1)), "but the output is"),
    ],
)
def test_each_slip_is_named(fn, message):
    with pytest.raises(AssertionError, match=message.replace("(", r"\(").replace(")", r"\)")):
        check_output_shape(fn)
