"""speculative_accept: the tokens it emits are distributed as the target's, counted over
many draws; expected_tokens_per_step against the sum of the geometric series."""

import re

import pytest
import torch

from attention_qa import speculative
from attention_qa.inference import H100_BANDWIDTH, H100_FLOPS, step_costs
from attention_qa.speculative import (
    acceptance_rate,
    expected_tokens_per_step,
    speculative_accept,
    speedup,
    verify_time_ratio,
)

P = torch.tensor([[0.5, 0.2, 0.2, 0.1], [0.1, 0.6, 0.2, 0.1], [0.25, 0.25, 0.25, 0.25]],
                 dtype=torch.float64)  # (γ + 1, V), γ = 2
Q = torch.tensor([[0.1, 0.6, 0.2, 0.1], [0.4, 0.3, 0.2, 0.1]], dtype=torch.float64)  # (γ, V)


def run(p, q, draws, seed=0):
    gen = torch.Generator().manual_seed(seed)
    out = []
    for _ in range(draws):
        drafts = torch.stack([torch.multinomial(q[i], 1, generator=gen)[0]
                              for i in range(q.shape[0])])  # (γ,)
        out.append(speculative_accept(p, q, drafts, generator=gen))
    return out


def within(freq_counts, total, probs):
    """Every count within 5 standard deviations of total · prob."""
    for count, prob in zip(freq_counts, probs.tolist(), strict=True):
        assert abs(count - total * prob) <= 5 * (total * prob * (1 - prob)) ** 0.5 + 1


def test_each_emitted_token_is_distributed_as_the_target():
    runs = run(P, Q, 20000)
    first = torch.bincount(torch.tensor([r[0] for r in runs]), minlength=4)
    within(first.tolist(), len(runs), P[0])
    # The second token exists when the first draft was accepted, and is then drawn as p[1].
    second = [r[1] for r in runs if len(r) >= 2]
    within(torch.bincount(torch.tensor(second), minlength=4).tolist(), len(second), P[1])
    bonus = [r[2] for r in runs if len(r) == 3]
    within(torch.bincount(torch.tensor(bonus), minlength=4).tolist(), len(bonus), P[2])


def test_mean_tokens_per_step_matches_the_formula():
    # Same p and q at every position, so each draft is accepted with α = Σ min(p, q).
    p = torch.tensor([[0.6, 0.3, 0.1]] * 4, dtype=torch.float64)
    q = torch.tensor([[0.2, 0.5, 0.3]] * 3, dtype=torch.float64)
    alpha = float(torch.minimum(p[0], q[0]).sum())  # 0.6
    runs = run(p, q, 20000, seed=1)
    mean = sum(len(r) for r in runs) / len(runs)
    assert abs(mean - expected_tokens_per_step(alpha, 3)) < 0.03
    assert all(1 <= len(r) <= 4 for r in runs)


def test_a_draft_equal_to_the_target_is_always_accepted():
    out = speculative_accept(P, P[:2].clone(), torch.tensor([1, 2]),
                             generator=torch.Generator().manual_seed(0))
    assert out[:2] == [1, 2] and len(out) == 3


@pytest.mark.parametrize("alpha", [0.0, 0.3, 0.8, 0.99, 1.0])
@pytest.mark.parametrize("gamma", [0, 1, 4, 7])
def test_expected_tokens_is_the_geometric_sum(alpha, gamma):
    assert expected_tokens_per_step(alpha, gamma) == pytest.approx(
        sum(alpha ** k for k in range(gamma + 1)))


@pytest.mark.parametrize("p, q, drafts, words", [
    (P[:2], Q, torch.tensor([0, 1]), "γ + 1"),
    (P, Q, torch.tensor([0]), "shape (2,)"),
    (P, Q, torch.tensor([0, 9]), "[0, V)"),
    (P, Q * 2, torch.tensor([0, 1]), "sum to 1"),
    (P, torch.tensor([[0.0, 1.0, 0.0, 0.0], [0.25] * 4], dtype=torch.float64),
     torch.tensor([0, 1]), "draft probability 0"),
])
def test_bad_input_is_refused_in_words(p, q, drafts, words):
    with pytest.raises(ValueError, match=re.escape(words)):
        speculative_accept(p, q, drafts)


def test_acceptance_rate_is_one_minus_total_variation_and_the_sampled_rate():
    p, q = P[:2], Q
    alpha = acceptance_rate(p, q)
    assert torch.allclose(alpha, 1 - 0.5 * (p - q).abs().sum(-1))
    runs = run(P, Q, 20000, seed=3)
    accepted_first = sum(len(r) >= 2 for r in runs) / len(runs)
    assert abs(accepted_first - float(alpha[0])) < 0.015


def test_a_token_the_target_never_emits_is_rejected_even_when_u_is_zero(monkeypatch):
    """u is drawn from [0, 1): the test u·q(x) < p(x) is strict, so p(x) = 0 rejects x."""
    monkeypatch.setattr(speculative.torch, "rand",
                        lambda *args, **kwargs: torch.zeros((), dtype=torch.float64))
    p = torch.tensor([[0.0, 0.5, 0.5], [1 / 3] * 3], dtype=torch.float64)  # (γ + 1, V), γ = 1
    q = torch.tensor([[0.5, 0.5, 0.0]], dtype=torch.float64)  # (γ, V)
    out = speculative_accept(p, q, torch.tensor([0]))
    assert out == [2]  # rejected, then drawn from max(p − q, 0), all on token 2
    assert speculative_accept(p, q, torch.tensor([1]))[0] == 1  # p ≥ q: always kept


def test_speedup_is_tokens_over_time():
    assert speedup(0.8, 4, 0.0) == pytest.approx(expected_tokens_per_step(0.8, 4))
    assert speedup(0.8, 4, 0.25) == pytest.approx(expected_tokens_per_step(0.8, 4) / 2)
    assert speedup(0.0, 3, 0.1) < 1  # a draft that is never right only costs time
    with pytest.raises(ValueError, match="cost"):
        speedup(0.5, 2, -1)


def test_speedup_charges_a_dearer_verifying_pass():
    assert speedup(0.8, 4, 0.05, verify=2.0) == pytest.approx(
        expected_tokens_per_step(0.8, 4) / (4 * 0.05 + 2))
    assert speedup(0.8, 4, 0.05) == speedup(0.8, 4, 0.05, verify=1.0)
    with pytest.raises(ValueError, match="verify"):
        speedup(0.8, 4, 0.05, verify=0.5)


@pytest.mark.parametrize("model, batch, context", [
    ("Llama-2-7B", 1, 4096), ("Llama-2-7B", 64, 4096), ("Llama-3-8B", 64, 4096),
    ("Llama-3-8B", 64, 512), ("Llama-3-8B", 256, 512),
])
@pytest.mark.parametrize("gamma", [0, 4, 8])
def test_verifying_costs_one_decode_step_exactly_while_memory_bound(model, batch, context,
                                                                     gamma):
    ratio = verify_time_ratio(model, batch, gamma, context)
    intensity = step_costs(model, batch, gamma + 1, context)["intensity"]
    if intensity <= H100_FLOPS / H100_BANDWIDTH:
        assert ratio == pytest.approx(1)  # same bytes: weights once, the same cache
    else:
        assert ratio > 1


def test_verifying_crosses_the_ridge_only_with_a_large_batch_and_a_small_cache():
    assert verify_time_ratio("Llama-3-8B", 256, 4, 512) > 2
    assert verify_time_ratio("Llama-3-8B", 256, 4, 4096) == pytest.approx(1)
    assert verify_time_ratio("Llama-2-7B", 64, 4, 4096) == pytest.approx(1)
