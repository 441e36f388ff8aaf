"""attention_qa.inference against transformers' LLaMA: parameter counts of the published
configurations (built on the meta device, no weights), and FLOPs of a small model's forward
pass as PyTorch's FLOP counter counts them."""

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode
from transformers import LlamaConfig, LlamaForCausalLM

from attention_qa import inference
from attention_qa.inference import (
    LLAMA_CONFIGS,
    decode_intensity,
    llama_parameters,
    memory_bytes,
    roofline_seconds,
    step_costs,
)


def hf_config(layers, d, heads, kv_heads, d_ff, vocab):
    return LlamaConfig(num_hidden_layers=layers, hidden_size=d, num_attention_heads=heads,
                       num_key_value_heads=kv_heads, intermediate_size=d_ff, vocab_size=vocab,
                       tie_word_embeddings=False, attn_implementation="eager")


@pytest.mark.parametrize("name", list(LLAMA_CONFIGS))
def test_parameter_counts_match_transformers(name):
    with torch.device("meta"):
        model = LlamaForCausalLM(hf_config(*LLAMA_CONFIGS[name]))
    assert sum(llama_parameters(name).values()) == sum(p.numel() for p in model.parameters())


def test_published_totals():
    assert sum(llama_parameters("Llama-2-7B").values()) == 6_738_415_616
    assert sum(llama_parameters("Llama-3-8B").values()) == 8_030_261_248


def test_prefill_flops_match_the_flop_counter(monkeypatch):
    tiny = (2, 64, 4, 2, 128, 100)
    monkeypatch.setitem(inference.LLAMA_CONFIGS, "tiny", tiny)
    model = LlamaForCausalLM(hf_config(*tiny)).eval()
    batch, n = 2, 8
    with FlopCounterMode(display=False) as counter, torch.no_grad():
        model(torch.randint(0, 100, (batch, n)))
    ours = step_costs("tiny", batch, n, n)["flops"]
    # The eager attention computes all n × n scores; a causal kernel needs only the
    # n(n + 1)/2 that the mask keeps, which is what step_costs counts.
    layers, d = tiny[0], tiny[1]
    masked = n * n - n * (n + 1) // 2
    assert counter.get_total_flops() == ours + 4 * layers * d * masked * batch


def test_decode_reads_the_weights_and_the_cache():
    costs = step_costs("Llama-2-7B", 1, 1, 4096)
    memory = memory_bytes("Llama-2-7B", 1, 4096)
    lookup = 32000 * 4096 * 2  # the input embedding is looked up, not read whole
    assert costs["bytes"] == memory["weights"] - lookup + memory["K/V cache"]
    assert 0.9 < costs["intensity"] < 1.1  # about 1 FLOP per byte at batch 1
    assert step_costs("Llama-2-7B", 1, 4096, 4096)["intensity"] > 295  # prefill: compute


def test_roofline_and_intensity():
    assert roofline_seconds(989e12, 1.0) == pytest.approx(1.0)
    assert roofline_seconds(1.0, 3.35e12) == pytest.approx(1.0)
    assert decode_intensity(10, 4, 2, 0) == pytest.approx(4.0)


def test_bad_input_is_refused_in_words():
    with pytest.raises(ValueError, match="model must be one of"):
        llama_parameters("GPT-5")
    with pytest.raises(ValueError, match="cannot exceed"):
        step_costs("Llama-2-7B", 1, 10, 5)
    with pytest.raises(ValueError, match="batch"):
        memory_bytes("Llama-2-7B", 0, 10)
