"""q05's explorer: additive, dot-product and scaled dot-product weights as d_k grows."""

import math

import pytest
import torch

from attention_qa.attention import AdditiveAttention
from attention_qa.explorers.score_functions import (
    METHODS,
    score_function_explorer,
    score_function_frame,
    score_function_weights,
)
from attention_qa.panel import Frame


def _max_weights(frame):
    return frame.data["max_weight"]


def test_every_setting_computes():
    explorer = score_function_explorer()
    assert explorer.num_frames == 11 * 3
    for settings in explorer.settings():
        frame = explorer.frame(**settings)
        assert isinstance(frame, Frame), settings
        assert set(frame.figures) == {"max weight", "entropy"}


def test_weights_match_independent_references():
    d_k, m = 16, 8
    weights = score_function_weights(d_k, m, n=5, d_hidden=4, seed=3)
    g = torch.Generator().manual_seed(3)
    q, k = torch.randn(5, d_k, generator=g), torch.randn(m, d_k, generator=g)
    v = torch.eye(m)  # the output of attention over one-hot values is the weights
    scaled = torch.nn.functional.scaled_dot_product_attention(q, k, v)
    unscaled = torch.nn.functional.scaled_dot_product_attention(q, k, v, scale=1.0)
    assert torch.allclose(weights["scaled dot"], scaled, atol=1e-6)
    assert torch.allclose(weights["dot"], unscaled, atol=1e-6)
    torch.manual_seed(3)
    module = AdditiveAttention(d_k, d_k, 4)
    with torch.no_grad():
        w_q, w_k, w_v = module.W_q.weight, module.W_k.weight, module.w_v.weight
        scores = torch.tanh((q @ w_q.T)[:, None, :] + (k @ w_k.T)[None, :, :]) @ w_v[0]  # (n, m)
    assert torch.allclose(weights["additive"], torch.softmax(scores, dim=-1), atol=1e-6)


def test_global_random_state_is_left_alone():
    torch.manual_seed(0)
    expected = torch.rand(3)
    torch.manual_seed(0)
    score_function_weights(8, 4)
    assert torch.equal(torch.rand(3), expected)


def test_figures_move_in_the_expected_direction():
    small, large = score_function_frame(4, 32), score_function_frame(1024, 32)
    # Unscaled dot product saturates as d_k grows; the other two do not.
    assert _max_weights(large)["dot"] > 0.9 > _max_weights(small)["dot"]
    assert large.data["entropy_fraction"]["dot"] < 0.1
    for name in ("additive", "scaled dot"):
        assert abs(_max_weights(large)[name] - _max_weights(small)[name]) < 0.05
        assert large.data["entropy_fraction"][name] > 0.8
    # More keys: the uniform weight 1/m falls, and so does the additive max weight.
    few, many = score_function_frame(64, 8), score_function_frame(64, 128)
    assert _max_weights(many)["additive"] < _max_weights(few)["additive"]
    for frame, m in ((few, 8), (many, 128)):
        for name in METHODS:
            assert 1 / m - 1e-6 <= _max_weights(frame)[name] <= 1
        assert frame.data["sorted"]["dot"].shape == (m,)
        assert math.isclose(frame.data["sorted"]["dot"].sum().item(), 1, rel_tol=1e-5)


def test_invalid_sizes_are_named():
    with pytest.raises(ValueError, match="d_k"):
        score_function_weights(0, 4)
