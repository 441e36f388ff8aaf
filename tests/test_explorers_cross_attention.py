"""q13's explorer: every setting computes, figures move."""

from attention_qa.explorers.cross_attention import KINDS, cross_attention_explorer
from attention_qa.panel import Frame


def test_every_setting_computes_and_keeps_a_real_source_token():
    explorer = cross_attention_explorer()
    assert explorer.num_frames <= 200
    for settings in explorer.settings():
        frame = explorer.frame(**settings)
        assert isinstance(frame, Frame), settings
        if settings["kind"] != KINDS[1]:
            real = settings["m"] - settings["padding"]
            assert real >= 1 and frame.figures["real source tokens"] == f"{real} of {settings['m']}"


def test_shapes_follow_where_q_and_kv_come_from():
    explorer = cross_attention_explorer()
    enc, dec, cross = KINDS
    assert explorer.frame(kind=cross, m=8, n=3, padding=2).figures["weights"] == "3 × 8"
    assert explorer.frame(kind=dec, m=8, n=3, padding=2).figures["weights"] == "3 × 3"
    assert explorer.frame(kind=enc, m=8, n=3, padding=2).figures["weights"] == "8 × 8"
    kv_from = explorer.frame(kind=cross, m=8, n=3, padding=2).figures["keys and values from"]
    assert "memory" in kv_from


def test_padding_columns_get_zero_weight_and_rows_sum_to_one():
    explorer = cross_attention_explorer()
    for kind in (KINDS[0], KINDS[2]):
        frame = explorer.frame(kind=kind, m=4, n=5, padding=3)
        weights = frame.data["weights"]
        assert weights[:, 1:].abs().max() == 0 and weights[:, 0].min() == 1
        assert frame.figures["largest weight on padding"] == "0.000"
        assert frame.figures["row sums"] == "1.000 to 1.000"


def test_decoder_self_attention_is_causal():
    weights = cross_attention_explorer().frame(kind=KINDS[1], m=4, n=8, padding=0).data["weights"]
    assert weights.triu(diagonal=1).abs().max() == 0


def test_a_frame_leaves_torch_s_threads_as_they_were():
    import torch

    threads = torch.get_num_threads()
    cross_attention_explorer().frame(kind=KINDS[2], m=8, n=5, padding=1)
    assert torch.get_num_threads() == threads
