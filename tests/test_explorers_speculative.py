"""q34's explorer agrees with the formulas it draws and with the sampled steps."""

import pytest

from attention_qa.explorers.speculative import (
    ALPHAS,
    COSTS,
    GAMMAS,
    SAMPLED_GAMMA,
    speculative_explorer,
)
from attention_qa.speculative import expected_tokens_per_step, sampled_steps, speedup


@pytest.mark.parametrize("alpha", ALPHAS)
@pytest.mark.parametrize("cost", COSTS)
def test_every_frame_draws_the_formulas_and_marks_the_best_length(alpha, cost):
    frame = speculative_explorer().frame(alpha=alpha, cost=cost)
    assert frame.data["tokens"] == [expected_tokens_per_step(alpha, g) for g in GAMMAS]
    gains = [speedup(alpha, g, cost) for g in GAMMAS]
    assert frame.data["gains"] == gains and gains[frame.data["best"]] == max(gains)
    for step in frame.data["steps"]:
        assert 1 <= len(step) <= SAMPLED_GAMMA + 1
        assert all(o == "accepted" for o in step[:-1])
        assert step[-1] == ("bonus" if len(step) == SAMPLED_GAMMA + 1 else "resampled")


@pytest.mark.parametrize("alpha", ALPHAS)
@pytest.mark.parametrize("cost", COSTS)
def test_the_best_length_is_the_best_of_all_lengths_not_of_those_drawn(alpha, cost):
    """The drawn lengths reach past every setting's best γ, so the star is not held at the
    edge of the plot (the longest length drawn is never the best one)."""
    best = speculative_explorer().frame(alpha=alpha, cost=cost).data["best"]
    assert best < GAMMAS[-1]
    assert best == max(range(200), key=lambda g: speedup(alpha, g, cost))


def test_a_better_draft_and_a_cheaper_one_lengthen_the_best_draft():
    best = {(a, c): speculative_explorer().frame(alpha=a, cost=c).data["best"]
            for a in ALPHAS for c in COSTS}
    assert all(best[ALPHAS[i], c] <= best[ALPHAS[i + 1], c]
               for i in range(len(ALPHAS) - 1) for c in COSTS)
    assert all(best[a, COSTS[i]] >= best[a, COSTS[i + 1]]
               for i in range(len(COSTS) - 1) for a in ALPHAS)


def test_sampled_steps_keep_drafts_at_rate_alpha():
    steps = sampled_steps(0.7, 1, 20000, seed=1)
    kept = sum(s[0] == "accepted" for s in steps) / len(steps)
    assert abs(kept - 0.7) < 0.015
