from attention_qa.explorers.modern_block import modern_block_explorer

LLAMA = dict(norm="rmsnorm", norm_first=True, ffn="swiglu", bias=False)


def test_qk_norm_keeps_the_logits_bounded_as_the_weights_grow():
    explorer = modern_block_explorer()
    without = [max(explorer.frame(**LLAMA, qk_norm=False, qk_scale=s).data["max_logit"])
               for s in (1, 2, 4)]
    with_norm = [max(explorer.frame(**LLAMA, qk_norm=True, qk_scale=s).data["max_logit"])
                 for s in (1, 2, 4)]
    assert without == sorted(without) and without[-1] > 10 * without[0]
    assert max(with_norm) <= 24**0.5  # √d_head with d_head = 96 / 4


def test_post_norm_keeps_the_stream_at_rms_one_pre_norm_lets_it_grow():
    explorer = modern_block_explorer()
    post = explorer.frame(**explorer.defaults).data["rms"]
    pre = explorer.frame(**{**explorer.defaults, "norm_first": True}).data["rms"]
    assert all(abs(v - 1) < 1e-3 for v in post)
    assert pre == sorted(pre) and pre[-1] > 1.2


def test_swiglu_at_eight_thirds_keeps_the_feed_forward_weights():
    explorer = modern_block_explorer()
    relu = explorer.frame(**{**explorer.defaults, "bias": False}).data["counts"]
    swiglu = explorer.frame(**{**explorer.defaults, "bias": False, "ffn": "swiglu"}).data
    assert swiglu["counts"]["feed-forward"] == relu["feed-forward"] == 73_728
