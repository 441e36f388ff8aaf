import torch

from attention_qa.attention import scaled_dot_product_attention
from attention_qa.efficient import online_softmax
from attention_qa.explorers.online_softmax import (
    online_softmax_explorer,
    online_trace,
    query_scores_and_values,
)
from attention_qa.panel import Frame


def test_every_setting_reads_whole_blocks_covering_its_share_of_the_keys():
    explorer = online_softmax_explorer()
    assert explorer.num_frames <= 200
    for settings in explorer.settings():
        frame = explorer.frame(**settings)
        assert isinstance(frame, Frame), settings
        m, b = settings["m"], settings["block_size"]
        keys = round(settings["read"] * m)
        assert keys % b == 0, settings  # a quarter of a row is whole blocks
        assert frame.figures["keys read"] == f"{keys} of {m}"
        assert frame.figures["blocks read"] == f"{keys // b} of {m // b}"
        assert "running max" in frame.figures


def test_the_last_block_gives_exact_attention():
    for m, b in ((16, 4), (32, 8), (64, 16), (32, 16)):
        scores, values = query_scores_and_values(m)
        final = online_trace(scores, values, b)[-1]
        q = scores.reshape(1, m)  # scores as q·k with identity keys and scale 1
        keys = torch.eye(m, dtype=q.dtype)  # (m, m)
        expected, _ = scaled_dot_product_attention(q, keys, values, scale=1.0)
        assert torch.allclose(final["out"], expected[0])
        assert final["max"] == scores.max().item()
        assert abs(final["sum"] - torch.exp(scores - scores.max()).sum().item()) < 1e-12


def test_the_running_state_matches_the_package_softmax():
    scores, values = query_scores_and_values(32)
    trace = online_trace(scores, values, 8)
    assert torch.allclose(
        torch.exp(scores - trace[-1]["max"]) / trace[-1]["sum"], online_softmax(scores, 8)
    )


def test_the_error_shrinks_to_zero_and_the_max_only_grows():
    explorer = online_softmax_explorer()
    first = explorer.frame(block_size=8, m=32, read=0.25)
    last = explorer.frame(block_size=8, m=32, read=1.0)
    err = "max error vs exact after this block"
    assert float(first.figures[err]) > 0.1 > 1e-12 > float(last.figures[err])
    maxima = [t["max"] for t in online_trace(*query_scores_and_values(64), 4)]
    assert maxima == sorted(maxima) and maxima[0] < maxima[-1]
