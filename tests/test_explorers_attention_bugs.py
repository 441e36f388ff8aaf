"""q06's explorer: classic attention bugs beside the correct weights, with the verdict."""

import torch
import torch.nn.functional as F

from attention_qa.explorers.attention_bugs import (
    BUGS,
    NUM_PADDING,
    attention_bug_explorer,
    bug_frame,
    bug_inputs,
)
from attention_qa.panel import Frame, InvalidSetting


def test_every_setting_computes():
    explorer = attention_bug_explorer()
    assert explorer.num_frames == len(BUGS) * 3 * 3
    invalid = 0
    for settings in explorer.settings():
        frame = explorer.frame(**settings)
        if isinstance(frame, InvalidSetting):
            assert settings["bug"] == "k @ qᵀ (wrong transpose)" and settings["n"] != settings["m"]
            assert "n ≠ m" in str(frame)
            invalid += 1
        else:
            assert isinstance(frame, Frame), settings
            assert "checker" in frame.figures
    assert invalid == 6


def test_correct_weights_match_torch():
    q, k, v, mask = bug_inputs(4, 6)
    frame = bug_frame("none (correct)", 4, 6)
    expected = F.scaled_dot_product_attention(q, k, torch.eye(6), attn_mask=mask)  # weights
    assert torch.allclose(frame.data["weights"], expected, atol=1e-6)
    assert frame.figures["max |weight error|"] == "0.000"
    assert frame.figures["checker"] == "passes every check"


def test_each_bug_is_wrong_and_named_by_the_checker():
    keywords = {
        "softmax over the queries": "wrong axis",
        "k @ qᵀ (wrong transpose)": "transposed",
        "scaled by √d_model (512)": "√512",
        "mask convention flipped": "wrong way round",
        "no scaling": "not scaled",
    }
    for bug, keyword in keywords.items():
        frame = bug_frame(bug, 6, 6)
        assert float(frame.figures["max |weight error|"]) > 0.05, bug
        assert keyword in frame.figures["checker"], bug


def test_figures_move_in_the_expected_direction():
    flipped = bug_frame("mask convention flipped", 4, 8)
    correct = bug_frame("none (correct)", 4, 8)
    # The flipped mask puts all the weight on the padding keys, the correct one none.
    assert float(flipped.figures["largest weight on padding keys (per query)"]) > 0.99
    assert float(correct.figures["largest weight on padding keys (per query)"]) == 0
    assert flipped.data["bug_weights"][:, : 8 - NUM_PADDING].abs().max() < 1e-6
    # Only the wrong softmax axis breaks the rows' sums.
    for bug in BUGS:
        frame = bug_frame(bug, 6, 6)
        expected = "no" if bug == "softmax over the queries" else "yes"
        assert frame.figures["each query's weights sum to 1"] == expected, bug
    # Forgetting the scale sharpens the weights; dividing by √512 flattens them.
    peak = {bug: bug_frame(bug, 8, 8).data["bug_weights"].amax(-1).mean() for bug in BUGS}
    assert peak["no scaling"] > peak["none (correct)"] > peak["scaled by √d_model (512)"]
