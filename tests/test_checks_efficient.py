"""The checkers of q20 (linear attention), q21 (online softmax) and q22 (previous-token score)."""

import math
import re

import pytest
import torch
import torch.nn.functional as F

from attention_qa.checks.efficient import (
    LINEAR_SLIPS,
    ONLINE_SLIPS,
    PREVIOUS_TOKEN_SLIPS,
    check_linear_attention,
    check_online_softmax,
    check_previous_token_score,
    linear_attention_variant,
    online_softmax_trace_variant,
    online_softmax_variant,
    previous_token_variant,
)
from attention_qa.efficient import linear_attention, online_softmax
from attention_qa.heads import previous_token_score


def test_linear_attention_checker_passes_the_package_and_a_learner():
    check_linear_attention(lambda q, k, v: linear_attention(q, k, v))

    def learner(q, k, v):
        phi_q, phi_k = F.elu(q) + 1, F.elu(k) + 1
        kv = phi_k.transpose(-2, -1) @ v
        return (phi_q @ kv) / (phi_q @ phi_k.sum(-2, keepdim=True).transpose(-2, -1))

    check_linear_attention(learner)


@pytest.mark.parametrize("bug", list(LINEAR_SLIPS))
def test_linear_attention_checker_names_each_bug(bug):
    with pytest.raises(AssertionError, match=re.escape(LINEAR_SLIPS[bug][:30])):
        check_linear_attention(lambda q, k, v: linear_attention_variant(q, k, v, bug))


def linear_by_einsum(q, k, v):
    """A right answer with two-operand einsums: φ(K)ᵀV and Σ_j φ(k_j) first."""
    phi_q, phi_k = F.elu(q) + 1, F.elu(k) + 1  # (..., n, d_k), (..., m, d_k)
    kv = torch.einsum("...md,...me->...de", phi_k, v)  # (..., d_k, d_v)
    num = torch.einsum("...nd,...de->...ne", phi_q, kv)  # (..., n, d_v)
    den = torch.einsum("...nd,...d->...n", phi_q, phi_k.sum(-2))  # (..., n)
    return num / den.unsqueeze(-1)


def linear_by_matmul(q, k, v):
    """A right answer with the normaliser as an extra column of ones in V."""
    phi_q, phi_k = F.elu(q) + 1, F.elu(k) + 1
    v1 = torch.cat([v, torch.ones_like(v[..., :1])], dim=-1)  # (..., m, d_v + 1)
    out = phi_q @ (phi_k.mT @ v1)  # (..., n, d_v + 1)
    return out[..., :-1] / out[..., -1:]


def quadratic_linear_attention(q, k, v):
    """Right values, wrong cost: the (n, m) matrix φ(Q)φ(K)ᵀ, normalised by its row sums."""
    a = (F.elu(q) + 1) @ (F.elu(k) + 1).transpose(-2, -1)  # (..., n, m)
    return (a / a.sum(dim=-1, keepdim=True)) @ v


def quadratic_by_broadcast(q, k, v):
    """Right values, wrong cost: an (n, m, d_k) broadcast product summed to (n, m)."""
    phi_q, phi_k = F.elu(q) + 1, F.elu(k) + 1
    a = (phi_q.unsqueeze(-2) * phi_k.unsqueeze(-3)).sum(-1)  # (..., n, m)
    return (a @ v) / a.sum(-1, keepdim=True)


@pytest.mark.parametrize("right", [linear_by_einsum, linear_by_matmul])
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32, torch.bfloat16], ids=str)
def test_linear_attention_checker_passes_independent_right_answers(right, dtype):
    check_linear_attention(lambda q, k, v: right(q.to(dtype), k.to(dtype), v.to(dtype)))


@pytest.mark.parametrize("quadratic", [quadratic_linear_attention, quadratic_by_broadcast])
def test_linear_attention_checker_rejects_an_n_by_m_matrix(quadratic):
    with pytest.raises(AssertionError, match=r"built a tensor of shape .*n × m matrix"):
        check_linear_attention(quadratic)


def test_the_n_by_m_watch_names_the_shape_on_the_unambiguous_case():
    calls = []

    def quadratic_on_the_last_case_only(q, k, v):
        calls.append(q.shape)
        if q.shape[-2] == 37:
            return quadratic_linear_attention(q, k, v)
        return linear_attention(q, k, v)

    with pytest.raises(AssertionError, match=re.escape("shape (2, 37, 29)")):
        check_linear_attention(quadratic_on_the_last_case_only)
    assert len(calls) == 4


def test_linear_attention_checker_reports_a_wrong_shape_and_a_crash():
    with pytest.raises(AssertionError, match="has shape"):
        check_linear_attention(lambda q, k, v: q[..., :1])
    with pytest.raises(AssertionError, match="raised ZeroDivisionError"):
        check_linear_attention(lambda q, k, v: 1 / 0)


def online_by_blocks(scores, block_size):
    """A right answer: a loop over blocks, M and L kept with a trailing dim of 1."""
    run_max = torch.full(scores.shape[:-1] + (1,), -math.inf, dtype=scores.dtype)
    run_sum = torch.zeros(scores.shape[:-1] + (1,), dtype=scores.dtype)
    trace = []
    for start in range(0, scores.shape[-1], block_size):
        block = scores[..., start : start + block_size]
        new_max = torch.maximum(run_max, block.amax(-1, keepdim=True))
        run_sum = run_sum * torch.exp(run_max - new_max) + torch.exp(block - new_max).sum(
            -1, keepdim=True
        )
        run_max = new_max
        trace.append((run_max, run_sum))
    return torch.exp(scores - run_max) / run_sum, trace


def online_by_logsumexp(scores, block_size):
    """A right answer written differently: a running log-sum-exp, blocks split with
    ``split``, merged with ``logaddexp``; M and L derived from it without a trailing dim."""
    lse = torch.full(scores.shape[:-1], -math.inf, dtype=scores.dtype)
    run_max = lse.clone()
    trace = []
    for block in scores.split(block_size, dim=-1):
        lse = torch.logaddexp(lse, torch.logsumexp(block, dim=-1))
        run_max = torch.maximum(run_max, block.amax(-1))
        trace.append((run_max, torch.exp(lse - run_max)))
    return torch.exp(scores - lse.unsqueeze(-1)), trace


def online_one_row_at_a_time(scores, block_size):
    """Right numbers for the 1-D case in Python floats, broadcast over rows by recursion
    (refused: computed outside torch, where the watch cannot follow the reads)."""
    if scores.ndim > 1:
        parts = [online_one_row_at_a_time(row, block_size) for row in scores]
        result = torch.stack([p[0] for p in parts])
        trace = [
            (torch.stack([torch.as_tensor(p[1][i][0]) for p in parts]),
             torch.stack([torch.as_tensor(p[1][i][1]) for p in parts]))
            for i in range(len(parts[0][1]))
        ]
        return result, trace
    values = scores.tolist()
    big, total, trace = -math.inf, 0.0, []
    for start in range(0, len(values), block_size):
        block = values[start : start + block_size]
        new_big = max(big, *block)
        total = total * math.exp(big - new_big) + sum(math.exp(x - new_big) for x in block)
        big = new_big
        # Python floats are accepted for a 1-D row; in a lower precision, tensors of it
        keep = (lambda x: x) if scores.dtype == torch.float64 else (
            lambda x: torch.tensor(x, dtype=scores.dtype))
        trace.append((keep(big), keep(total)))
    return torch.tensor([math.exp(x - big) / total for x in values], dtype=scores.dtype), trace


@pytest.mark.parametrize("right", [online_by_blocks, online_by_logsumexp])
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32, torch.float16], ids=str)
def test_online_softmax_checker_passes_independent_right_answers(right, dtype):
    check_online_softmax(lambda s, b: right(s.to(dtype), b))


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32], ids=str)
def test_online_softmax_in_python_numbers_is_refused_named(dtype):
    """Right numbers computed outside torch: the watch cannot see how many scores each step
    reads (a prefix recomputed in Python would pass as well), so the checker asks for
    torch (P3 of the 2026-11-27 checker review)."""
    with pytest.raises(AssertionError, match="not computed by PyTorch"):
        check_online_softmax(lambda s, b: online_one_row_at_a_time(s.to(dtype), b))


def test_online_softmax_checker_passes_its_reference():
    check_online_softmax(online_softmax_trace_variant)


@pytest.mark.parametrize("bug", list(ONLINE_SLIPS))
def test_online_softmax_checker_names_each_bug(bug):
    with pytest.raises(AssertionError, match=re.escape(ONLINE_SLIPS[bug][:30])):
        check_online_softmax(lambda s, b: online_softmax_trace_variant(s, b, bug))


def two_pass_ignoring_block_size(scores, block_size):
    """Wrong: the whole row's max and sum at once; the 'trace' repeats them for every block."""
    top = scores.amax(-1, keepdim=True)
    e = torch.exp(scores - top)
    total = e.sum(-1, keepdim=True)
    n_blocks = -(-scores.shape[-1] // block_size)
    return e / total, [(top, total)] * n_blocks


def special_softmax(scores, block_size):
    """Wrong: a library softmax, with a trace faked from the whole row."""
    top = scores.amax(-1)
    total = torch.exp(scores - top.unsqueeze(-1)).sum(-1)
    n_blocks = -(-scores.shape[-1] // block_size)
    return torch.special.softmax(scores, dim=-1), [(top, total)] * n_blocks


def forgets_to_rescale(scores, block_size):
    """Wrong: the running sum is not multiplied by exp(M − M') when the max grows."""
    result, trace = online_by_blocks(scores, block_size)
    run_max = torch.full(scores.shape[:-1], -math.inf, dtype=scores.dtype)
    run_sum = torch.zeros(scores.shape[:-1], dtype=scores.dtype)
    bad = []
    for start in range(0, scores.shape[-1], block_size):
        block = scores[..., start : start + block_size]
        run_max = torch.maximum(run_max, block.amax(-1))
        run_sum = run_sum + torch.exp(block - run_max.unsqueeze(-1)).sum(-1)
        bad.append((run_max, run_sum))
    return torch.exp(scores - run_max.unsqueeze(-1)) / run_sum.unsqueeze(-1), bad


def off_by_one_blocks(scores, block_size):
    """Wrong: blocks of block_size + 1 (a slice end one too far)."""
    return online_by_blocks(scores, block_size + 1)


def result_only(scores, block_size):
    """Wrong: a right result but no trace."""
    return online_by_blocks(scores, block_size)[0]


def prefix_recompute(scores, block_size):
    """Right numbers, not online: per block, max and sum over the whole prefix read so far,
    recomputed from scratch (no rescaling)."""
    trace = []
    for end in range(block_size, scores.shape[-1] + block_size, block_size):
        seen = scores[..., :end]  # (..., end): every entry so far, read again
        top = seen.amax(-1, keepdim=True)
        trace.append((top, torch.exp(seen - top).sum(-1, keepdim=True)))
    return torch.exp(scores - top) / trace[-1][1], trace


def prefix_by_masking(scores, block_size):
    """Right numbers, not online: the prefix picked by a mask over the whole row, the sum
    taken by a matrix product with a vector of ones."""
    columns = torch.arange(scores.shape[-1])
    ones = torch.ones(scores.shape[-1], dtype=scores.dtype)
    trace = []
    for end in range(block_size, scores.shape[-1] + block_size, block_size):
        seen = scores.masked_fill(columns >= end, -math.inf)  # (..., m)
        top = torch.max(seen, dim=-1).values
        trace.append((top, torch.exp(seen - top.unsqueeze(-1)) @ ones))
    return torch.exp(scores - top.unsqueeze(-1)) / trace[-1][1].unsqueeze(-1), trace


def cumulative_over_the_row(scores, block_size):
    """Right numbers, not online: cummax and logcumsumexp over the whole row, read at each
    block's end."""
    top, _ = torch.cummax(scores, dim=-1)
    lse = torch.logcumsumexp(scores, dim=-1)
    ends = [min(e, scores.shape[-1]) - 1 for e in range(block_size, scores.shape[-1]
                                                         + block_size, block_size)]
    trace = [(top[..., e], torch.exp(lse[..., e] - top[..., e])) for e in ends]
    return torch.exp(scores - lse[..., -1:]), trace


def two_pass_with_prefix_trace(scores, block_size):
    """Not online: the result from the whole row's max and sum, the trace from prefixes."""
    top = scores.amax(-1, keepdim=True)
    e = torch.exp(scores - top)
    return e / e.sum(-1, keepdim=True), prefix_recompute(scores, block_size)[1]


def private_softmax(scores, block_size):
    """Wrong: a library softmax under another name, with a right trace."""
    return torch._softmax(scores, -1, False), online_by_blocks(scores, block_size)[1]


@pytest.mark.parametrize("not_online", [prefix_recompute, prefix_by_masking,
                                        cumulative_over_the_row, two_pass_with_prefix_trace])
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32], ids=str)
def test_online_softmax_checker_rejects_right_numbers_read_more_than_once(not_online, dtype):
    for s in (torch.randn(3, 11, dtype=dtype), torch.randn(7, dtype=dtype)):
        got, trace = not_online(s, 3)  # the numbers are right: only the reading is wrong
        torch.testing.assert_close(got, torch.softmax(s, -1))
        for (top, total), (ref_top, ref_total) in zip(
            trace, online_by_blocks(s, 3)[1], strict=True
        ):
            torch.testing.assert_close(top.reshape(ref_top.shape), ref_top)
            torch.testing.assert_close(total.reshape(ref_total.shape), ref_total)
    with pytest.raises(AssertionError, match="the numbers are right, but .* scores at once"):
        check_online_softmax(lambda s, b: not_online(s.to(dtype), b))


def test_a_prefix_recompute_is_named_as_one():
    with pytest.raises(AssertionError, match="entries read so far"):
        check_online_softmax(prefix_recompute)
    with pytest.raises(AssertionError, match="over the whole row"):
        check_online_softmax(cumulative_over_the_row)


@pytest.mark.parametrize(
    ("wrong", "message"),
    [
        (private_softmax, "calls softmax"),
        (two_pass_ignoring_block_size, "two-pass softmax"),
        (special_softmax, "calls softmax"),
        (forgets_to_rescale, "not rescaled"),
        (off_by_one_blocks, "entries but should have|running"),
        (result_only, "return a pair"),
        (lambda s, b: torch.softmax(s, dim=-1), "calls softmax"),
        (lambda s, b: s.softmax(-1), "calls softmax"),
        (
            lambda s, b: (torch.exp(s) / torch.exp(s).sum(-1, keepdim=True),
                          online_by_blocks(s, b)[1]),
            "exp overflowed",
        ),
    ],
)
def test_online_softmax_checker_rejects_wrong_answers(wrong, message):
    with pytest.raises(AssertionError, match=message):
        check_online_softmax(wrong)


def test_the_softmax_patch_is_undone():
    with pytest.raises(AssertionError):
        check_online_softmax(special_softmax)
    assert torch.allclose(torch.special.softmax(torch.zeros(2), dim=-1), torch.full((2,), 0.5))
    assert torch.allclose(torch.softmax(torch.zeros(2), dim=-1), torch.full((2,), 0.5))


def test_the_package_online_softmax_matches_the_reference_result():
    scores = torch.randn(3, 11, dtype=torch.float64)
    torch.testing.assert_close(online_softmax(scores, 4), online_softmax_variant(scores, 4))


def test_previous_token_checker_passes_the_package():
    check_previous_token_score(previous_token_score)


@pytest.mark.parametrize("bug", list(PREVIOUS_TOKEN_SLIPS))
def test_previous_token_checker_names_each_bug(bug):
    with pytest.raises(AssertionError, match=re.escape(PREVIOUS_TOKEN_SLIPS[bug][:25])):
        check_previous_token_score(lambda w: previous_token_variant(w, bug))
