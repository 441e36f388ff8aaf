"""anatomy: the table's counts against published totals and against models that Hugging Face
transformers builds from the same fields on the meta device (no memory: a check of the
formula), and the rows' values against the defaults of transformers' configuration classes
that document a given checkpoint (a check of the values)."""

import pytest
import torch

from attention_qa.anatomy import (
    DIFFERS_MARK,
    MODELS,
    OTHER_MODELS,
    PARTS,
    UNSTATED_MARK,
    active_parameter_count,
    kv_cache_bytes_per_token,
    model_cache_bytes,
    parameter_count,
    parameter_parts,
    shape,
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


def test_bloom_and_gemma_counts_equal_the_authors_own():
    # bigscience/bloom model card: 176,247,271,424 parameters, 3,596,615,680 in the embedding.
    assert parameter_count("BLOOM-176B") == 176_247_271_424
    assert parameter_parts("BLOOM-176B")["embedding"] == 3_596_615_680
    # Gemma Team (2024a), Table 2: 7,751,248,896 non-embedding parameters in Gemma 7B.
    gemma = parameter_parts("Gemma-7B")
    assert parameter_count("Gemma-7B") - gemma["embedding"] == 7_751_248_896


# transformers' configuration classes whose docstring says their defaults "yield a similar
# configuration" to a named checkpoint, and whose defaults were checked to be that model's.
# Not used: Gemma2Config (names google/gemma2-7b but defaults to 26 layers of 2,304, a 2B
# shape), Qwen2Config (names Qwen/Qwen2-7B but defaults to 32 layers of 4,096), BloomConfig
# (names bigscience/bloom but defaults to 2 layers of 64), DeepseekV3Config (names
# bzantium/tiny-deepseek-v3) and DeepseekV2Config (names DeepSeek-V2-Lite).
DOCUMENTED_DEFAULTS = {
    "Llama-2-7B": ("LlamaConfig", "meta-llama/Llama-2-7b-hf"),
    "Mistral-7B": ("MistralConfig", "mistralai/Mistral-7B-v0.1"),
    "Mixtral-8x7B": ("MixtralConfig", "mistralai/Mixtral-8x7B-v0.1"),
    "GPT-2": ("GPT2Config", "openai-community/gpt2"),
    "BERT-base": ("BertConfig", "google-bert/bert-base-uncased"),
    "Gemma-7B": ("GemmaConfig", "google/gemma-7b"),
    "Falcon-7B": ("FalconConfig", "tiiuae/falcon-7b"),
}


@pytest.mark.parametrize("name", DOCUMENTED_DEFAULTS)
def test_the_row_equals_the_defaults_transformers_documents_as_that_model(name):
    transformers = pytest.importorskip("transformers")
    config_name, checkpoint = DOCUMENTED_DEFAULTS[name]
    config_class = getattr(transformers, config_name)
    assert f"[{checkpoint}]" in config_class.__doc__
    c, m = config_class(), MODELS[name]
    assert (c.num_hidden_layers, c.hidden_size, c.num_attention_heads, c.vocab_size) == (
        m.layers, m.d_model, m.heads, m.vocab)
    assert c.tie_word_embeddings == m.tied
    kv_heads = 1 if getattr(c, "multi_query", False) else getattr(
        c, "num_key_value_heads", c.num_attention_heads)
    assert kv_heads == m.kv_heads
    d_ff = getattr(c, "intermediate_size", None) or getattr(c, "ffn_hidden_size", None)
    if name == "GPT-2":
        assert c.n_inner is None and c.n_positions == m.learned_positions  # n_inner: 4 · d
        d_ff = 4 * c.n_embd
    assert d_ff == m.d_ff
    if name != "BERT-base":
        assert (getattr(c, "head_dim", None) or c.hidden_size // c.num_attention_heads) == (
            m.d_head)
    if m.rope_base:
        assert c.rope_parameters["rope_theta"] == m.rope_base
    if name == "Mixtral-8x7B":
        assert (c.num_local_experts, c.num_experts_per_tok) == (m.experts, m.active_experts)
    if name == "Mistral-7B":
        assert c.sliding_window == m.window


def _hf_count(name):
    """The parameters of the transformers model built from the row's configuration."""
    transformers = pytest.importorskip("transformers")
    transformers.logging.set_verbosity_error()
    m = MODELS[name]
    llama = dict(vocab_size=m.vocab, hidden_size=m.d_model, num_hidden_layers=m.layers,
                 num_attention_heads=m.heads, num_key_value_heads=m.kv_heads,
                 intermediate_size=m.d_ff, tie_word_embeddings=m.tied)
    deepseek = dict(llama, moe_intermediate_size=m.d_ff_expert, n_routed_experts=m.experts,
                    n_shared_experts=m.shared_experts, num_experts_per_tok=m.active_experts,
                    first_k_dense_replace=m.dense_layers, q_lora_rank=m.q_rank,
                    kv_lora_rank=m.kv_rank, qk_rope_head_dim=m.d_rope,
                    qk_nope_head_dim=m.d_nope, v_head_dim=m.d_v)
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
        "DeepSeek-V2": ("DeepseekV2Config", "DeepseekV2ForCausalLM", deepseek),
        "DeepSeek-V3": ("DeepseekV3Config", "DeepseekV3ForCausalLM", deepseek),
    }
    config_name, model_name, kwargs = builders[name]
    config = getattr(transformers, config_name)(**kwargs)
    with torch.device("meta"):
        model = getattr(transformers, model_name)(config)
    return sum(p.numel() for p in model.parameters())


# The model is built from the row's own fields, so this checks the formula, not the values.
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
    # MLA cached as per-head keys (128 + 64) and values (128) instead of the latent
    assert kv_cache_bytes_per_token("DeepSeek-V3", latent=False) == 61 * 128 * 320 * 2
    assert kv_cache_bytes_per_token("Llama-2-7B", latent=False) == 512 * 1024


def test_whole_cache_applies_the_windows():
    per_token = kv_cache_bytes_per_token("Mistral-7B")
    assert model_cache_bytes("Mistral-7B", 2048) == 2048 * per_token
    assert model_cache_bytes("Mistral-7B", 32768) == 4096 * per_token  # the rolling buffer
    per_layer = kv_cache_bytes_per_token("Gemma-2-9B") // 42
    assert model_cache_bytes("Gemma-2-9B", 8192) == per_layer * (21 * 4096 + 21 * 8192)
    assert model_cache_bytes("Llama-3-8B", 8192) == 8192 * kv_cache_bytes_per_token("Llama-3-8B")
    with pytest.raises(ValueError, match="tokens"):
        model_cache_bytes("Llama-3-8B", 0)


def test_palm_layer_norms_have_no_bias_as_a_field():
    assert not MODELS["PaLM-540B"].norm_bias
    assert all(m.norm_bias for n, m in MODELS.items() if n != "PaLM-540B")
    assert parameter_parts("PaLM-540B")["norms"] == 118 * 18432 + 18432


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
    # A window in every layer (Mistral) reads apart from one in some layers (Gemma 2).
    assert rows["Mistral-7B"]["attention"] == "GQA, window 4,096"
    assert rows["Gemma-2-9B"]["attention"] == "GQA, window 4,096 in 21 of 42 layers"
    assert rows["PaLM-540B"]["position"] == "RoPE, base not stated"
    assert DIFFERS_MARK in rows["Qwen2-7B"]["context"]
    assert DIFFERS_MARK in rows["BERT-base"]["vocab"]
    assert UNSTATED_MARK in rows["DeepSeek-V3"]["position"]  # RoPE base from config.json
    assert UNSTATED_MARK in rows["Qwen2.5-7B"]["d_model"]
    assert UNSTATED_MARK not in rows["PaLM-540B"]["biases"]  # §2: no biases
    for m in MODELS.values():
        assert not set(m.not_in_paper) & set(m.paper_differs)
    for m in MODELS.values():
        assert m.sources and all(isinstance(s, str) and s for s in m.sources)


def test_the_other_tables_are_read_from_this_one():
    from attention_qa.costs import MODEL_PRESETS
    from attention_qa.inference import LLAMA_CONFIGS, TRAINED_CONTEXT

    for name, (layers, heads, kv_heads, d_head) in MODEL_PRESETS.items():
        m = shape("GPT-2" if name == "GPT-2 small" else name)
        assert (layers, heads, kv_heads, d_head) == (m.layers, m.heads, m.kv_heads, m.d_head)
    for name, config in LLAMA_CONFIGS.items():
        m = shape(name)
        assert config == (m.layers, m.d_model, m.heads, m.kv_heads, m.d_ff, m.vocab)
        assert TRAINED_CONTEXT[name] == m.context and m.sources
    assert not set(OTHER_MODELS) & set(MODELS)
    with pytest.raises(ValueError, match="'GPT-5'"):
        shape("GPT-5")


# --- q46: the Chinese open models (rows of OTHER_MODELS) -------------------------------------


def _hf_count_other(name, **extra):
    """The parameters of a transformers Qwen2 (QKV biases) or Llama (none) model built on the
    meta device from the row's fields."""
    transformers = pytest.importorskip("transformers")
    transformers.logging.set_verbosity_error()
    m = OTHER_MODELS[name]
    kwargs = dict(vocab_size=m.vocab, hidden_size=m.d_model, num_hidden_layers=m.layers,
                  num_attention_heads=m.heads, num_key_value_heads=m.kv_heads,
                  intermediate_size=m.d_ff, tie_word_embeddings=m.tied, **extra)
    family = "Qwen2" if m.biases == "QKV" else "Llama"
    config = getattr(transformers, f"{family}Config")(**kwargs)
    with torch.device("meta"):
        model = getattr(transformers, f"{family}ForCausalLM")(config)
    return sum(p.numel() for p in model.parameters())


@pytest.mark.parametrize("name", ["Qwen-7B", "ChatGLM2-6B", "Baichuan2-7B", "Baichuan2-13B",
                                  "Qwen2.5-72B"])
def test_q46_rows_count_as_transformers_builds_them(name):
    # ALiBi adds no weights, so Baichuan2-13B counts as a Llama of its shape; ChatGLM2's
    # fused QKV with a bias and 2 K/V groups counts as a Qwen2 of its shape.
    assert parameter_count(name) == _hf_count_other(name)


def test_q46_rows_stay_out_of_q38s_table_and_match_their_names():
    new = ("Qwen-7B", "ChatGLM2-6B", "Baichuan2-7B", "Baichuan2-13B", "Qwen2.5-72B")
    assert not set(new) & set(MODELS) and set(new) <= set(OTHER_MODELS)
    billions = {name: parameter_count(name) / 1e9 for name in new}
    # the names' sizes; Qwen2.5-72B: 72.706 billion in the Open Arabic LLM Leaderboard's
    # request file (OALL/requests_v2, Qwen/Qwen2.5-72B), a count of the released weights
    assert round(billions["Qwen2.5-72B"], 3) == 72.706
    assert 6 < billions["ChatGLM2-6B"] < 6.5 and 7 < billions["Qwen-7B"] < 8
    assert 7 < billions["Baichuan2-7B"] < 8 and 13 < billions["Baichuan2-13B"] < 14
    assert 13.0e9 < parameter_count("Llama-2-13B") < 13.1e9  # q33's row counts too
    assert shape("Baichuan2-13B").position == "ALiBi"


def test_parameter_count_refuses_unknown_names():
    with pytest.raises(ValueError, match="'no such model'"):
        parameter_count("no such model")
