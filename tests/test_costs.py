"""attention_qa.costs: every closed-form count against PyTorch's own modules and counters."""

import pytest
import torch
from torch import nn

from attention_qa.blocks import ConfigurableBlock, TransformerBlock
from attention_qa.costs import (
    DEEPSEEK_V2,
    DEEPSEEK_V2_QUERY_LATENT,
    MODEL_PRESETS,
    attention_parameters,
    block_flops,
    block_parameter_counts,
    cache_elements_per_token,
    configurable_block_parameter_counts,
    cumulative_scores,
    layer_flops,
    model_parameter_counts,
    scores_per_step,
    swiglu_hidden_dim,
)
from attention_qa.measure import count_flops
from attention_qa.multihead import MultiHeadAttention, MultiHeadLatentAttention


@pytest.mark.parametrize("n, d", [(8, 16), (32, 8)])
def test_layer_flops_match_pytorchs_flop_counter(n, d):
    x = torch.randn(n, d)
    U, W = torch.randn(d, d), torch.randn(d, d)
    conv = torch.nn.Conv1d(d, d, kernel_size=3, padding=1, bias=False)

    def attention(x):
        return torch.softmax(x @ x.T, dim=-1) @ x

    def recurrent(x):
        h = torch.zeros(1, d)
        for t in range(n):
            h = torch.tanh(x[t : t + 1] @ U + h @ W)
        return h

    expected = layer_flops(n, d, kernel=3)
    assert count_flops(attention, x) == expected["self-attention"]
    assert count_flops(recurrent, x) == expected["recurrent"]
    assert count_flops(conv, x.T.unsqueeze(0)) == expected["convolution (k = 3)"]


def test_layer_flops_refuse_bad_sizes():
    with pytest.raises(ValueError, match="n must be a positive integer"):
        layer_flops(0, 8)


@pytest.mark.parametrize("d_model, d_ff", [(8, 32), (16, 8), (32, 64)])
def test_block_parameter_counts_match_the_package_block(d_model, d_ff):
    block = TransformerBlock(d_model, 4, d_ff)
    counts = block_parameter_counts(d_model, d_ff)
    assert counts["attention"] == sum(p.numel() for p in block.attn.parameters())
    assert counts["feed-forward"] == sum(p.numel() for p in block.ffn.parameters())
    assert sum(counts.values()) == sum(p.numel() for p in block.parameters())


def test_block_parameter_counts_refuse_bad_sizes():
    with pytest.raises(ValueError, match="d_ff must be a positive integer"):
        block_parameter_counts(8, 0)


def test_decode_score_counts_match_closed_forms():
    for n in range(1, 17):
        assert cumulative_scores(n, True) == n * (n + 1) // 2
        assert cumulative_scores(n, False) == n * (n + 1) * (2 * n + 1) // 6
        assert scores_per_step(n, True) == n and scores_per_step(n, False) == n * n
    with pytest.raises(ValueError, match="t must be a positive integer"):
        scores_per_step(0, True)


def test_model_presets_are_consistent_attention_shapes():
    for layers, heads, kv_heads, d_head in MODEL_PRESETS.values():
        assert layers > 0 and heads % kv_heads == 0 and d_head in (64, 128)


def test_model_parameter_counts_match_real_modules():
    vocab, d, layers = 100, 16, 2
    emb = nn.Embedding(vocab, d)
    blocks = nn.ModuleList(TransformerBlock(d, 4, 4 * d) for _ in range(layers))
    out = nn.Linear(d, vocab, bias=False)
    counts = model_parameter_counts(vocab, d, tied=False, num_blocks=layers)
    assert counts["input embedding"] == emb.weight.numel()
    assert counts["blocks"] == sum(p.numel() for p in blocks.parameters())
    assert counts["output projection"] == out.weight.numel()
    out.weight = emb.weight  # tied: the module list holds the matrix once
    model = nn.ModuleList([emb, blocks, out])
    tied = model_parameter_counts(vocab, d, tied=True, num_blocks=layers)
    assert sum(tied.values()) == sum(p.numel() for p in model.parameters())


def test_model_parameter_counts_refuse_bad_sizes():
    with pytest.raises(ValueError, match="vocab_size must be a positive integer"):
        model_parameter_counts(0, 8, tied=True)


# --- cache_elements_per_token and attention_parameters: the four kinds of attention ------


@pytest.mark.parametrize("kind, h_kv", [("MHA", 8), ("GQA", 2), ("MQA", 1)])
def test_mha_gqa_mqa_counts_match_the_module(kind, h_kv):

    d_model, h = 64, 8
    module = MultiHeadAttention(d_model, h, num_kv_heads=h_kv, bias=False)
    assert attention_parameters(kind, d_model, h, d_model // h, num_kv_heads=2) == sum(
        p.numel() for p in module.parameters()
    )
    x = torch.randn(1, 1, d_model)  # one token
    cached = module.w_k(x).numel() + module.w_v(x).numel()
    assert cache_elements_per_token(kind, h, d_model // h, num_kv_heads=2) == cached


def test_mla_counts_match_the_module_and_explicit_layers():

    d_model, h, d_latent = 48, 4, 20
    module = MultiHeadLatentAttention(d_model, h, d_latent)
    assert attention_parameters("MLA", d_model, h, 12, d_latent=d_latent) == sum(
        p.numel() for p in module.parameters()
    )
    assert cache_elements_per_token("MLA", h, 12, d_latent=d_latent) == module.w_dkv(
        torch.randn(1, 1, d_model)
    ).numel()
    # With a decoupled RoPE part: W_QR (d → h·d_rope) and W_KR (d → d_rope) beside the rest.
    d_rope, d_head = 6, 16
    layers = [nn.Linear(a, b, bias=False) for a, b in [
        (d_model, h * d_head), (d_model, d_latent), (d_latent, h * d_head),
        (d_latent, h * d_head), (h * d_head, d_model), (d_model, h * d_rope), (d_model, d_rope),
    ]]
    assert attention_parameters(
        "MLA", d_model, h, d_head, d_latent=d_latent, d_rope=d_rope
    ) == sum(p.numel() for layer in layers for p in layer.parameters())
    assert cache_elements_per_token("MLA", h, d_head, d_latent=d_latent, d_rope=d_rope) == 26


def test_mla_with_query_compression_counts_deepseek_v2s_projections():
    """DeepSeek-V2's layer as transformers builds it: q_a_proj (5120 → 1536), q_b_proj
    (1536 → 128·(128 + 64)), kv_a_proj_with_mqa (5120 → 512 + 64), kv_b_proj
    (512 → 128·(128 + 128)), o_proj (128·128 → 5120)."""

    c, dq = DEEPSEEK_V2, DEEPSEEK_V2_QUERY_LATENT
    D, h, dh, dc, dr = (c[k] for k in ("d_model", "num_heads", "d_head", "d_latent", "d_rope"))
    shapes = [(D, dq), (dq, h * (dh + dr)), (D, dc + dr), (dc, h * 2 * dh), (h * dh, D)]
    assert attention_parameters("MLA", D, h, dh, d_latent=dc, d_rope=dr,
                                d_query_latent=dq) == sum(a * b for a, b in shapes)
    # Small and explicit: W_DQ, W_UQ, W_DKV, W_UK, W_UV, W_O, W_QR (from the query latent), W_KR.
    d_model, heads, d_head, d_latent, d_rope, d_q = 48, 4, 12, 20, 6, 10
    layers = [nn.Linear(a, b, bias=False) for a, b in [
        (d_model, d_q), (d_q, heads * d_head), (d_model, d_latent), (d_latent, heads * d_head),
        (d_latent, heads * d_head), (heads * d_head, d_model), (d_q, heads * d_rope),
        (d_model, d_rope),
    ]]
    assert attention_parameters("MLA", d_model, heads, d_head, d_latent=d_latent, d_rope=d_rope,
                                d_query_latent=d_q) == sum(p.numel() for layer in layers
                                                           for p in layer.parameters())
    with pytest.raises(ValueError, match="d_query_latent"):
        attention_parameters("MLA", d_model, heads, d_head, d_latent=d_latent, d_query_latent=0)


def test_deepseek_v2_cache_equals_gqa_with_two_and_a_quarter_groups():
    """DeepSeek-V2, table 1: MLA's cache is (d_c + d_h^R)·l = 9/2·d_h·l, GQA with 2.25 groups."""

    c = DEEPSEEK_V2
    mla = cache_elements_per_token("MLA", c["num_heads"], c["d_head"], d_latent=c["d_latent"],
                                   d_rope=c["d_rope"])
    mha = cache_elements_per_token("MHA", c["num_heads"], c["d_head"])
    assert mla == 576 == 9 * c["d_head"] // 2 and mha == 32768
    assert mla / (2 * c["d_head"]) == 2.25


@pytest.mark.parametrize("call, message", [
    (lambda f: f("MLHA", 8, 16), "kind must be one of"),
    (lambda f: f("GQA", 8, 16), "num_kv_heads must be a positive integer"),
    (lambda f: f("GQA", 8, 16, num_kv_heads=3), "must divide num_heads=8"),
    (lambda f: f("MLA", 8, 16), "d_latent must be a positive integer"),
    (lambda f: f("MLA", 8, 16, d_latent=4, d_rope=-1), "d_rope"),
])
def test_cache_elements_refuse_bad_settings(call, message):

    with pytest.raises(ValueError, match=message):
        call(cache_elements_per_token)


def test_attention_parameters_refuse_bad_settings():

    with pytest.raises(ValueError, match="d_model"):
        attention_parameters("MHA", 0, 8, 16)
    with pytest.raises(ValueError, match="d_latent"):
        attention_parameters("MLA", 64, 8, 16)


# --- q26: the parts of today's block --------------------------------------------------------


@pytest.mark.parametrize("norm", ["layernorm", "rmsnorm"])
@pytest.mark.parametrize("ffn", ["relu", "swiglu"])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("qk_norm", [True, False])
def test_configurable_block_parameter_counts_match_the_module(norm, ffn, bias, qk_norm):
    block = ConfigurableBlock(24, 4, 40, norm=norm, ffn=ffn, bias=bias, qk_norm=qk_norm)
    counts = configurable_block_parameter_counts(24, 40, 4, norm=norm, ffn=ffn, bias=bias,
                                                 qk_norm=qk_norm)
    assert sum(counts.values()) == sum(p.numel() for p in block.parameters())
    ffn_params = sum(p.numel() for p in block.ffn.parameters())
    assert counts["feed-forward"] == ffn_params


def test_configurable_2017_counts_equal_block_parameter_counts():
    old = block_parameter_counts(64, 256)
    new = configurable_block_parameter_counts(64, 256, 4)
    assert list(new.values()) == list(old.values())


@pytest.mark.parametrize("ffn", ["relu", "swiglu"])
def test_block_flops_match_pytorchs_flop_counter(ffn):
    block = ConfigurableBlock(32, 4, 48, ffn=ffn, norm_first=True)
    x = torch.randn(1, 10, 32)
    assert count_flops(block, x) == sum(block_flops(10, 32, 48, ffn).values())


def test_swiglu_hidden_dim_is_llamas():
    assert swiglu_hidden_dim(4096) == 11008  # LLaMA-7B
    assert swiglu_hidden_dim(5120) == 13824  # LLaMA-13B
    assert swiglu_hidden_dim(96, multiple_of=1) == 256
    with pytest.raises(ValueError, match="multiple_of"):
        swiglu_hidden_dim(64, multiple_of=0)


def test_swiglu_hidden_dim_with_llamas_multiplier():
    # Meta's reference FeedForward: int(2·hidden/3), int(multiplier·…), round up.
    def reference(dim, multiple_of, multiplier):
        hidden = int(2 * (4 * dim) / 3)
        if multiplier is not None:
            hidden = int(multiplier * hidden)
        return multiple_of * ((hidden + multiple_of - 1) // multiple_of)

    assert swiglu_hidden_dim(8192, 4096, 1.3) == 28672  # Llama-2-70B
    assert swiglu_hidden_dim(4096, 1024, 1.3) == 14336  # Llama 3 8B
    for dim in (64, 288, 1000, 4096, 5120, 8192):
        for multiple_of in (1, 32, 256, 1024):
            for multiplier in (None, 1.0, 1.3, 1.5):
                assert swiglu_hidden_dim(dim, multiple_of, multiplier) == reference(
                    dim, multiple_of, multiplier)
    with pytest.raises(ValueError, match="ffn_dim_multiplier"):
        swiglu_hidden_dim(64, ffn_dim_multiplier=0)
