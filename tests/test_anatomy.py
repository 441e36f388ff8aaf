"""anatomy: the table's counts against published totals and against models that Hugging Face
transformers builds from the same configurations on the meta device (no memory)."""

import pytest
import torch

from attention_qa.anatomy import (
    MODELS,
    PARTS,
    UNSTATED_MARK,
    active_parameter_count,
    kv_cache_bytes_per_token,
    parameter_count,
    parameter_parts,
    table_rows,
)

REQUIRED = ("GPT-2", "Llama-2-7B", "Llama-2-70B", "Llama-3-8B", "Mistral-7B", "Mixtral-8x7B",
            "Gemma-7B")


def test_the_required_models_are_in_the_table():
    assert set(REQUIRED) <= set(MODELS)


@pytest.mark.parametrize("name", [n for n in MODELS if MODELS[n].published_total])
def test_the_count_equals_the_published_total(name):
    model = MODELS[name]
    assert model.published_source
    assert parameter_count(name) == model.published_total


def test_the_totals_quoted_in_the_brief():
    # Published totals (KerasHub preset metadata; the Hugging Face safetensors counts).
    assert parameter_count("GPT-2") == 124_439_808
    assert parameter_count("Llama-2-7B") == 6_738_415_616
    assert parameter_count("Llama-3-8B") == 8_030_261_248
    assert parameter_count("Mistral-7B") == 7_241_732_096
    assert parameter_count("Mixtral-8x7B") == 46_702_792_704
    assert parameter_count("Gemma-7B") == 8_537_680_896


def _hf_count(name):
    """The parameters of the transformers model built from the row's configuration."""
    transformers = pytest.importorskip("transformers")
    transformers.logging.set_verbosity_error()
    m = MODELS[name]
    llama = dict(vocab_size=m.vocab, hidden_size=m.d_model, num_hidden_layers=m.layers,
                 num_attention_heads=m.heads, num_key_value_heads=m.kv_heads,
                 intermediate_size=m.d_ff, tie_word_embeddings=m.tied)
    builders = {
        "GPT-2": ("GPT2Config", "GPT2LMHeadModel",
                  dict(vocab_size=m.vocab, n_positions=m.learned_positions, n_embd=m.d_model,
                       n_layer=m.layers, n_head=m.heads)),
        "BERT-base": ("BertConfig", "BertModel",
                      dict(vocab_size=m.vocab, hidden_size=m.d_model,
                           num_hidden_layers=m.layers, num_attention_heads=m.heads,
                           intermediate_size=m.d_ff, max_position_embeddings=512)),
        "Llama-2-7B": ("LlamaConfig", "LlamaForCausalLM", llama),
        "Llama-2-70B": ("LlamaConfig", "LlamaForCausalLM", llama),
        "Mistral-7B": ("MistralConfig", "MistralForCausalLM",
                       dict(llama, head_dim=m.d_head, sliding_window=m.window)),
        "Llama-3-8B": ("LlamaConfig", "LlamaForCausalLM", llama),
        "Mixtral-8x7B": ("MixtralConfig", "MixtralForCausalLM",
                         dict(llama, num_local_experts=m.experts,
                              num_experts_per_tok=m.active_experts)),
        "Qwen2-7B": ("Qwen2Config", "Qwen2ForCausalLM", llama),
        "Gemma-7B": ("GemmaConfig", "GemmaForCausalLM", dict(llama, head_dim=m.d_head)),
        "Gemma-2-9B": ("Gemma2Config", "Gemma2ForCausalLM", dict(llama, head_dim=m.d_head)),
        "Falcon-7B": ("FalconConfig", "FalconForCausalLM",
                      dict(vocab_size=m.vocab, hidden_size=m.d_model,
                           num_hidden_layers=m.layers, num_attention_heads=m.heads,
                           multi_query=True, parallel_attn=True, bias=False,
                           ffn_hidden_size=m.d_ff)),
        "BLOOM-176B": ("BloomConfig", "BloomForCausalLM",
                       dict(vocab_size=m.vocab, hidden_size=m.d_model, n_layer=m.layers,
                            n_head=m.heads)),
        "DeepSeek-V2": ("DeepseekV2Config", "DeepseekV2ForCausalLM",
                        dict(llama, moe_intermediate_size=m.d_ff_expert,
                             n_routed_experts=m.experts, n_shared_experts=m.shared_experts,
                             num_experts_per_tok=m.active_experts,
                             first_k_dense_replace=m.dense_layers, q_lora_rank=m.q_rank,
                             kv_lora_rank=m.kv_rank, qk_rope_head_dim=m.d_rope,
                             qk_nope_head_dim=m.d_nope, v_head_dim=m.d_v)),
        "DeepSeek-V3": ("DeepseekV3Config", "DeepseekV3ForCausalLM",
                        dict(llama, moe_intermediate_size=m.d_ff_expert,
                             n_routed_experts=m.experts, n_shared_experts=m.shared_experts,
                             num_experts_per_tok=m.active_experts,
                             first_k_dense_replace=m.dense_layers, q_lora_rank=m.q_rank,
                             kv_lora_rank=m.kv_rank, qk_rope_head_dim=m.d_rope,
                             qk_nope_head_dim=m.d_nope, v_head_dim=m.d_v)),
    }
    config_name, model_name, kwargs = builders[name]
    config = getattr(transformers, config_name)(**kwargs)
    with torch.device("meta"):
        model = getattr(transformers, model_name)(config)
    return sum(p.numel() for p in model.parameters())


# Every row but LLaMA-1-7B and Qwen2.5-7B, whose shapes are Llama-2-7B's and Qwen2-7B's, and
# PaLM, which transformers does not implement.
@pytest.mark.parametrize("name", ["GPT-2", "BERT-base", "Llama-2-7B", "Llama-2-70B",
                                  "Llama-3-8B", "Mistral-7B",
                                  "Mixtral-8x7B", "Qwen2-7B", "Gemma-7B", "Gemma-2-9B",
                                  "Falcon-7B", "BLOOM-176B", "DeepSeek-V2", "DeepSeek-V3"])
def test_the_count_equals_transformers_model_on_the_meta_device(name):
    assert parameter_count(name) == _hf_count(name)


def test_the_rows_left_out_of_the_transformers_test_repeat_another_s_shapes():
    for copy, original in (("LLaMA-1-7B", "Llama-2-7B"), ("Qwen2.5-7B", "Qwen2-7B")):
        assert parameter_parts(copy) == parameter_parts(original)


def test_parts_add_up_and_a_tied_head_adds_nothing():
    for name in MODELS:
        parts = parameter_parts(name)
        assert tuple(parts) == PARTS and sum(parts.values()) == parameter_count(name)
    assert parameter_parts("Gemma-7B")["output head"] == 0
    assert parameter_parts("Llama-2-7B")["output head"] == 32000 * 4096


def test_active_parameters_match_the_papers_rounded_figures():
    # Mixtral: 13B active (Jiang et al., 2024, §2); DeepSeek-V2: 21B, DeepSeek-V3: 37B.
    assert round(active_parameter_count("Mixtral-8x7B") / 1e9) == 13
    assert round(active_parameter_count("DeepSeek-V2") / 1e9) == 21
    assert int(active_parameter_count("DeepSeek-V3") / 1e9) == 37
    assert round(parameter_count("DeepSeek-V2") / 1e9) == 236
    assert round(parameter_count("DeepSeek-V3") / 1e9) == 671
    assert round(parameter_count("PaLM-540B") / 1e9) == 540  # Chowdhery et al. (2022)
    assert active_parameter_count("Llama-2-7B") == parameter_count("Llama-2-7B")


def test_cache_per_token_against_a_loop_over_layers_and_heads():
    for name, m in MODELS.items():
        if m.kind == "encoder":
            with pytest.raises(ValueError, match="encoder"):
                kv_cache_bytes_per_token(name)
            continue
        elements = 0
        for _ in range(m.layers):
            if m.attention == "MLA":
                elements += m.kv_rank + m.d_rope  # one latent and one shared RoPE key
            else:
                for _ in range(m.kv_heads):
                    elements += m.d_head + m.d_head  # a key and a value
        assert kv_cache_bytes_per_token(name) == 2 * elements
        assert kv_cache_bytes_per_token(name, 4) == 4 * elements
    assert kv_cache_bytes_per_token("Llama-2-7B") == 512 * 1024
    assert kv_cache_bytes_per_token("DeepSeek-V2") == 60 * 576 * 2  # 4.5 d_h per layer


def test_bad_input_is_refused_with_the_value():
    with pytest.raises(ValueError, match="'GPT-5'"):
        parameter_count("GPT-5")
    with pytest.raises(ValueError, match="bytes_per_element"):
        kv_cache_bytes_per_token("GPT-2", 0)
    with pytest.raises(ValueError, match="fractional"):
        kv_cache_bytes_per_token("Falcon-7B", 1 / 3)


def test_table_marks_what_a_paper_leaves_out():
    rows = {row["model"]: row for row in table_rows()}
    assert set(rows) == set(MODELS)
    assert UNSTATED_MARK in rows["Mistral-7B"]["norm"]
    assert UNSTATED_MARK not in rows["Gemma-2-9B"]["norm"]
    assert rows["Falcon-7B"]["attention"] == "MQA"
    assert rows["PaLM-540B"]["position"] == "RoPE, base not stated"
    for m in MODELS.values():
        assert m.sources and all(isinstance(s, str) and s for s in m.sources)
