"""attention_qa.checks.watch: what a learner's torch calls compute, seen from outside."""

import numpy as np
import pytest
import torch

from attention_qa.checks.common import (
    call_learner,
    close,
    computed_in,
    diagnose,
    float32_numbers,
)
from attention_qa.checks.watch import COVER, BlockReads, NoScoreMatrix, Precision, Work, tensors_in


def test_precision_notes_the_least_precise_float_computed():
    x = torch.ones(3, dtype=torch.float64)
    with Precision() as watch:
        (x * 2).sum()
    assert watch.lowest == torch.float64
    with Precision() as watch:
        theta = 10000.0 ** (-torch.arange(0, 4, 2) / 4)  # float32, PyTorch's default
        (x[:2] * theta).sum()  # promoted back to float64
    assert watch.lowest == torch.float32
    with Precision() as watch:
        torch.arange(5) + 1  # integers only
    assert watch.lowest is None


def test_call_learner_holds_float32_steps_to_float32s_precision():
    x = torch.linspace(1.1, 2.3, 50, dtype=torch.float64)
    exact = x.exp() ** 3
    rounded = call_learner(lambda t: (t.float().exp() ** 3).double(), "case", x)
    assert rounded.dtype == torch.float64 and computed_in() == torch.float32
    assert close(rounded, exact)  # float32's error, held to float32's precision
    call_learner(lambda t: t * 1, "case", x)  # a learner that stays in float64
    # (scaled off float32's grid: a float64 answer of float32 numbers is held to float32's)
    off_grid = rounded * (1 + 2**-40)
    assert computed_in() == torch.float64 and not close(off_grid, exact)


def test_a_throwaway_low_precision_tensor_loosens_nothing():
    """P4 of the 2026-11-27 checker review: the precision is that of the tensors the answer
    was computed from, not of the least precise tensor made anywhere."""
    x = torch.linspace(1.1, 2.3, 50, dtype=torch.float32)
    exact = x.exp()

    def learner(t):
        torch.zeros(1, dtype=torch.bfloat16)  # unrelated
        return t.exp() * 1.015

    off = call_learner(learner, "case", x)
    assert computed_in() == torch.float32 and not close(off, exact)
    # a bfloat16 step that flows into the answer still counts
    call_learner(lambda t: t.bfloat16().exp().float(), "case", x)
    assert computed_in() == torch.bfloat16
    # and one taken out of torch as a NumPy array or a list keeps its flow
    call_learner(lambda t: t.bfloat16().exp().double().numpy(), "case", x)
    assert computed_in() == torch.bfloat16
    call_learner(lambda t: t.half().exp().double().tolist(), "case", x)
    assert computed_in() == torch.float16


def test_float32_numbers_in_float64_are_held_to_float32s_precision():
    """P6: float32 work (NumPy's) returned as float64 is right to float32's precision; a
    float64 answer off by 1e-4 stays wrong, and one right only to float32's is named."""
    call_learner(lambda: None, "case")  # nothing computed in torch: no dtype noted
    x = np.linspace(1.1, 2.3, 50)
    exact = torch.from_numpy(np.exp(x) ** 3)
    in_float32 = torch.from_numpy((np.exp(x.astype(np.float32)) ** 3).astype(np.float64))
    assert float32_numbers(in_float32) and close(in_float32, exact)
    assert not close(exact * (1 + 1e-4), exact)
    assert not close(torch.from_numpy((np.exp(x.astype(np.float32)) ** 3 * np.float32(1.001))
                                      .astype(np.float64)), exact)
    with pytest.raises(AssertionError, match="right only to float32's precision"):
        diagnose(in_float32 * (1 + 2**-40), exact, "case", "the output", "exp(x)³")


def test_work_counts_every_number_computed_and_grows_with_the_product():
    def quadratic(q, k):
        return torch.stack([(q[i] * k).sum(-1) for i in range(len(q))])

    def linear(q, k):
        return q @ k.sum(0)

    counts = {}
    for fn in (quadratic, linear):
        for n in (32, 64):
            with Work() as work:
                fn(torch.randn(n, 4), torch.randn(n, 4))
            counts[fn.__name__, n] = work.elements
    assert counts["quadratic", 64] / counts["quadratic", 32] > 3.5
    assert counts["linear", 64] / counts["linear", 32] < 2.5
    with Work() as work:
        torch.einsum("nd,md->nm", torch.randn(5, 3), torch.randn(7, 3))
    assert torch.Size(work.largest).numel() == 35 and work.ops >= 1  # inside einsum too


def test_tensors_in_finds_the_tensors_of_nested_outputs():
    a, b = torch.zeros(1), torch.ones(2)
    assert [t.numel() for t in tensors_in((a, [b, None], 3))] == [1, 2]


def test_no_score_matrix_notes_the_first_n_by_m_tensor():
    q, k = torch.randn(2, 37, 4), torch.randn(2, 29, 4)
    with NoScoreMatrix(37, 29) as watch:
        q @ k.sum(-2, keepdim=True).mT  # (2, 37, 1): no n × m tensor
    assert watch.found is None
    with NoScoreMatrix(37, 29) as watch:
        torch.einsum("bnd,bmd->bnm", q, k)
    assert watch.found is not None and watch.found[0] == (2, 37, 29)


def test_block_reads_follows_wide_reductions_into_what_is_returned():
    scores = torch.randn(3, 8, dtype=torch.float64)
    setattr(scores, COVER, 8)
    with BlockReads(2) as watch:
        first = scores[..., :2].amax(-1)  # one block: fine
        whole = scores.sum(-1)  # the whole row at once
        check = torch.exp(scores).sum(-1)  # a learner's own check, not returned
    assert watch.found_in((first, [(first, first)])) is None
    assert watch.found_in((whole, [(first, first)])) == ("sum", 8)
    assert check is not None and watch.found[1:] == ("sum", 8)  # the first one made


def test_block_reads_counts_einsum_norms_and_moved_columns():
    """P3: einsum, vector_norm / norm and normalize are reductions; the scores' columns are
    followed through unsqueeze and transposes."""
    scores = torch.randn(3, 8, dtype=torch.float64)
    setattr(scores, COVER, 8)
    with BlockReads(2) as watch:
        ok = torch.einsum("...j->...", scores[..., :2])  # one block
        by_einsum = torch.einsum("nj->n", scores[..., :6])
        kept = torch.einsum("nj->nj", scores[..., :6])  # no sum over the columns
        by_norm = torch.linalg.vector_norm(scores[..., :4], ord=1, dim=-1)
        by_tensor_norm = scores[..., :4].norm(p=1, dim=-1)
        by_normalize = torch.nn.functional.normalize(scores, p=1, dim=-1)
        across_rows = torch.nn.functional.normalize(scores, p=1, dim=0)
        unsqueezed = scores.unsqueeze(-1)[..., :6, :].amax(-2)
        transposed = scores.mT[:6].sum(0)
        transposed_back = scores.transpose(0, 1)[:6].logsumexp(dim=0)
    assert watch.found_in((ok, [(ok, ok)])) is None
    assert watch.found_in((kept, [(ok, ok)])) is None
    assert watch.found_in((across_rows, [(ok, ok)])) is None
    assert watch.found_in((by_einsum, [(ok, ok)])) == ("einsum", 6)
    assert watch.found_in((by_norm, [(ok, ok)])) == ("linalg_vector_norm", 4)
    assert watch.found_in((by_tensor_norm, [(ok, ok)])) == ("norm", 4)
    assert watch.found_in((by_normalize, [(ok, ok)])) == ("normalize", 8)
    assert watch.found_in((unsqueezed, [(ok, ok)])) == ("amax", 6)
    assert watch.found_in((transposed, [(ok, ok)])) == ("sum", 6)
    assert watch.found_in((transposed_back, [(ok, ok)])) == ("logsumexp", 6)


def test_block_reads_tells_what_torch_did_not_compute():
    """P3 / minor A: NumPy arrays taken out of tensors computed from the scores are followed;
    arrays and tensors made outside torch are named as unseen."""
    scores = torch.randn(3, 8, dtype=torch.float64)
    setattr(scores, COVER, 8)
    with BlockReads(2) as watch:
        top = scores[..., :2].amax(-1)
        taken = top.numpy()
        whole = scores.sum(-1).numpy()
        made = torch.from_numpy(scores.numpy()[..., :2].max(-1))
    assert watch.unseen((top, [(taken, top)])) == []
    assert watch.found_in((top, [(taken, top)])) is None
    assert watch.found_in((top, [(whole, top)])) == ("sum", 8)
    assert [x is made for x in watch.unseen((top, [(made, top)]))] == [True]
    assert len(watch.unseen((top, [(np.zeros(3), top)]))) == 1


def test_work_counts_what_torch_computed_apart_from_numbers_brought_in():
    """P2: numbers brought in from NumPy (from_numpy, tensor, as_tensor) are not work."""
    q = torch.randn(1, 64, 4, dtype=torch.float64)
    with Work() as work:
        Q = q.numpy()
        torch.from_numpy(Q * 2), torch.tensor(Q * 2), torch.as_tensor(Q)
    assert work.computed == 0 and work.elements > 0
    with Work() as work:
        (q * 2).sum()
    assert work.computed == 256 + 1
