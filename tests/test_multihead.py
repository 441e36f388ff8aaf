import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn
from torch.utils.flop_counter import FlopCounterMode

from attention_qa import costs
from attention_qa.masks import causal_mask, combine_masks, padding_mask
from attention_qa.multihead import (
    MultiHeadAttention,
    MultiHeadLatentAttention,
    attention_flops,
    kv_cache_bytes,
    latent_cache_bytes,
    merge_heads,
    split_heads,
)

pytestmark = pytest.mark.usefixtures("one_thread")


def torch_twin(mha: MultiHeadAttention) -> nn.MultiheadAttention:
    """nn.MultiheadAttention holding the same weights as the package's module."""
    bias = mha.w_q.bias is not None
    twin = nn.MultiheadAttention(mha.d_model, mha.num_heads, bias=bias, batch_first=True)
    with torch.no_grad():
        twin.in_proj_weight.copy_(torch.cat([mha.w_q.weight, mha.w_k.weight, mha.w_v.weight]))
        twin.out_proj.weight.copy_(mha.w_o.weight)
        if bias:
            twin.in_proj_bias.copy_(torch.cat([mha.w_q.bias, mha.w_k.bias, mha.w_v.bias]))
            twin.out_proj.bias.copy_(mha.w_o.bias)
    return twin.eval()


def expand_kv_heads(gqa: MultiHeadAttention) -> MultiHeadAttention:
    """Plain MHA whose K/V heads are copies, query head i getting K/V head i // group."""
    h, h_kv, d_k, d = gqa.num_heads, gqa.num_kv_heads, gqa.d_k, gqa.d_model
    mha = MultiHeadAttention(d, h)
    group = h // h_kv
    with torch.no_grad():
        for name in ("w_q", "w_o"):
            getattr(mha, name).load_state_dict(getattr(gqa, name).state_dict())
        for name in ("w_k", "w_v"):
            src, dst = getattr(gqa, name), getattr(mha, name)
            dst.weight.copy_(src.weight.view(h_kv, d_k, d).repeat_interleave(group, 0).view(-1, d))
            dst.bias.copy_(src.bias.view(h_kv, d_k).repeat_interleave(group, 0).view(-1))
    return mha


# --- equivalence with torch.nn.MultiheadAttention -------------------------------------------


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize(
    "B, n, m, d_model, h, self_attention",
    [
        (2, 5, 5, 16, 4, True),
        (3, 4, 7, 12, 3, False),
        (1, 6, 2, 8, 1, False),
        (2, 3, 3, 32, 8, True),
    ],
)
def test_matches_torch_multihead_without_mask(B, n, m, d_model, h, self_attention, bias):
    torch.manual_seed(0)
    mha = MultiHeadAttention(d_model, h, bias=bias)
    query = torch.randn(B, n, d_model)
    key = query if self_attention else torch.randn(B, m, d_model)
    value = query if self_attention else torch.randn(B, m, d_model)
    out, weights = mha(query, key, value)
    assert out.shape == (B, n, d_model)
    assert weights.shape == (B, h, n, key.shape[1])
    expected, expected_weights = torch_twin(mha)(query, key, value, average_attn_weights=False)
    torch.testing.assert_close(out, expected, atol=1e-5, rtol=1e-4)
    torch.testing.assert_close(weights, expected_weights, atol=1e-6, rtol=1e-4)


def test_matches_torch_multihead_with_causal_and_padding_masks():
    torch.manual_seed(1)
    B, n, m, d_model, h = 2, 4, 6, 16, 4
    mha = MultiHeadAttention(d_model, h)
    query, memory = torch.randn(B, n, d_model), torch.randn(B, m, d_model)
    causal = causal_mask(n, m)  # (n, m), True = may attend
    keys = padding_mask([6, 5], m)  # (B, m), True = a real token
    out, weights = mha(query, memory, memory, combine_masks(causal, keys[:, None, None, :]))
    # nn.MultiheadAttention's boolean masks mean True = BLOCKED: invert both.
    expected, expected_weights = torch_twin(mha)(
        query,
        memory,
        memory,
        attn_mask=~causal,
        key_padding_mask=~keys,
        average_attn_weights=False,
    )
    torch.testing.assert_close(out, expected, atol=1e-5, rtol=1e-4)
    torch.testing.assert_close(weights, expected_weights, atol=1e-6, rtol=1e-4)
    assert (weights[1, :, :, 5] == 0).all()  # the padded key of row 1 gets no weight


def test_matches_torch_multihead_with_a_mask_per_head():
    torch.manual_seed(2)
    B, n, d_model, h = 2, 5, 12, 3
    mha = MultiHeadAttention(d_model, h)
    x = torch.randn(B, n, d_model)
    mask = torch.rand(B, h, n, n) < 0.6
    mask[..., 0] = True  # every query keeps one key, so nn.MultiheadAttention gives no NaN
    out, weights = mha(x, x, x, mask)
    expected, expected_weights = torch_twin(mha)(
        x, x, x, attn_mask=~mask.reshape(B * h, n, n), average_attn_weights=False
    )
    torch.testing.assert_close(out, expected, atol=1e-5, rtol=1e-4)
    torch.testing.assert_close(weights, expected_weights, atol=1e-6, rtol=1e-4)


@settings(max_examples=25, deadline=None)
@given(
    B=st.integers(1, 3),
    n=st.integers(1, 6),
    m=st.integers(1, 6),
    h=st.sampled_from([1, 2, 4]),
    d_k=st.integers(1, 4),
    seed=st.integers(0, 2**16),
)
def test_property_matches_torch_multihead(B, n, m, h, d_k, seed):
    torch.manual_seed(seed)
    d_model = h * d_k
    mha = MultiHeadAttention(d_model, h)
    query, memory = torch.randn(B, n, d_model), torch.randn(B, m, d_model)
    out, weights = mha(query, memory, memory)
    expected, expected_weights = torch_twin(mha)(query, memory, memory, average_attn_weights=False)
    torch.testing.assert_close(out, expected, atol=1e-5, rtol=1e-4)
    torch.testing.assert_close(weights.sum(-1), torch.ones(B, h, n))


def test_fully_masked_query_gets_zero_weights_and_the_output_bias():
    torch.manual_seed(3)
    mha = MultiHeadAttention(8, 2)
    x = torch.randn(1, 3, 8)
    mask = torch.ones(3, 3, dtype=torch.bool)
    mask[1] = False
    out, weights = mha(x, x, x, mask)
    assert torch.isfinite(out).all()
    assert (weights[:, :, 1] == 0).all()
    torch.testing.assert_close(out[0, 1], mha.w_o.bias)


# --- grouped-query and multi-query attention ------------------------------------------------


@pytest.mark.parametrize("h, h_kv", [(4, 1), (4, 2), (6, 3), (4, 4), (8, 2)])
def test_matches_sdpa_with_enable_gqa(h, h_kv):
    torch.manual_seed(4)
    B, n, m, d_k = 2, 5, 7, 3
    d_model = h * d_k
    mha = MultiHeadAttention(d_model, h, num_kv_heads=h_kv)
    query, memory = torch.randn(B, n, d_model), torch.randn(B, m, d_model)
    mask = combine_masks(causal_mask(n, m), padding_mask([7, 6], m)[:, None, None, :])
    out, weights = mha(query, memory, memory, mask)
    assert weights.shape == (B, h, n, m)
    q = mha.w_q(query).view(B, n, h, d_k).transpose(1, 2)  # (B, h, n, d_k)
    k = mha.w_k(memory).view(B, m, h_kv, d_k).transpose(1, 2)  # (B, h_kv, m, d_k)
    v = mha.w_v(memory).view(B, m, h_kv, d_k).transpose(1, 2)  # (B, h_kv, m, d_k)
    ref = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, enable_gqa=True)
    expected = mha.w_o(ref.transpose(1, 2).reshape(B, n, d_model))
    torch.testing.assert_close(out, expected, atol=1e-5, rtol=1e-4)


@pytest.mark.parametrize("h, h_kv", [(4, 1), (4, 2), (6, 2), (6, 3)])
def test_gqa_is_mha_with_copied_kv_heads(h, h_kv):
    torch.manual_seed(5)
    gqa = MultiHeadAttention(4 * h, h, num_kv_heads=h_kv)
    x = torch.randn(2, 5, 4 * h)
    out, weights = gqa(x, x, x, causal_mask(5))
    twin_out, twin_weights = expand_kv_heads(gqa)(x, x, x, causal_mask(5))
    torch.testing.assert_close(out, twin_out)
    torch.testing.assert_close(weights, twin_weights)


def test_kv_projection_sizes_for_mha_gqa_mqa():
    d_model, h = 64, 8
    d_k = d_model // h
    for h_kv in (8, 2, 1):
        mha = MultiHeadAttention(d_model, h, num_kv_heads=h_kv)
        assert mha.w_q.weight.shape == (d_model, d_model)
        assert mha.w_k.weight.shape == (h_kv * d_k, d_model)
        assert mha.w_v.weight.shape == (h_kv * d_k, d_model)
        assert mha.w_o.weight.shape == (d_model, d_model)
    mqa = MultiHeadAttention(d_model, h, num_kv_heads=1, bias=False)
    assert sum(p.numel() for p in mqa.parameters()) == 2 * d_model * d_model + 2 * d_k * d_model


def test_default_num_kv_heads_is_num_heads():
    torch.manual_seed(6)
    default = MultiHeadAttention(12, 3)
    torch.manual_seed(6)
    explicit = MultiHeadAttention(12, 3, num_kv_heads=3)
    assert default.num_kv_heads == 3
    x = torch.randn(2, 4, 12)
    torch.testing.assert_close(default(x, x, x)[0], explicit(x, x, x)[0], atol=0, rtol=0)


def test_mqa_heads_differ_only_through_their_queries():
    torch.manual_seed(7)
    mqa = MultiHeadAttention(8, 4, num_kv_heads=1)
    with torch.no_grad():
        # Give every query head the same projection: with one shared K/V head, every head
        # must then attend identically.
        mqa.w_q.weight.copy_(mqa.w_q.weight[:2].repeat(4, 1))
        mqa.w_q.bias.copy_(mqa.w_q.bias[:2].repeat(4))
    x = torch.randn(1, 5, 8)
    _, weights = mqa(x, x, x)
    for head in range(1, 4):
        torch.testing.assert_close(weights[:, head], weights[:, 0])


# --- errors ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args, message",
    [
        ((10, 3), "num_heads=3 must divide d_model=10"),
        ((16, 4, 3), "num_kv_heads=3 must divide num_heads=4"),
        ((0, 1), "d_model must be a positive integer"),
        ((16, 0), "num_heads must be a positive integer"),
        ((16, 4, 0), "num_kv_heads must be a positive integer"),
    ],
)
def test_constructor_errors(args, message):
    with pytest.raises(ValueError, match=message):
        MultiHeadAttention(*args)


def test_forward_shape_errors_name_argument_and_shapes():
    mha = MultiHeadAttention(16, 4)
    x, mem = torch.randn(2, 5, 16), torch.randn(2, 7, 16)
    with pytest.raises(ValueError, match=r"query has shape \(5, 16\) but must be \(B, n, 16\)"):
        mha(x[0], mem, mem)
    with pytest.raises(ValueError, match=r"key has shape \(2, 7, 8\) but must be \(B, m, 16\)"):
        mha(x, mem[..., :8], mem)
    with pytest.raises(
        ValueError,
        match=r"value has shape \(2, 6, 16\) but key has shape "
        r"\(2, 7, 16\); value must be \(2, 7, 16\)",
    ):
        mha(x, mem, mem[:, :6])
    with pytest.raises(ValueError, match=r"key has shape \(1, 7, 16\) but query has B=2"):
        mha(x, mem[:1], mem[:1])
    with pytest.raises(ValueError, match=r"mask has shape \(5, 6\)"):
        mha(x, mem, mem, torch.ones(5, 6, dtype=torch.bool))
    with pytest.raises(TypeError, match="mask must be a boolean tensor"):
        mha(x, mem, mem, torch.ones(5, 7))
    with pytest.raises(TypeError, match="query has dtype torch.float64"):
        mha(x.double(), mem, mem)
    with pytest.raises(TypeError, match="query must be a torch.Tensor"):
        mha(x.tolist(), mem, mem)


# --- attention_flops ------------------------------------------------------------------------


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize(
    "B, n, m, d_model, h", [(1, 4, 4, 8, 2), (2, 5, 9, 16, 4), (3, 7, 3, 12, 3), (1, 64, 64, 32, 8)]
)
def test_flops_match_flop_counter(B, n, m, d_model, h, bias):
    mha = MultiHeadAttention(d_model, h, bias=bias)
    query, memory = torch.randn(B, n, d_model), torch.randn(B, m, d_model)
    # FlopCounterMode counts matrix products only (mm, addmm, bmm, ...); the bias adds, the
    # softmax and the mask are not counted, so the figure is the same with or without bias.
    with FlopCounterMode(display=False) as counter:
        mha(query, memory, memory, causal_mask(n, m) if m >= n else None)
    assert counter.get_total_flops() == attention_flops(B, n, m, d_model)


@settings(max_examples=25, deadline=None)
@given(B=st.integers(1, 8), n=st.integers(1, 4096), d_model=st.integers(1, 4096))
def test_flops_closed_form_for_self_attention(B, n, d_model):
    assert attention_flops(B, n, n, d_model) == 4 * B * n * d_model * (2 * d_model + n)


def test_flops_scores_overtake_projections_beyond_n_equal_2d():
    d = 64
    for n, ratio in ((d, 0.5), (2 * d, 1.0), (4 * d, 2.0)):
        projections = 8 * n * d * d  # W_Q, W_K, W_V, W_O on n tokens each
        scores_and_sum = 4 * n * n * d  # Q Kᵀ and weights × V
        assert attention_flops(1, n, n, d) == projections + scores_and_sum
        assert scores_and_sum / projections == ratio


@pytest.mark.parametrize("args", [(0, 4, 4, 8), (1, 4, 4, -8), (1, 4.0, 4, 8), (1, 4, True, 8)])
def test_flops_errors(args):
    with pytest.raises(ValueError, match="must be a positive integer"):
        attention_flops(*args)


# --- kv_cache_bytes -------------------------------------------------------------------------


def test_kv_cache_llama_2_7b_is_half_a_mib_per_token():
    # Llama-2-7B (Touvron et al., 2023): 32 layers, 32 heads of 128, no GQA; fp16 cache.
    assert kv_cache_bytes(32, 32, 128, seq_len=1) == 512 * 1024
    assert kv_cache_bytes(32, 32, 128, seq_len=4096) == 2 * 1024**3
    assert kv_cache_bytes(32, 32, 128, seq_len=4096, batch=8, bytes_per_element=4) == 32 * 1024**3


def test_kv_cache_llama_2_70b_gqa():
    # Llama-2-70B: 80 layers, 64 query heads but only 8 K/V heads of 128.
    per_token = kv_cache_bytes(80, 8, 128, seq_len=1)
    assert per_token == 320 * 1024
    assert kv_cache_bytes(80, 64, 128, seq_len=1) == 8 * per_token


@pytest.mark.parametrize("dtype", [torch.float16, torch.float32])
def test_kv_cache_bytes_match_real_tensors(dtype):
    layers, kv_heads, d_head, seq_len, batch = 3, 2, 16, 10, 4
    cache = [
        (
            torch.zeros(batch, kv_heads, seq_len, d_head, dtype=dtype),
            torch.zeros(batch, kv_heads, seq_len, d_head, dtype=dtype),
        )
        for _ in range(layers)
    ]
    real = sum(k.nbytes + v.nbytes for k, v in cache)
    element = torch.finfo(dtype).bits // 8
    assert kv_cache_bytes(layers, kv_heads, d_head, seq_len, batch, element) == real


def test_kv_cache_fractional_bytes():
    assert kv_cache_bytes(2, 2, 8, 4, bytes_per_element=0.5) == 128.0


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"num_layers": 0}, "num_layers must be a positive integer"),
        ({"seq_len": -1}, "seq_len must be a positive integer"),
        ({"batch": 1.5}, "batch must be a positive integer"),
        ({"bytes_per_element": 0}, "bytes_per_element must be a positive number"),
        ({"bytes_per_element": True}, "bytes_per_element must be a positive number"),
    ],
)
def test_kv_cache_errors(kwargs, message):
    args = {"num_layers": 2, "num_kv_heads": 2, "d_head": 8, "seq_len": 4} | kwargs
    with pytest.raises(ValueError, match=message):
        kv_cache_bytes(**args)


def test_a_cache_filled_step_by_step_gives_the_full_causal_attention():
    """Feeding tokens in chunks through one cache equals one causal pass over them all."""
    from attention_qa.masks import causal_mask

    torch.manual_seed(0)
    mha = MultiHeadAttention(16, 4, num_kv_heads=2).double()
    x = torch.randn(2, 7, 16, dtype=torch.float64)  # (B, n, d_model)
    full, _ = mha(x, x, x, causal_mask(7))  # (B, n, d_model)
    cache, outs, past = {}, [], 0
    for chunk in (x[:, :3], x[:, 3:4], x[:, 4:]):
        t = chunk.shape[1]
        out, weights = mha(chunk, chunk, chunk, causal_mask(t, past + t), cache=cache)
        assert weights.shape == (2, 4, t, past + t)
        past += t
        outs.append(out)
    assert cache["k"].shape == (2, 2, 7, 4) and cache["v"].shape == (2, 2, 7, 4)
    torch.testing.assert_close(torch.cat(outs, dim=1), full)


# --- MultiHeadLatentAttention -------------------------------------------------------------


def make_mla(d_model=16, num_heads=4, d_latent=6, seed=0):
    torch.manual_seed(seed)
    return MultiHeadLatentAttention(d_model, num_heads, d_latent).double()


def mla_reference(mla, x, mask=None):
    """DeepSeek-V2 eqs. (9)-(13) with PyTorch's attention: K = W_uk c, V = W_uv c, per head."""
    B, n, d = x.shape
    h, d_head = mla.num_heads, d // mla.num_heads
    c = x @ mla.w_dkv.weight.T  # (B, n, d_latent)
    q, k, v = (t.reshape(B, n, h, d_head).transpose(1, 2)
               for t in (x @ mla.w_q.weight.T, c @ mla.w_uk.weight.T, c @ mla.w_uv.weight.T))
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)  # scale 1/√d_head
    scores = (q @ k.transpose(-2, -1)) / d_head**0.5
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return out.transpose(1, 2).reshape(B, n, d) @ mla.w_o.weight.T, weights


@pytest.mark.parametrize("absorb", [False, True])
@pytest.mark.parametrize("use_mask", [False, True])
def test_mla_matches_reference_from_torch_attention(absorb, use_mask):
    mla = make_mla()
    x = torch.randn(2, 7, 16, dtype=torch.float64)
    mask = causal_mask(7) if use_mask else None
    out, weights = mla(x, mask=mask, absorb=absorb)
    ref_out, ref_weights = mla_reference(mla, x, mask)
    assert out.shape == (2, 7, 16) and weights.shape == (2, 4, 7, 7)
    torch.testing.assert_close(out, ref_out)
    torch.testing.assert_close(weights, ref_weights)


@settings(max_examples=20, deadline=None)
@given(
    heads_and_d=st.sampled_from([(1, 4), (2, 8), (4, 8), (3, 12)]),
    d_latent=st.integers(1, 10),
    n=st.integers(1, 6),
    seed=st.integers(0, 2**16),
)
def test_mla_absorbed_equals_explicit(heads_and_d, d_latent, n, seed):
    num_heads, d_model = heads_and_d
    mla = make_mla(d_model, num_heads, d_latent, seed=seed)
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(2, n, d_model, generator=g, dtype=torch.float64)
    mask = torch.rand(2, 1, n, n, generator=g) > 0.3  # some rows fully masked
    explicit = mla(x, mask=mask)
    absorbed = mla(x, mask=mask, absorb=True)
    torch.testing.assert_close(absorbed[0], explicit[0], rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(absorbed[1], explicit[1], rtol=1e-12, atol=1e-12)


def test_mla_absorbed_never_builds_keys_or_values():
    mla = make_mla()
    calls = []
    for name in ("w_uk", "w_uv"):
        getattr(mla, name).register_forward_hook(
            lambda module, inputs, output, name=name: calls.append(name)
        )
    x = torch.randn(1, 5, 16, dtype=torch.float64)
    mla(x, absorb=True)
    assert calls == []
    mla(x)
    assert calls == ["w_uk", "w_uv"]


@pytest.mark.parametrize("absorb", [False, True])
def test_mla_padding_mask_and_fully_masked_rows(absorb):
    mla = make_mla(seed=1)
    x = torch.randn(2, 5, 16, dtype=torch.float64)
    keep = padding_mask([5, 3], 5).view(2, 1, 1, 5)  # (B, 1, 1, m)
    mask = combine_masks(causal_mask(5), keep)
    mask[1, 0, 4] = False  # query 4 of batch 1 sees nothing
    out, weights = mla(x, mask=mask, absorb=absorb)
    assert (weights[~mask.expand(2, 4, 5, 5)] == 0).all()
    assert torch.equal(weights[1, :, 4], torch.zeros(4, 5, dtype=torch.float64))
    assert torch.equal(out[1, 4], torch.zeros(16, dtype=torch.float64))  # w_o has no bias
    ok = mask.expand(2, 4, 5, 5).any(-1)  # (B, h, n): rows with some key
    ref_out, ref_weights = mla_reference(mla, x, mask.expand(2, 4, 5, 5) | ~ok.unsqueeze(-1))
    torch.testing.assert_close(weights[ok], ref_weights[ok])
    torch.testing.assert_close(out[0], ref_out[0])


def test_mla_structure():
    mla = MultiHeadLatentAttention(32, 4, 8)
    shapes = {name: tuple(p.shape) for name, p in mla.named_parameters()}
    assert shapes == {
        "w_q.weight": (32, 32), "w_dkv.weight": (8, 32), "w_uk.weight": (32, 8),
        "w_uv.weight": (32, 8), "w_o.weight": (32, 32),
    }  # and no biases
    assert mla.d_head == 8


def test_mla_gradients_reach_every_parameter():
    for absorb in (False, True):
        mla = make_mla()
        out, _ = mla(torch.randn(2, 4, 16, dtype=torch.float64), causal_mask(4), absorb=absorb)
        out.square().sum().backward()
        for name, p in mla.named_parameters():
            assert p.grad is not None and p.grad.abs().sum() > 0, (absorb, name)


def test_mla_bad_arguments():
    with pytest.raises(ValueError, match="num_heads=3 must divide d_model=16"):
        MultiHeadLatentAttention(16, 3, 4)
    with pytest.raises(ValueError, match="d_latent must be a positive integer, got 0"):
        MultiHeadLatentAttention(16, 4, 0)
    mla = make_mla()
    with pytest.raises(ValueError, match=r"x has shape \(2, 5, 8\) but must be \(B, n, 16\)"):
        mla(torch.zeros(2, 5, 8, dtype=torch.float64))
    with pytest.raises(ValueError, match=r"x has shape \(5, 16\) but must be \(B, n, 16\)"):
        mla(torch.zeros(5, 16, dtype=torch.float64))
    with pytest.raises(TypeError, match="module's weights have dtype torch.float64"):
        mla(torch.zeros(1, 5, 16))
    with pytest.raises(TypeError, match="absorb must be True or False, got 1"):
        mla(torch.zeros(1, 5, 16, dtype=torch.float64), absorb=1)
    x = torch.zeros(1, 5, 16, dtype=torch.float64)
    for absorb in (False, True):
        with pytest.raises(ValueError, match=r"mask has shape \(4, 4\) which does not broadcast"):
            mla(x, mask=causal_mask(4), absorb=absorb)
        with pytest.raises(TypeError, match="mask must be a boolean tensor"):
            mla(x, mask=torch.ones(5, 5), absorb=absorb)


# --- latent_cache_bytes -------------------------------------------------------------------


def test_latent_cache_bytes_formula():
    # one definition, importable from costs and (as the book first promised) from multihead
    assert latent_cache_bytes is costs.latent_cache_bytes
    assert attention_flops is costs.attention_flops and kv_cache_bytes is costs.kv_cache_bytes
    # DeepSeek-V2: 60 layers, d_latent 512 plus 64 RoPE dims, fp16.
    assert latent_cache_bytes(60, 512, seq_len=1, d_rope=64) == 60 * 576 * 2
    got = latent_cache_bytes(2, 8, 10, batch=3, bytes_per_element=4, d_rope=1)
    assert got == 2 * (8 + 1) * 10 * 3 * 4
    assert latent_cache_bytes(1, 8, 1, bytes_per_element=0.5) == 4.0
    # Against the K/V cache of 128 heads of 128 (DeepSeek-V2's shape without compression).
    ratio = kv_cache_bytes(60, 128, 128, 1) / latent_cache_bytes(60, 512, 1, d_rope=64)
    assert ratio == pytest.approx(2 * 128 * 128 / 576)


@pytest.mark.parametrize("dtype", [torch.float16, torch.float32])
def test_latent_cache_bytes_match_the_latents_of_a_real_module(dtype):
    layers, batch, seq_len = 3, 2, 9
    mlas = [MultiHeadLatentAttention(16, 4, 6).to(dtype) for _ in range(layers)]
    x = torch.randn(batch, seq_len, 16, dtype=dtype)
    cache = [mla.w_dkv(x) for mla in mlas]  # what a decoder keeps: c of every layer
    held = sum(c.numel() * c.element_size() for c in cache)
    assert held == latent_cache_bytes(layers, 6, seq_len, batch, torch.finfo(dtype).bits // 8)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"d_latent": 0}, "d_latent must be a positive integer"),
        ({"d_rope": -1}, "d_rope must be a non-negative integer, got -1"),
        ({"seq_len": 2.0}, "seq_len must be a positive integer"),
        ({"bytes_per_element": -2}, "bytes_per_element must be a positive number"),
    ],
)
def test_latent_cache_bytes_errors(kwargs, message):
    args = {"num_layers": 2, "d_latent": 8, "seq_len": 4} | kwargs
    with pytest.raises(ValueError, match=message):
        latent_cache_bytes(**args)


def test_split_heads_gives_each_head_its_slice_of_features_and_merge_heads_undoes_it():
    x = torch.randn(2, 5, 12)  # (B, n, h·d) with h = 3, d = 4
    heads = split_heads(x, 3)
    assert heads.shape == (2, 3, 5, 4)
    for i in range(3):
        # head i at token t holds features i·d … (i+1)·d − 1 of token t
        assert torch.equal(heads[:, i], x[..., 4 * i : 4 * (i + 1)])
    assert torch.equal(merge_heads(heads), x)
