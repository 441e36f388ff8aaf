"""saturation_stats against torch.softmax and autograd's Jacobian."""

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_qa.saturation import saturation_stats, scaled_scores, softmax_jacobian_norm


def _autograd_jacobian_norm(scores_row: torch.Tensor) -> torch.Tensor:
    jac = torch.autograd.functional.jacobian(lambda s: torch.softmax(s, dim=-1), scores_row)
    return jac.norm()


@settings(max_examples=30, deadline=None)
@given(
    lead=st.lists(st.integers(1, 3), max_size=2),
    m=st.integers(1, 12),
    spread=st.floats(0.01, 30.0),
    seed=st.integers(0, 10_000),
)
def test_against_softmax_and_autograd(lead, m, spread, seed):
    g = torch.Generator().manual_seed(seed)
    scores = torch.randn(*lead, m, generator=g, dtype=torch.float64) * spread
    stats = saturation_stats(scores)
    p = torch.softmax(scores, dim=-1)
    for value in stats.values():
        assert value.shape == tuple(lead)
    torch.testing.assert_close(stats["max_weight"], p.max(dim=-1).values)
    entropy = -(p * torch.log(p)).nan_to_num().sum(-1)
    torch.testing.assert_close(stats["entropy"], entropy)
    flat_scores = scores.reshape(-1, m)
    expected = torch.stack([_autograd_jacobian_norm(row) for row in flat_scores])
    torch.testing.assert_close(stats["jacobian_norm"].reshape(-1), expected, atol=1e-7, rtol=1e-6)


def test_limits_uniform_and_one_hot():
    m = 8
    uniform = saturation_stats(torch.zeros(m))
    assert math.isclose(uniform["max_weight"].item(), 1 / m, rel_tol=1e-6)
    assert math.isclose(uniform["entropy"].item(), math.log(m), rel_tol=1e-6)
    assert math.isclose(uniform["jacobian_norm"].item(), math.sqrt(1 / m - 1 / m**2), rel_tol=1e-5)
    spiky = saturation_stats(torch.tensor([100.0] + [0.0] * (m - 1)))
    assert spiky["max_weight"].item() == pytest.approx(1.0)
    assert spiky["entropy"].item() < 1e-6 and spiky["jacobian_norm"].item() < 1e-6


def test_jacobian_norm_of_probabilities_directly():
    p = torch.tensor([0.5, 0.5])
    assert softmax_jacobian_norm(p).item() == pytest.approx(0.5)


def test_bad_input():
    with pytest.raises(TypeError, match="scores must be a floating-point tensor"):
        saturation_stats(torch.tensor([1, 2, 3]))
    with pytest.raises(ValueError, match="scores has shape"):
        saturation_stats(torch.tensor(1.0))


def test_q04_scores_have_the_variance_the_chapter_claims():
    raw = scaled_scores(256, "none", m=128)
    assert abs(raw.var().item() / 256 - 1) < 0.1
    assert abs(scaled_scores(256, "1/√d_k", m=128).var().item() - 1) < 0.1
    assert torch.isclose(
        scaled_scores(256, "1/d_k", m=8) * 256, scaled_scores(256, "none", m=8)
    ).all()


def test_uniform_playground_stats_average_over_the_keys_each_query_sees():
    from attention_qa.saturation import uniform_playground_stats, valid_length

    none = uniform_playground_stats("none", 8)
    assert none["max_weight"] == pytest.approx(1 / 8) and none["entropy"] == pytest.approx(
        math.log(8)
    )
    padding = uniform_playground_stats("padding", 16)
    assert padding["max_weight"] == pytest.approx(1 / valid_length(16))
    causal = uniform_playground_stats("causal", 4)  # queries see 1, 2, 3, 4 keys
    assert causal["max_weight"] == pytest.approx((1 + 1 / 2 + 1 / 3 + 1 / 4) / 4)
    assert causal["entropy"] == pytest.approx(sum(math.log(i) for i in range(1, 5)) / 4, abs=1e-6)
    with pytest.raises(ValueError):
        uniform_playground_stats("sliding", 4)


def test_playground_figures_agree_with_torch_distributions():
    from attention_qa.saturation import playground_figures, playground_weights

    scores, weights = playground_weights(64, 2, "causal", "none", 8)
    figures = playground_figures(scores, "causal")
    entropy = torch.distributions.Categorical(probs=weights).entropy().mean(-1)  # (h,)
    for i in range(2):
        expected = f"max weight {weights[i].max(-1).values.mean():.2f}, entropy {entropy[i]:.2f}"
        assert figures[f"head {i + 1}"].startswith(expected)
    assert figures["uniform would give"].startswith("max weight 0.34")  # mean of 1/(i+1), i<8
    with pytest.raises(ValueError, match=r"\(heads, n, n\)"):
        playground_figures(scores[:, :, :4], "causal")
