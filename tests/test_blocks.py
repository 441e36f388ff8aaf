import math

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

from attention_qa.blocks import FeedForward, LayerNorm, RMSNorm, SwiGLU, TransformerBlock
from attention_qa.masks import causal_mask


def rand(*shape, seed=0, dtype=torch.float64):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g, dtype=dtype)


def randomise_(module, seed=0):
    """Random values for every parameter, so LayerNorm's weight and bias are not 1 and 0."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(torch.randn(p.shape, generator=g, dtype=p.dtype) * 0.5)
    return module


# --- LayerNorm ----------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(8,), (3, 8), (2, 5, 8)])
@pytest.mark.parametrize(
    "ours_type, torch_type, eps",
    [(LayerNorm, nn.LayerNorm, 1e-5), (LayerNorm, nn.LayerNorm, 0.1),
     (RMSNorm, nn.RMSNorm, 1e-6), (RMSNorm, nn.RMSNorm, 0.1)],
)
def test_norms_match_torch(shape, ours_type, torch_type, eps):
    ours = randomise_(ours_type(8, eps=eps).double(), seed=1)
    ref = torch_type(8, eps=eps).double()
    with torch.no_grad():
        for name, param in ref.named_parameters():  # RMSNorm has a weight only
            param.copy_(getattr(ours, name))
    x = rand(*shape, seed=2) * 3 + 1
    torch.testing.assert_close(ours(x), ref(x))
    # The gradients agree too, for the input and every parameter.
    x1, x2 = x.clone().requires_grad_(), x.clone().requires_grad_()
    (ours(x1) ** 3).sum().backward()
    (ref(x2) ** 3).sum().backward()
    torch.testing.assert_close(x1.grad, x2.grad)
    for name, param in ref.named_parameters():
        torch.testing.assert_close(getattr(ours, name).grad, param.grad)


def test_layernorm_fresh_layer_normalises_with_biased_variance():
    ln = LayerNorm(4, eps=1e-12).double()
    assert torch.equal(ln.weight, torch.ones(4, dtype=torch.float64))
    assert torch.equal(ln.bias, torch.zeros(4, dtype=torch.float64))
    y = ln(torch.tensor([[1.0, 2.0, 3.0, 4.0]], dtype=torch.float64))
    # mean 2.5, biased variance 1.25 (the unbiased 5/3 would give a different answer).
    expected = (torch.tensor([1.0, 2.0, 3.0, 4.0]) - 2.5) / math.sqrt(1.25)
    torch.testing.assert_close(y[0], expected.double())
    torch.testing.assert_close(y.mean(-1), torch.zeros(1, dtype=torch.float64))


def test_layernorm_constant_row_is_finite():
    y = LayerNorm(5)(torch.full((2, 5), 7.0))
    assert torch.equal(y, torch.zeros(2, 5))


@settings(max_examples=25, deadline=None)
@given(d_model=st.integers(1, 12), rows=st.integers(1, 4), seed=st.integers(0, 2**16))
def test_layernorm_property(d_model, rows, seed):
    ours = randomise_(LayerNorm(d_model).double(), seed=seed)
    ref = nn.LayerNorm(d_model).double()
    ref.load_state_dict(ours.state_dict())
    x = rand(rows, d_model, seed=seed) * 10
    torch.testing.assert_close(ours(x), ref(x))


def test_layernorm_state_dict_matches_torch_names():
    assert set(LayerNorm(3).state_dict()) == set(nn.LayerNorm(3).state_dict())


@pytest.mark.parametrize("eps", [0, -1e-5, math.inf, True, "1e-5"])
def test_layernorm_bad_eps(eps):
    with pytest.raises(ValueError, match="eps must be a positive, finite number"):
        LayerNorm(4, eps=eps)


def test_layernorm_bad_arguments():
    with pytest.raises(ValueError, match="d_model must be a positive integer, got 0"):
        LayerNorm(0)
    with pytest.raises(ValueError, match=r"x has shape \(2, 5\) but this module has d_model=4"):
        LayerNorm(4)(torch.zeros(2, 5))
    with pytest.raises(TypeError, match="x must be a torch.Tensor, got list"):
        LayerNorm(2)([1.0, 2.0])
    with pytest.raises(TypeError, match="x must be a floating-point tensor"):
        LayerNorm(2)(torch.ones(2, dtype=torch.long))
    with pytest.raises(ValueError, match=r"needs at least 1 dimensions"):
        LayerNorm(1)(torch.tensor(1.0))


# --- FeedForward --------------------------------------------------------------------------


def test_feedforward_is_linear_relu_linear():
    ffn = randomise_(FeedForward(4, 10).double(), seed=3)
    x = rand(2, 3, 4, seed=4)
    W1, b1 = ffn.linear1.weight, ffn.linear1.bias
    W2, b2 = ffn.linear2.weight, ffn.linear2.bias
    expected = torch.clamp(x @ W1.T + b1, min=0) @ W2.T + b2  # max(0, x W_1 + b_1) W_2 + b_2
    assert W1.shape == (10, 4) and W2.shape == (4, 10)
    torch.testing.assert_close(ffn(x), expected)


def test_feedforward_is_position_wise():
    ffn = randomise_(FeedForward(4, 6).double(), seed=5)
    x = rand(2, 5, 4, seed=6)
    out = ffn(x)
    for b in range(2):
        for pos in range(5):
            torch.testing.assert_close(out[b, pos], ffn(x[b, pos]))
    # Changing one position leaves every other position's output unchanged.
    x2 = x.clone()
    x2[1, 2] += 1.0
    out2 = ffn(x2)
    changed = (out2 - out).abs().sum(-1) > 0  # (B, n)
    assert changed.tolist() == [[False] * 5, [False, False, True, False, False]]


def test_feedforward_bad_arguments():
    with pytest.raises(ValueError, match="d_ff must be a positive integer, got -3"):
        FeedForward(4, -3)
    with pytest.raises(ValueError, match="d_model must be a positive integer, got 4.0"):
        FeedForward(4.0, 8)
    with pytest.raises(ValueError, match=r"x has shape \(3, 5\) but this module has d_model=4"):
        FeedForward(4, 8)(torch.zeros(3, 5))


# --- RMSNorm ------------------------------------------------------------------------------


def test_rmsnorm_default_eps_and_parameters():
    norm = RMSNorm(6)
    assert norm.eps == 1e-6
    assert [name for name, _ in norm.named_parameters()] == ["weight"]  # no bias
    assert torch.equal(norm.weight, torch.ones(6))
    assert norm.state_dict().keys() == nn.RMSNorm(6).state_dict().keys()


def test_rmsnorm_rescales_without_centring():
    x = torch.tensor([[3.0, 4.0, 0.0, 0.0]], dtype=torch.float64)  # mean of squares 25/4
    y = RMSNorm(4, eps=1e-12).double()(x)
    torch.testing.assert_close(y, x / 2.5)
    assert y.pow(2).mean().item() == pytest.approx(1.0)
    assert y.mean().item() != pytest.approx(0.0)  # unlike LayerNorm, the mean stays
    assert torch.equal(RMSNorm(4)(torch.zeros(2, 4)), torch.zeros(2, 4))  # eps: no 0/0


def test_rmsnorm_bad_arguments():
    with pytest.raises(ValueError, match="eps must be a positive, finite number, got 0"):
        RMSNorm(4, eps=0)
    with pytest.raises(ValueError, match="d_model must be a positive integer, got 0"):
        RMSNorm(0)
    with pytest.raises(ValueError, match=r"x has shape \(3, 5\) but this module has d_model=4"):
        RMSNorm(4)(torch.zeros(3, 5))
    with pytest.raises(TypeError, match="x must be a floating-point tensor"):
        RMSNorm(4)(torch.zeros(3, 4, dtype=torch.long))


# --- SwiGLU -------------------------------------------------------------------------------


def test_swiglu_matches_silu_formula():
    ffn = randomise_(SwiGLU(4, 10).double(), seed=3)
    x = rand(2, 3, 4, seed=4)
    W_gate, W_up, W_down = ffn.w_gate.weight, ffn.w_up.weight, ffn.w_down.weight
    assert W_gate.shape == W_up.shape == (10, 4) and W_down.shape == (4, 10)
    torch.testing.assert_close(ffn(x), (F.silu(x @ W_gate.T) * (x @ W_up.T)) @ W_down.T)
    # silu(z) = z · sigmoid(z), written out.
    z = x @ W_gate.T
    torch.testing.assert_close(ffn(x), (z * torch.sigmoid(z) * (x @ W_up.T)) @ W_down.T)


def test_swiglu_has_no_biases():
    ffn = SwiGLU(4, 10)
    assert sorted(name for name, _ in ffn.named_parameters()) == [
        "w_down.weight", "w_gate.weight", "w_up.weight"
    ]
    assert torch.equal(ffn(torch.zeros(3, 4)), torch.zeros(3, 4))  # no bias: 0 ↦ 0


def test_swiglu_bad_arguments():
    with pytest.raises(ValueError, match="d_ff must be a positive integer, got -3"):
        SwiGLU(4, -3)
    with pytest.raises(ValueError, match=r"x has shape \(3, 5\) but this module has d_model=4"):
        SwiGLU(4, 8)(torch.zeros(3, 5))


# --- TransformerBlock ---------------------------------------------------------------------


def to_torch_layer(block: TransformerBlock, d_ff: int) -> nn.TransformerEncoderLayer:
    """An nn.TransformerEncoderLayer holding the same weights as our block."""
    attn = block.attn
    ref = nn.TransformerEncoderLayer(
        block.d_model,
        attn.num_heads,
        dim_feedforward=d_ff,
        dropout=0.0,
        activation="relu",
        layer_norm_eps=block.norm1.eps,
        batch_first=True,
        norm_first=block.norm_first,
    ).double()
    with torch.no_grad():
        sa = ref.self_attn
        sa.in_proj_weight.copy_(torch.cat([attn.w_q.weight, attn.w_k.weight, attn.w_v.weight]))
        sa.in_proj_bias.copy_(torch.cat([attn.w_q.bias, attn.w_k.bias, attn.w_v.bias]))
        sa.out_proj.weight.copy_(attn.w_o.weight)
        sa.out_proj.bias.copy_(attn.w_o.bias)
        for name in ("linear1", "linear2"):
            getattr(ref, name).load_state_dict(getattr(block.ffn, name).state_dict())
        for name in ("norm1", "norm2"):
            getattr(ref, name).load_state_dict(getattr(block, name).state_dict())
    return ref.eval()


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("use_mask", [False, True])
def test_block_matches_torch_encoder_layer(norm_first, use_mask):
    torch.manual_seed(0)
    block = randomise_(TransformerBlock(8, 2, 16, norm_first=norm_first).double(), seed=7)
    ref = to_torch_layer(block, 16)
    x = rand(3, 5, 8, seed=8)
    mask = causal_mask(5) if use_mask else None
    ours = block(x, mask=mask)
    # nn.TransformerEncoderLayer reads a boolean mask the other way round: True = blocked.
    theirs = ref(x, src_mask=None if mask is None else ~mask)
    assert ours.shape == (3, 5, 8)
    torch.testing.assert_close(ours, theirs)


@settings(max_examples=25, deadline=None)
@given(
    heads_and_d=st.sampled_from([(1, 4), (2, 4), (2, 6), (3, 6), (4, 8)]),
    n=st.integers(1, 5),
    batch=st.integers(1, 3),
    norm_first=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_block_property_matches_torch(heads_and_d, n, batch, norm_first, seed):
    num_heads, d_model = heads_and_d
    block = randomise_(TransformerBlock(d_model, num_heads, 5, norm_first).double(), seed=seed)
    ref = to_torch_layer(block, 5)
    x = rand(batch, n, d_model, seed=seed)
    torch.testing.assert_close(block(x), ref(x))


def test_post_ln_output_is_normalised_pre_ln_is_not():
    x = rand(2, 4, 8, seed=9) * 5 + 3
    post = randomise_(TransformerBlock(8, 2, 16, norm_first=False).double(), seed=10)
    pre = randomise_(TransformerBlock(8, 2, 16, norm_first=True).double(), seed=10)
    with torch.no_grad():
        for block in (post, pre):
            block.norm2.weight.fill_(1.0)
            block.norm2.bias.zero_()
    # Post-LN ends with LayerNorm, so every position leaves with mean 0 and variance 1.
    y = post(x)
    torch.testing.assert_close(y.mean(-1), torch.zeros(2, 4, dtype=torch.float64))
    # Variance 1 up to eps: var / (var + eps).
    var = y.var(-1, unbiased=False)
    torch.testing.assert_close(var, torch.ones(2, 4, dtype=torch.float64), atol=1e-3, rtol=0)
    # Pre-LN ends with a residual add, so the input's offset passes through.
    assert pre(x).mean(-1).abs().min() > 0.5
    assert not torch.allclose(pre(x), post(x))


def test_residual_structure_with_zeroed_sublayers():
    # With the attention and FFN outputs forced to zero, each sublayer adds nothing.
    x = rand(2, 3, 6, seed=11) * 2 + 1
    for norm_first in (False, True):
        block = randomise_(TransformerBlock(6, 3, 4, norm_first=norm_first).double(), seed=12)
        with torch.no_grad():
            for layer in (block.attn.w_o, block.ffn.linear2):
                layer.weight.zero_()
                layer.bias.zero_()
        if norm_first:
            # Pre-LN: x + 0 + 0 = x, the identity.
            torch.testing.assert_close(block(x), x)
        else:
            # Post-LN: LN2(LN1(x) + 0).
            torch.testing.assert_close(block(x), block.norm2(block.norm1(x)))


def test_causal_mask_blocks_the_future():
    block = randomise_(TransformerBlock(8, 2, 12).double(), seed=13)
    x = rand(1, 6, 8, seed=14)
    x2 = x.clone()
    x2[0, 4:] += rand(2, 8, seed=15)  # change only positions 4 and 5
    mask = causal_mask(6)
    y, y2 = block(x, mask), block(x2, mask)
    torch.testing.assert_close(y[0, :4], y2[0, :4])  # the past cannot see the change
    assert not torch.allclose(y[0, 4:], y2[0, 4:])
    # Without the mask every position sees the change.
    assert not torch.allclose(block(x)[0, :4], block(x2)[0, :4])


def test_padding_mask_per_batch_entry_and_fully_masked_rows_stay_finite():
    block = randomise_(TransformerBlock(4, 2, 8).double(), seed=16)
    x = rand(2, 3, 4, seed=17)
    keep = torch.tensor([[True, True, False], [True, False, False]])  # (B, m)
    mask = keep[:, None, None, :]  # (B, 1, 1, m) broadcasts to (B, h, n, m)
    y = block(x, mask)
    x2 = x.clone()
    x2[0, 2] += 10.0  # a padded key of batch entry 0
    torch.testing.assert_close(block(x2, mask)[0, :2], y[0, :2])
    nothing = torch.zeros(3, 3, dtype=torch.bool)
    assert torch.isfinite(block(x, nothing)).all()


def test_block_gradients_reach_every_parameter():
    block = TransformerBlock(8, 4, 16, norm_first=True)
    block(torch.randn(2, 3, 8)).square().sum().backward()
    for name, p in block.named_parameters():
        assert p.grad is not None and p.grad.abs().sum() > 0, name


def test_block_uses_the_packages_multihead_attention():
    from attention_qa.multihead import MultiHeadAttention

    block = TransformerBlock(8, 2, 16)
    assert isinstance(block.attn, MultiHeadAttention)
    assert block.attn.num_heads == 2 and block.attn.d_k == 4


def test_block_bad_arguments():
    with pytest.raises(ValueError, match="num_heads=3 must divide d_model=8"):
        TransformerBlock(8, 3, 16)
    with pytest.raises(ValueError, match="d_ff must be a positive integer, got 0"):
        TransformerBlock(8, 2, 0)
    with pytest.raises(ValueError, match="num_heads must be a positive integer, got 0"):
        TransformerBlock(8, 0, 16)
    with pytest.raises(TypeError, match="norm_first must be True or False, got 'pre'"):
        TransformerBlock(8, 2, 16, norm_first="pre")
    block = TransformerBlock(8, 2, 16)
    with pytest.raises(ValueError, match=r"x has shape \(5, 8\) but must be \(B, n, 8\)"):
        block(torch.zeros(5, 8))
    with pytest.raises(ValueError, match=r"x has shape \(1, 5, 6\) but must be \(B, n, 8\)"):
        block(torch.zeros(1, 5, 6))
    with pytest.raises(TypeError, match="x must be a torch.Tensor, got list"):
        block([[0.0] * 8])
    with pytest.raises(TypeError, match="mask must be a boolean tensor"):
        block(torch.zeros(1, 5, 8), mask=torch.ones(5, 5))
    with pytest.raises(ValueError, match=r"mask has shape \(4, 4\) which does not broadcast"):
        block(torch.zeros(1, 5, 8), mask=torch.ones(4, 4, dtype=torch.bool))


# --- ConfigurableBlock (q26) ----------------------------------------------------------------

from attention_qa.blocks import ConfigurableBlock, stack_statistics  # noqa: E402


@pytest.mark.parametrize("norm_first", [False, True])
def test_configurable_block_2017_parts_equal_transformer_block_with_causal_mask(norm_first):
    block = randomise_(ConfigurableBlock(16, 4, 32, norm_first=norm_first).double(), seed=3)
    reference = TransformerBlock(16, 4, 32, norm_first=norm_first).double()
    names = {"w_q": "attn.w_q", "w_k": "attn.w_k", "w_v": "attn.w_v", "w_o": "attn.w_o"}
    state = {}
    for key, value in block.state_dict().items():
        head, rest = key.split(".", 1)
        state[f"{names.get(head, head)}.{rest}"] = value
    reference.load_state_dict(state)
    x = rand(2, 7, 16, seed=4)
    with torch.no_grad():
        assert torch.allclose(block(x), reference(x, mask=causal_mask(7)), atol=1e-12)


def llama_reference(block, x):
    """LLaMA's block written with PyTorch's own RMSNorm and scaled_dot_product_attention."""
    B, n, d = x.shape
    h = block.num_heads
    norm1 = nn.RMSNorm(d, eps=1e-6).double()
    norm2 = nn.RMSNorm(d, eps=1e-6).double()
    norm1.weight.data.copy_(block.norm1.weight)
    norm2.weight.data.copy_(block.norm2.weight)
    y = norm1(x)

    def heads(t):
        return t.view(B, n, h, d // h).transpose(1, 2)

    q, k, v = heads(y @ block.w_q.weight.T), heads(y @ block.w_k.weight.T), heads(
        y @ block.w_v.weight.T)
    if block.qk_norm:
        q = F.rms_norm(q, (d // h,), block.q_norm.weight, eps=1e-6)
        k = F.rms_norm(k, (d // h,), block.k_norm.weight, eps=1e-6)
    out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    x = x + out.transpose(1, 2).reshape(B, n, d) @ block.w_o.weight.T
    y = norm2(x)
    ffn = block.ffn
    hidden = F.silu(y @ ffn.w_gate.weight.T) * (y @ ffn.w_up.weight.T)
    return x + hidden @ ffn.w_down.weight.T


@pytest.mark.parametrize("qk_norm", [False, True])
def test_configurable_block_llama_parts_match_a_reference(qk_norm):
    block = ConfigurableBlock(16, 4, 24, norm="rmsnorm", ffn="swiglu", norm_first=True,
                              bias=False, qk_norm=qk_norm)
    block = randomise_(block.double(), seed=5)
    x = rand(2, 6, 16, seed=6)
    with torch.no_grad():
        assert torch.allclose(block(x), llama_reference(block, x), atol=1e-10)


def test_configurable_block_without_bias_has_no_bias_parameter():
    for norm in ("layernorm", "rmsnorm"):
        for ffn in ("relu", "swiglu"):
            block = ConfigurableBlock(8, 2, 16, norm=norm, ffn=ffn, bias=False)
            assert not any(name.endswith("bias") for name, _ in block.named_parameters())
    assert any(n.endswith("bias") for n, _ in ConfigurableBlock(8, 2, 16).named_parameters())


def test_qk_norm_bounds_the_logits_by_sqrt_d_head_whatever_the_weights():
    block = ConfigurableBlock(16, 2, 32, qk_norm=True, norm_first=True).double()
    x = rand(1, 10, 16, seed=7)
    with torch.no_grad():
        for scale in (1.0, 10.0, 100.0):
            block.w_q.weight.mul_(scale)
            _, logits = block.forward_with_logits(x)
            assert logits.abs().max() <= math.sqrt(8) + 1e-9


def test_stack_statistics_post_norm_keeps_rms_one_pre_norm_grows():
    post = stack_statistics(6, d_model=16, num_heads=2, d_ff=64, n=8)
    pre = stack_statistics(6, d_model=16, num_heads=2, d_ff=64, n=8, norm_first=True)
    assert all(abs(v - 1) < 1e-3 for v in post["rms"])
    assert pre["rms"] == sorted(pre["rms"]) and pre["rms"][-1] > pre["rms"][0]
    big = stack_statistics(6, d_model=16, num_heads=2, d_ff=64, n=8, qk_scale=4.0)
    assert max(big["max_logit"]) > 10 * max(post["max_logit"])


def test_configurable_block_bad_arguments():
    with pytest.raises(ValueError, match="norm must be one of"):
        ConfigurableBlock(8, 2, 16, norm="batchnorm")
    with pytest.raises(ValueError, match="ffn must be one of"):
        ConfigurableBlock(8, 2, 16, ffn="gelu")
    with pytest.raises(ValueError, match="must divide d_model=8"):
        ConfigurableBlock(8, 3, 16)
    with pytest.raises(TypeError, match="qk_norm must be True or False"):
        ConfigurableBlock(8, 2, 16, qk_norm=1)
    with pytest.raises(ValueError, match=r"x has shape \(2, 8\) but must be \(B, n, 8\)"):
        ConfigurableBlock(8, 2, 16)(torch.zeros(2, 8))
    with pytest.raises(ValueError, match="qk_scale"):
        stack_statistics(2, qk_scale=0)
