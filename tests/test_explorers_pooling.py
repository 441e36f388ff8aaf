"""q01's explorer: every setting computes, figures move."""

import torch

from attention_qa.attention import attention_pooling
from attention_qa.explorers.pooling import KEYS, VALUES, pooling_explorer


def test_figures_match_the_library_and_sharpen_as_the_bandwidth_shrinks():
    explorer = pooling_explorer()
    maxima = []
    for h in (0.02, 0.1, 0.35, 2.0):
        frame = explorer.frame(bandwidth=h, query=2.5)
        out, w = attention_pooling(torch.tensor([2.5]), KEYS, VALUES, h)
        assert frame.figures["output"] == f"{out.item():.3f}"
        assert frame.figures["weights sum to"] == "1.000"
        torch.testing.assert_close(frame.data["weights"], w[0])
        maxima.append(float(frame.figures["max weight"]))
    assert maxima == sorted(maxima, reverse=True) and maxima[0] > 0.9 and maxima[-1] < 0.05
    sharp = explorer.frame(bandwidth=0.02, query=2.5).figures
    assert abs(float(sharp["output"]) - float(sharp["nearest key's value (hard lookup)"])) < 0.05


def test_moving_the_query_moves_the_heaviest_key():
    explorer = pooling_explorer()
    for x in (0.5, 2.5, 4.5):
        weights = explorer.frame(bandwidth=0.1, query=x).data["weights"]
        assert abs(KEYS[weights.argmax()].item() - x) < 0.3
