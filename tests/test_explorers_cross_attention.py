"""q13's explorer: every setting computes, figures move."""

from attention_qa.explorers.cross_attention import KINDS, cross_attention_explorer
from attention_qa.panel import Frame, InvalidSetting


def test_every_setting_computes():
    explorer = cross_attention_explorer()
    assert explorer.num_frames <= 200
    for settings in explorer.settings():
        frame = explorer.frame(**settings)
        if settings["valid"] > settings["m"]:
            assert isinstance(frame, InvalidSetting), settings
        else:
            assert isinstance(frame, Frame), settings


def test_shapes_follow_where_q_and_kv_come_from():
    explorer = cross_attention_explorer()
    enc, dec, cross = KINDS
    assert explorer.frame(kind=cross, m=8, n=3, valid=6).figures["weights"] == "3 × 8"
    assert explorer.frame(kind=dec, m=8, n=3, valid=6).figures["weights"] == "3 × 3"
    assert explorer.frame(kind=enc, m=8, n=3, valid=6).figures["weights"] == "8 × 8"
    assert "memory" in explorer.frame(kind=cross, m=8, n=3, valid=6).figures["keys and values from"]


def test_padding_columns_get_zero_weight_and_rows_sum_to_one():
    explorer = cross_attention_explorer()
    for kind in (KINDS[0], KINDS[2]):
        frame = explorer.frame(kind=kind, m=8, n=5, valid=2)
        weights = frame.data["weights"]
        assert weights[:, 2:].abs().max() == 0
        assert frame.figures["largest weight on padding"] == "0.000"
        assert frame.figures["row sums"] == "1.000 to 1.000"


def test_decoder_self_attention_is_causal():
    weights = cross_attention_explorer().frame(kind=KINDS[1], m=4, n=8, valid=4).data["weights"]
    assert weights.triu(diagonal=1).abs().max() == 0
