import math

from attention_qa.explorers.norm_concentration import (
    norm_concentration_explorer,
    norm_ratios,
)


def test_the_spread_shrinks_like_one_over_root_2d():
    explorer = norm_concentration_explorer()
    spreads = [float(explorer.frame(d=d).figures["std of ‖x‖/√d"]) for d in (1, 16, 256, 4096)]
    assert spreads == sorted(spreads, reverse=True)
    for d in (64, 1024):
        assert abs(norm_ratios(d).std().item() * math.sqrt(2 * d) - 1) < 0.1
    assert abs(norm_ratios(4096).mean().item() - 1) < 0.01
