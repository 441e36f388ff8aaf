import pytest
import torch

from attention_qa.attention import scaled_dot_product_attention
from attention_qa.explorers.sparse_patterns import sparse_pattern_explorer
from attention_qa.panel import Frame
from attention_qa.sparse import make_qkv, pattern_mask


def test_every_setting_computes():
    explorer = sparse_pattern_explorer()
    assert explorer.num_frames <= 200
    for settings in explorer.settings():
        frame = explorer.frame(**settings)
        assert isinstance(frame, Frame), settings
        assert set(frame.figures) == {
            "entries kept",
            "full attention's weight on kept keys",
            "mean error",
            "max error",
        }


def _fig(explorer, name, **settings):
    return float(explorer.frame(**settings).figures[name].rstrip("%"))


@pytest.mark.parametrize("pattern", ["sliding window", "global + local"])
def test_a_wider_window_keeps_more_and_errs_less(pattern):
    explorer = sparse_pattern_explorer()
    narrow = dict(pattern=pattern, window=1, n=64, inputs="local")
    wide = dict(pattern=pattern, window=8, n=64, inputs="local")
    assert _fig(explorer, "entries kept", **wide) > _fig(explorer, "entries kept", **narrow)
    assert _fig(explorer, "mean error", **wide) < _fig(explorer, "mean error", **narrow)


def test_strided_with_a_small_stride_keeps_about_half():
    explorer = sparse_pattern_explorer()
    kept = _fig(explorer, "entries kept", pattern="strided", window=1, n=64, inputs="local")
    assert 45 <= kept <= 55


def test_local_inputs_suit_a_window_better_than_random_ones():
    explorer = sparse_pattern_explorer()
    local = dict(pattern="sliding window", window=2, n=32, inputs="local")
    rand = dict(pattern="sliding window", window=2, n=32, inputs="random")
    name = "full attention's weight on kept keys"
    assert _fig(explorer, name, **local) > 0.7 > 0.3 > _fig(explorer, name, **rand)
    assert _fig(explorer, "mean error", **local) < _fig(explorer, "mean error", **rand)


def test_a_longer_sequence_keeps_a_smaller_fraction():
    explorer = sparse_pattern_explorer()
    kept = [
        _fig(explorer, "entries kept", pattern="sliding window", window=2, n=n, inputs="local")
        for n in (16, 32, 64)
    ]
    assert kept[0] > kept[1] > kept[2]


def test_a_window_covering_everything_gives_full_attention():
    q, k, v = make_qkv("random", 16)
    mask = pattern_mask("sliding window", 16, 15)
    assert mask.all()
    sparse, _ = scaled_dot_product_attention(q, k, v, mask)
    full, _ = scaled_dot_product_attention(q, k, v)
    assert torch.allclose(sparse, full)


def test_unknown_pattern_and_inputs_are_rejected():
    with pytest.raises(ValueError, match="pattern must be one of"):
        pattern_mask("dilated", 8, 1)
    with pytest.raises(ValueError, match="inputs must be one of"):
        make_qkv("smooth", 8)
