"""q38's explorer shows what the lesson module computes, for every pair of models."""

import pytest

from attention_qa.anatomy import PARTS, kv_cache_bytes_per_token, parameter_parts
from attention_qa.explorers.anatomy import CHOICES, anatomy_explorer


@pytest.mark.parametrize("model_a", CHOICES)
def test_every_pair_draws_the_module_s_shares_and_caches(model_a):
    explorer = anatomy_explorer()
    for model_b in CHOICES:
        frame = explorer.frame(model_a=model_a, model_b=model_b)
        for shares, name in zip(frame.data["shares"], (model_a, model_b), strict=True):
            parts = parameter_parts(name)
            assert abs(sum(shares) - 1) < 1e-12
            assert shares == [parts[p] / sum(parts.values()) for p in PARTS]
        assert frame.data["caches"] == [kv_cache_bytes_per_token(model_a),
                                        kv_cache_bytes_per_token(model_b)]


def test_the_default_pair_shows_gqa_cutting_the_cache_by_four():
    frame = anatomy_explorer().frame(model_a="Llama-2-7B", model_b="Mistral-7B")
    assert frame.figures["cache per token, A / B"] == "4.00×"
    assert "window 4,096" in frame.figures["B: Mistral-7B"]
    moe = anatomy_explorer().frame(model_a="Mixtral-8x7B", model_b="DeepSeek-V3")
    assert "per token" in moe.figures["A: parameters"]
    assert "MLA" in moe.figures["B: DeepSeek-V3"]
