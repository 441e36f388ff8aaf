"""check_softmax_jacobian: passes the right answer, names each classic mistake."""

import pytest
import torch

from attention_qa.checks import check_softmax_jacobian


def right(p):
    return torch.diag_embed(p) - p.unsqueeze(-1) * p.unsqueeze(-2)


@pytest.mark.parametrize(
    "wrong, message",
    [
        (lambda p: -right(p), "sign is flipped"),
        (lambda p: torch.diag_embed(p), "− p pᵀ term is missing"),
        (lambda p: -p.unsqueeze(-1) * p.unsqueeze(-2), "diag\\(p\\) term is missing"),
        (lambda p: torch.diag_embed(p - p * p), "only the diagonal is right"),
        (lambda p: right(p) * 1.1, "off by up to"),
        (lambda p: right(p)[..., 0], "has shape"),
        (lambda p: torch.diag(p) - torch.outer(p, p), "failed on|raised"),
    ],
)
def test_names_the_mistake(wrong, message):
    with pytest.raises(AssertionError, match=message):
        check_softmax_jacobian(wrong)


def test_accepts_the_right_answer():
    assert check_softmax_jacobian(right) is None


def test_not_implemented_passes_through():
    def scaffold(p):
        raise NotImplementedError("write softmax_jacobian")

    with pytest.raises(NotImplementedError):
        check_softmax_jacobian(scaffold)
