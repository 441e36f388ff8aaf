import pytest
import torch

from attention_qa.sparse import strided_mask


def mask_by_loop(n, allowed):
    return torch.tensor([[allowed(i, j) for j in range(n)] for i in range(n)], dtype=torch.bool)


@pytest.mark.parametrize("n, stride", [(1, 1), (5, 1), (8, 3), (12, 4), (7, 10)])
@pytest.mark.parametrize("causal", [False, True])
def test_strided_mask_matches_a_loop(n, stride, causal):
    def allowed(i, j):
        near_or_on_stride = abs(i - j) < stride or (i - j) % stride == 0
        return near_or_on_stride and (j <= i or not causal)

    got = strided_mask(n, stride, causal=causal)
    assert got.dtype == torch.bool and got.shape == (n, n)
    assert torch.equal(got, mask_by_loop(n, allowed))


def test_strided_mask_is_symmetric_and_keeps_the_diagonal():
    mask = strided_mask(16, 4)
    assert torch.equal(mask, mask.T) and mask.diagonal().all()
    assert torch.equal(strided_mask(16, 4, causal=True), mask & torch.ones(16, 16).tril().bool())


def test_stride_one_allows_everything():
    assert strided_mask(6, 1).all()


@pytest.mark.parametrize("bad", [0, -2, 1.5, True])
def test_strided_mask_rejects_a_bad_stride(bad):
    with pytest.raises(ValueError, match="stride must be a positive integer"):
        strided_mask(8, bad)


def test_strided_mask_rejects_a_bad_causal():
    with pytest.raises(ValueError, match="causal must be True or False"):
        strided_mask(8, 2, causal=1)
