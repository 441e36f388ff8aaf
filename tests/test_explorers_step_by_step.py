"""q03's explorer: every setting computes, the steps are right."""

import math

import torch
import torch.nn.functional as F

from attention_qa.attention import worked_example
from attention_qa.explorers.step_by_step import TOKENS, step_explorer, steps
from attention_qa.panel import Frame


def test_every_setting_computes():
    explorer = step_explorer()
    for settings in explorer.settings():
        assert isinstance(explorer.frame(**settings), Frame), settings
    assert explorer.num_frames == 6


def test_steps_match_pytorch():
    X, W_Q, W_K, W_V = worked_example()
    expected = F.scaled_dot_product_attention(X @ W_Q, X @ W_K, X @ W_V)  # (n, d_v)
    unscaled = F.scaled_dot_product_attention(X @ W_Q, X @ W_K, X @ W_V, scale=1.0)
    for i in range(len(TOKENS)):
        torch.testing.assert_close(steps(i)["output"], expected[i])
        torch.testing.assert_close(steps(i, "none")["output"], unscaled[i])
        torch.testing.assert_close(steps(i)["scaled"], steps(i)["scores"] / math.sqrt(4))


def test_scaling_flattens_the_weights():
    explorer = step_explorer()
    for token in TOKENS:
        scaled = explorer.frame(token=token, scaling="÷√d_k").data["weights"]
        unscaled = explorer.frame(token=token, scaling="none").data["weights"]
        assert scaled.max() < unscaled.max()
        assert scaled.argmax() == unscaled.argmax()
