"""The playground explorer: every setting computes, scaling and masks act, figures are right."""

import math
import re

import torch

from attention_qa.explorers.playground import playground_explorer
from attention_qa.panel import Frame
from attention_qa.saturation import playground_weights, saturation_stats, valid_length


def _mean(figures, key, head=1):
    return float(re.search(rf"{key} ([0-9.]+)", figures[f"head {head}"]).group(1))


def test_every_setting_computes():
    explorer = playground_explorer()
    assert explorer.num_frames == 108 <= 200
    for settings in explorer.settings():
        frame = explorer.frame(**settings)
        assert isinstance(frame, Frame), settings
        assert sum(key.startswith("head ") for key in frame.figures) == settings["heads"]


def test_unscaled_large_d_k_saturates_and_scaling_keeps_it_flat():
    explorer = playground_explorer()

    def fig(d_k, scaling):
        return explorer.frame(d_k=d_k, heads=1, mask="none", scaling=scaling, n=16).figures

    assert _mean(fig(512, "none"), "max weight") > 0.85 > _mean(fig(4, "none"), "max weight")
    assert _mean(fig(512, "none"), "Jacobian norm") < _mean(fig(4, "none"), "Jacobian norm")
    assert abs(_mean(fig(512, "1/√d_k"), "entropy") - _mean(fig(4, "1/√d_k"), "entropy")) < 0.5
    assert _mean(fig(512, "1/d_k"), "entropy") > math.log(16) - 0.01


def test_masks_zero_the_right_weights_and_rows_sum_to_one():
    _, causal = playground_weights(64, 4, "causal", "1/√d_k", 8)
    assert causal.triu(diagonal=1).abs().max() == 0
    _, padded = playground_weights(64, 4, "padding", "1/√d_k", 16)
    assert padded[..., valid_length(16) :].abs().max() == 0
    for w in (causal, padded):
        assert torch.allclose(w.sum(-1), torch.ones(w.shape[:-1]))


def test_figures_match_saturation_stats_on_the_scores():
    scores, weights = playground_weights(4, 4, "none", "none", 8)
    assert torch.allclose(weights, torch.softmax(scores, dim=-1))
    stats = saturation_stats(scores)
    frame = playground_explorer().frame(d_k=4, heads=4, mask="none", scaling="none", n=8)
    assert abs(_mean(frame.figures, "max weight", 2) - stats["max_weight"][1].mean()) < 0.006


def test_uniform_figures_count_the_keys_each_query_sees():
    explorer = playground_explorer()

    def uniform(mask, n):
        text = explorer.frame(d_k=64, heads=1, mask=mask, scaling="1/√d_k", n=n).figures[
            "uniform would give"
        ]
        return float(re.search(r"max weight ([0-9.]+)", text).group(1))

    assert uniform("none", 8) == round(1 / 8, 2)
    assert uniform("padding", 16) == round(1 / valid_length(16), 2)
    # causal: query i sees i + 1 keys, so the mean of 1/(i + 1) over the 8 queries
    assert uniform("causal", 8) == round(sum(1 / (i + 1) for i in range(8)) / 8, 2)


def test_one_head_fills_the_canvas_and_four_share_it():
    explorer = playground_explorer()
    for heads in (1, 4):
        frame = explorer.frame(d_k=64, heads=heads, mask="none", scaling="1/√d_k", n=8)
        explorer.render(frame)
        shown = [ax for ax in explorer.figure.axes if ax.get_visible() and ax.images]
        assert len(shown) == heads
