"""attention_qa.checks.watch: what a learner's torch calls compute, seen from outside."""

import torch

from attention_qa.checks.common import call_learner, close, computed_in
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
    assert computed_in() == torch.float64 and not close(rounded, exact)


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
