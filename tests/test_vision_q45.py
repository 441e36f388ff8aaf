"""attention_qa.vision's q45 functions against independent references: PyTorch's
scaled_dot_product_attention and nn.MultiheadAttention for the gated cross-attention,
Transformers' Qwen2-VL image processor for the token count, and masks built by loops over
BLIP-2's rules for the Q-Former."""

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from attention_qa.vision import gated_cross_attention, image_token_count, qformer_mask


def _weights(d_model, d_media, d, seed=0):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(*shape, generator=g, dtype=torch.float64) / shape[0] ** 0.5
            for shape in ((d_model, d), (d_media, d), (d_media, d), (d, d_model))]


@pytest.mark.parametrize("num_heads", [1, 2, 4])
@pytest.mark.parametrize("alpha", [0.3, -1.5, 4.0])
def test_gated_cross_attention_matches_sdpa(num_heads, alpha):
    torch.manual_seed(1)
    x, media = torch.randn(2, 5, 6, dtype=torch.float64), torch.randn(2, 7, 10, dtype=torch.float64)
    w_q, w_k, w_v, w_o = _weights(6, 10, 8)
    q, k, v = (t.view(2, -1, num_heads, 8 // num_heads).transpose(1, 2)
               for t in (x @ w_q, media @ w_k, media @ w_v))
    attn = F.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(2, 5, 8)
    expected = x + torch.tanh(torch.tensor(alpha)) * attn @ w_o
    got = gated_cross_attention(x, media, w_q, w_k, w_v, w_o, alpha, num_heads)
    torch.testing.assert_close(got, expected)


def test_gated_cross_attention_matches_multihead_attention():
    torch.manual_seed(2)
    d = 8
    mha = nn.MultiheadAttention(d, 2, bias=False, kdim=d, vdim=d, batch_first=True).double()
    x, media = torch.randn(3, 4, d, dtype=torch.float64), torch.randn(3, 9, d, dtype=torch.float64)
    w_q, w_k, w_v = mha.in_proj_weight.detach().chunk(3)  # each (d, d), applied as x W^T
    w_o = mha.out_proj.weight.detach()
    out, _ = mha(x, media, media, need_weights=False)
    got = gated_cross_attention(x, media, w_q.T, w_k.T, w_v.T, w_o.T, torch.tensor(10.0), 2)
    torch.testing.assert_close(got, x + torch.tanh(torch.tensor(10.0)) * out.detach())


def test_a_closed_gate_returns_x_exactly():
    torch.manual_seed(3)
    x = torch.randn(1, 5, 6, dtype=torch.float64) * 100
    media = torch.randn(1, 64, 4, dtype=torch.float64)
    for alpha in (0, 0.0, torch.tensor(0.0), torch.zeros(6)):
        assert torch.equal(gated_cross_attention(x, media, *_weights(6, 4, 8), alpha), x)


def test_gated_cross_attention_takes_more_leading_dims_and_a_per_channel_gate():
    torch.manual_seed(4)
    x, media = torch.randn(2, 3, 5, 6, dtype=torch.float64), torch.randn(2, 3, 4, 4,
                                                                          dtype=torch.float64)
    w = _weights(6, 4, 8)
    alpha = torch.linspace(-1, 1, 6, dtype=torch.float64)
    got = gated_cross_attention(x, media, *w, alpha)
    for i in range(2):
        for j in range(3):
            one = gated_cross_attention(x[i, j][None], media[i, j][None], *w, alpha)[0]
            torch.testing.assert_close(got[i, j], one)


def test_gated_cross_attention_rejects_bad_input():
    x, media = torch.randn(2, 5, 6), torch.randn(2, 7, 10)
    w_q, w_k, w_v, w_o = (t.float() for t in _weights(6, 10, 8))
    with pytest.raises(ValueError, match="media has shape"):
        gated_cross_attention(x, media[:1], w_q, w_k, w_v, w_o, 0.0)
    with pytest.raises(ValueError, match="w_q has shape"):
        gated_cross_attention(x, media, w_q.T, w_k, w_v, w_o, 0.0)
    with pytest.raises(ValueError, match="w_k has shape"):
        gated_cross_attention(x, media, w_q, w_k[:3], w_v, w_o, 0.0)
    with pytest.raises(ValueError, match="w_o has shape"):
        gated_cross_attention(x, media, w_q, w_k, w_v, w_o.T, 0.0)
    with pytest.raises(ValueError, match="must divide d=8"):
        gated_cross_attention(x, media, w_q, w_k, w_v, w_o, 0.0, num_heads=3)
    with pytest.raises(TypeError, match="floating-point"):
        gated_cross_attention(x.long(), media, w_q, w_k, w_v, w_o, 0.0)


def test_image_token_count_matches_the_papers():
    assert image_token_count(336, 336) == 576  # LLaVA-1.5: CLIP ViT-L/14 at 336 px
    assert image_token_count(224, 224) == 256
    assert image_token_count(224, 224, merge=2) == 64  # Qwen2-VL: 66 with its two markers
    assert image_token_count(224, 224, patch_size=16) == 196  # ViT-B/16
    assert image_token_count(448, 672, merge=2) == 16 * 24


@pytest.mark.parametrize("size", [(224, 224), (336, 448), (1000, 600), (57, 3000)])
def test_image_token_count_matches_qwen2_vl_processor(size):
    from transformers.models.qwen2_vl import image_processing_pil_qwen2_vl as qwen2_vl

    processor = qwen2_vl.Qwen2VLImageProcessorPil()
    patches = processor.get_number_of_image_patches(*size)  # before the 2 × 2 merge
    h, w = qwen2_vl.smart_resize(*size, factor=28, min_pixels=processor.size["shortest_edge"],
                                 max_pixels=processor.size["longest_edge"])
    assert image_token_count(h, w, patch_size=14, merge=2) == patches // 4


def test_image_token_count_rejects_sizes_that_do_not_divide():
    with pytest.raises(ValueError, match="height=225 is not a multiple of patch_size=14"):
        image_token_count(225, 224)
    with pytest.raises(ValueError, match="width=238 gives 17 patches, not a multiple of merge=2"):
        image_token_count(224, 238, merge=2)
    with pytest.raises(ValueError, match="merge must be a positive integer"):
        image_token_count(224, 224, merge=0)


def _mask_by_rules(n_q, n_t, objective):
    n = n_q + n_t
    mask = torch.zeros(n, n, dtype=torch.bool)
    for i in range(n):
        for j in range(n):
            qi, qj = i < n_q, j < n_q
            if objective == "itm":
                mask[i, j] = True
            elif objective == "itc":
                mask[i, j] = qi == qj
            elif qi:  # itg: a query sees the queries only
                mask[i, j] = qj
            else:  # itg: a text token sees every query and the text up to itself
                mask[i, j] = qj or j <= i
    return mask


@pytest.mark.parametrize("objective", ["itc", "itm", "itg"])
@pytest.mark.parametrize("sizes", [(1, 1), (3, 4), (32, 5)])
def test_qformer_mask_follows_blip2_rules(objective, sizes):
    assert torch.equal(qformer_mask(*sizes, objective), _mask_by_rules(*sizes, objective))


def test_qformer_mask_rejects_bad_input():
    with pytest.raises(ValueError, match="objective must be one of"):
        qformer_mask(2, 2, "mlm")
    with pytest.raises(ValueError, match="num_text must be a positive integer"):
        qformer_mask(2, 0, "itc")
