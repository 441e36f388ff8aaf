"""q14's explorer: every setting computes, figures move."""

from attention_qa.costs import kv_cache_bytes
from attention_qa.explorers.kv_cache import PRESETS, kv_cache_explorer
from attention_qa.panel import Frame


def test_every_setting_computes_and_says_when_the_heads_cannot_form_the_groups():
    explorer = kv_cache_explorer()
    assert explorer.num_frames <= 200
    for settings in explorer.settings():
        frame = explorer.frame(**settings)
        assert isinstance(frame, Frame), settings
        heads = PRESETS[settings["preset"]][1]
        impossible = settings["choice"] == "GQA-8" and heads % 8
        assert ("do not divide" in frame.figures["K/V heads"]) == bool(impossible), settings
        assert ("GQA-8" in frame.data["sizes"]) == (not heads % 8)


def test_published_llama_2_70b_figures():
    frame = kv_cache_explorer().frame(
        preset="Llama-2-70B", choice="GQA-8", seq_len=4096, dtype_bytes=2
    )
    assert frame.figures["per token"] == "320 KiB"  # 2 · 80 · 8 · 128 · 2 bytes
    assert frame.figures["cache (batch 1)"] == "1.250 GiB"
    assert frame.figures["vs MHA"] == "8× smaller" and frame.figures["published"] == "GQA-8"


def test_cache_grows_with_length_and_bytes_and_shrinks_with_fewer_kv_heads():
    explorer = kv_cache_explorer()

    def gib(**s):
        return explorer.frame(**s).data["sizes"][s["choice"]]

    base = {"preset": "Mistral-7B", "choice": "MHA", "seq_len": 4096, "dtype_bytes": 2}
    assert gib(**{**base, "seq_len": 32768}) == 8 * gib(**base)
    assert gib(**{**base, "dtype_bytes": 4}) == 2 * gib(**base)
    assert gib(**base) > gib(**{**base, "choice": "GQA-8"}) > gib(**{**base, "choice": "MQA"})
    assert gib(**base) * 2**30 == kv_cache_bytes(32, 32, 128, 4096, 1, 2)
