"""q27's explorer: the bars and figures are the cache and weight counts of each kind."""

from attention_qa.costs import attention_parameters, latent_cache_bytes
from attention_qa.explorers.latent_cache import latent_cache_explorer


def test_deepseek_v2_setting_gives_the_papers_numbers():
    frame = latent_cache_explorer().frame(kind="MLA", num_heads=128, d_latent=512)
    assert frame.figures["cached per token and layer"] == "576 numbers"  # d_c + d_h^R
    assert frame.figures["as many as GQA with"] == "2.25 K/V heads"  # DeepSeek-V2, table 1
    assert frame.figures["vs MHA"] == "56.9× smaller"  # 32768 / 576
    assert latent_cache_bytes(60, 512, 1, d_rope=64) == 576 * 60 * 2
    assert frame.figures["per token, 60 layers, bf16"] == f"{576 * 60 * 2 / 1024:,.1f} KiB"


def test_bars_hold_every_kind_and_only_mla_moves_with_d_latent():
    explorer = latent_cache_explorer()
    small = explorer.frame(kind="MHA", num_heads=32, d_latent=128).data
    large = explorer.frame(kind="MHA", num_heads=32, d_latent=1024).data
    assert small["cache"][:3] == large["cache"][:3] == [2 * 32 * 128, 2 * 8 * 128, 2 * 128]
    assert (small["cache"][3], large["cache"][3]) == (128 + 64, 1024 + 64)
    assert large["params"][3] * 1e6 == attention_parameters(
        "MLA", 5120, 32, 128, d_latent=1024, d_rope=64
    )


def test_mha_cache_grows_with_heads_mla_cache_does_not():
    explorer = latent_cache_explorer()
    few, many = (explorer.frame(kind="MLA", num_heads=h, d_latent=512).data for h in (16, 128))
    assert many["cache"][0] == 8 * few["cache"][0]
    assert many["cache"][3] == few["cache"][3] == 576
    assert many["cache"][2] == few["cache"][2]  # MQA: one K/V head whatever the heads
