"""attention_qa.vision (q37) against independent references: Swin's own mask code, PyTorch's
scaled_dot_product_attention with a mask built by loops, nn.MultiheadAttention, and RoPE
written as explicit 2 × 2 rotations."""

import math

import pytest
import torch
import torch.nn.functional as F

from attention_qa.positional import apply_rope
from attention_qa.vision import (
    classifier_free_guidance,
    latent_to_tokens,
    learned_query_attention,
    mrope,
    mrope_positions,
    msa_flops,
    rope_2d,
    swin_region_mask,
    text_cross_attention,
    tokens_to_latent,
    window_attention,
    window_mask,
    window_msa_flops,
)

GRIDS = [(4, 4, 2, 0), (4, 4, 2, 1), (8, 8, 4, 2), (8, 12, 4, 2), (6, 9, 3, 1), (8, 8, 4, 3),
         (14, 14, 7, 3)]


def swin_attn_mask(H, W, window_size, shift_size):
    """The attention mask of microsoft/Swin-Transformer's SwinTransformerBlock.__init__
    (models/swin_transformer.py), as written there: 0 where allowed, −100 elsewhere."""
    img_mask = torch.zeros((1, H, W, 1))
    slices = (slice(0, -window_size), slice(-window_size, -shift_size), slice(-shift_size, None))
    cnt = 0
    for h in slices:
        for w in slices:
            img_mask[:, h, w, :] = cnt
            cnt += 1
    x = img_mask.view(1, H // window_size, window_size, W // window_size, window_size, 1)
    mask_windows = x.permute(0, 1, 3, 2, 4, 5).contiguous().view(-1, window_size * window_size)
    attn_mask = mask_windows.unsqueeze(1) - mask_windows.unsqueeze(2)
    return attn_mask.masked_fill(attn_mask != 0, -100.0).masked_fill(attn_mask == 0, 0.0)


def mask_by_loops(h, w, M, s):
    """Patch (r, c) and (r2, c2) share a shifted window: the grid rolled by −s, cut into
    windows, the rolled-in pieces kept apart, all by plain loops over coordinates."""
    def window_and_region(r, c):
        rr, cc = (r - s) % h, (c - s) % w  # position after torch.roll(x, -s)
        region = (rr >= h - s if s else False, cc >= w - s if s else False)
        return (rr // M, cc // M), region
    n = h * w
    out = torch.zeros(n, n, dtype=torch.bool)
    for i in range(n):
        for j in range(n):
            out[i, j] = window_and_region(*divmod(i, w)) == window_and_region(*divmod(j, w))
    return out


@pytest.mark.parametrize("h,w,M,s", [g for g in GRIDS if g[3] > 0])
def test_the_region_mask_is_swins(h, w, M, s):
    assert torch.equal(swin_region_mask(h, w, M, s), swin_attn_mask(h, w, M, s) == 0)


@pytest.mark.parametrize("h,w,M,s", GRIDS)
def test_the_grid_mask_matches_loops_over_the_rolled_grid(h, w, M, s):
    assert torch.equal(window_mask(h, w, M, s), mask_by_loops(h, w, M, s))


@pytest.mark.parametrize("h,w,M,s", GRIDS)
def test_window_attention_by_partition_equals_masked_full_attention(h, w, M, s):
    g = torch.Generator().manual_seed(h * 100 + w * 10 + s)
    q, k = (torch.randn(2, h * w, 8, generator=g, dtype=torch.float64) for _ in range(2))
    v = torch.randn(2, h * w, 5, generator=g, dtype=torch.float64)
    ours = window_attention(q, k, v, (h, w), M, s)
    reference = F.scaled_dot_product_attention(q, k, v, attn_mask=mask_by_loops(h, w, M, s))
    assert (ours - reference).abs().max() < 1e-12


def test_swins_minus_100_is_the_mask_within_float_rounding():
    h = w = 8
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(1, 64, 4, generator=g, dtype=torch.float64) for _ in range(3))
    additive = torch.zeros(64, 64, dtype=torch.float64).masked_fill(~window_mask(h, w, 4, 2),
                                                                     -100.0)
    swin_like = F.scaled_dot_product_attention(q, k, v, attn_mask=additive)
    assert (swin_like - window_attention(q, k, v, (h, w), 4, 2)).abs().max() < 1e-30 + 1e-12


def test_no_shift_is_plain_windows_and_a_window_of_the_whole_grid_is_global():
    assert torch.equal(window_mask(4, 4, 4), torch.ones(16, 16, dtype=torch.bool))
    mask = window_mask(4, 4, 2)
    assert mask.sum() == 16 * 4 and mask[0, 1] and mask[0, 4] and mask[0, 5] and not mask[0, 2]


@pytest.mark.parametrize("bad, match", [
    (dict(h=6, w=8, window=4, shift=0), "must divide"),
    (dict(h=8, w=8, window=4, shift=4), "smaller than window"),
    (dict(h=8, w=8, window=0, shift=0), "positive integer"),
])
def test_bad_grids_are_refused(bad, match):
    with pytest.raises(ValueError, match=match):
        window_mask(**bad)


def test_bad_tensors_are_refused():
    q = torch.randn(1, 16, 4)
    with pytest.raises(ValueError, match="h·w = 4·2 = 8"):
        window_attention(q, q, q, (4, 2), 2)
    with pytest.raises(ValueError, match="share"):
        window_attention(q, torch.randn(1, 16, 3), q, (4, 4), 2)


def test_swin_costs_are_eq_1_and_2_and_the_code_s_count():
    h = w = 56
    C, M = 96, 7
    assert msa_flops(h, w, C) == 4 * h * w * C**2 + 2 * (h * w) ** 2 * C
    # Swin's WindowAttention.flops(N) per window, times the number of windows
    N, windows = M * M, (h // M) * (w // M)
    per_window = N * C * 3 * C + N * C * N + N * N * C + N * C * C
    assert window_msa_flops(h, w, C, M) == windows * per_window
    assert window_msa_flops(h, w, C, h) == msa_flops(h, w, C)  # one window = global
    with pytest.raises(ValueError, match="C must be a positive integer"):
        msa_flops(4, 4, 0)


def test_learned_queries_are_multihead_attention_with_identity_projections():
    g = torch.Generator().manual_seed(1)
    queries = torch.randn(5, 8, generator=g, dtype=torch.float64)
    memory = torch.randn(3, 20, 8, generator=g, dtype=torch.float64)
    out, weights = learned_query_attention(queries, memory)
    mha = torch.nn.MultiheadAttention(8, 1, bias=False, batch_first=True, dtype=torch.float64)
    with torch.no_grad():
        mha.in_proj_weight.copy_(torch.eye(8, dtype=torch.float64).repeat(3, 1))
        mha.out_proj.weight.copy_(torch.eye(8, dtype=torch.float64))
    ref, ref_w = mha(queries.expand(3, -1, -1), memory, memory)
    assert (out - ref).abs().max() < 1e-12 and (weights - ref_w).abs().max() < 1e-12
    with pytest.raises(ValueError, match="d = 8"):
        learned_query_attention(queries, torch.randn(3, 20, 6, dtype=torch.float64))


def test_latent_tokens_round_trip_in_row_major_order():
    latent = torch.arange(2 * 3 * 4 * 5).reshape(2, 3, 4, 5)
    tokens = latent_to_tokens(latent)
    assert tokens.shape == (2, 20, 3) and tokens[1, 5 * 2 + 3, 1] == latent[1, 1, 2, 3]
    assert torch.equal(tokens_to_latent(tokens, 4, 5), latent)
    with pytest.raises(ValueError, match="h·w = 4·4 = 16"):
        tokens_to_latent(tokens, 4, 4)


def test_text_cross_attention_matches_sdpa_per_head():
    g = torch.Generator().manual_seed(2)
    B, C, H, W, L, d_text, d, heads = 2, 6, 3, 4, 7, 10, 8, 2
    latent = torch.randn(B, C, H, W, generator=g, dtype=torch.float64)
    text = torch.randn(B, L, d_text, generator=g, dtype=torch.float64)
    w_q = torch.randn(C, d, generator=g, dtype=torch.float64)
    w_k, w_v = (torch.randn(d_text, d, generator=g, dtype=torch.float64) for _ in range(2))
    out, weights = text_cross_attention(latent, text, w_q, w_k, w_v, num_heads=heads)
    assert out.shape == (B, d, H, W) and weights.shape == (B, heads, H * W, L)
    q = torch.einsum("bchw,cd->bhwd", latent, w_q).reshape(B, H * W, heads, d // heads)
    k = (text @ w_k).reshape(B, L, heads, d // heads)
    v = (text @ w_v).reshape(B, L, heads, d // heads)
    ref = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2))
    ref = ref.transpose(1, 2).reshape(B, H, W, d).permute(0, 3, 1, 2)
    assert (out - ref).abs().max() < 1e-12
    with pytest.raises(ValueError, match=r"\(10, 8\)"):
        text_cross_attention(latent, text, w_q, w_k[:5], w_v)


def test_guidance_is_ho_and_salimans_with_w_plus_one():
    g = torch.Generator().manual_seed(3)
    cond, uncond = (torch.randn(4, generator=g, dtype=torch.float64) for _ in range(2))
    w = 6.5
    assert torch.allclose(classifier_free_guidance(uncond, cond, 1 + w),
                          (1 + w) * cond - w * uncond, atol=1e-12)
    assert torch.allclose(classifier_free_guidance(uncond, cond, 1.0), cond, atol=1e-15)
    with pytest.raises(ValueError, match="same shape"):
        classifier_free_guidance(uncond, cond[:2], 2.0)


def rotate_pairs(x, angles):
    """Each pair (x[2i], x[2i+1]) of one vector times the 2 × 2 rotation matrix of angles[i]."""
    out = torch.empty_like(x)
    for i, a in enumerate(angles.tolist()):
        rot = torch.tensor([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]],
                           dtype=x.dtype)
        out[2 * i : 2 * i + 2] = rot @ x[2 * i : 2 * i + 2]
    return out


def test_mrope_is_each_pair_rotated_by_its_own_axis():
    d, sections = 12, (2, 2, 2)
    g = torch.Generator().manual_seed(4)
    x = torch.randn(5, d, generator=g, dtype=torch.float64)
    positions = torch.tensor([[0, 0, 3, 3, 9], [1, 2, 3, 4, 5], [7, 1, 0, 2, 2]])
    theta = 10000.0 ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)
    axis = [0, 0, 1, 1, 2, 2]
    expected = torch.stack([rotate_pairs(x[j], positions[axis, j] * theta) for j in range(5)])
    assert (mrope(x, positions, sections) - expected).abs().max() < 1e-12


def test_mrope_on_text_is_1d_rope_and_rope_2d_is_two_halves():
    g = torch.Generator().manual_seed(5)
    x = torch.randn(2, 9, 16, generator=g, dtype=torch.float64)
    p = torch.arange(9)
    assert (mrope(x, p.expand(3, -1), (2, 3, 3)) - apply_rope(x, p)).abs().max() < 1e-12
    rows, cols = p // 3, p % 3
    out = rope_2d(x, rows, cols)
    assert torch.allclose(out[..., :8], apply_rope(x[..., :8], rows), atol=1e-12)
    assert torch.allclose(out[..., 8:], apply_rope(x[..., 8:], cols), atol=1e-12)


def test_2d_scores_depend_on_the_offset_only():
    g = torch.Generator().manual_seed(6)
    q, k = torch.randn(1, 16, generator=g, dtype=torch.float64), torch.randn(1, 16, generator=g,
                                                                            dtype=torch.float64)

    def score(a, b):
        qa = rope_2d(q, torch.tensor([a[0]]), torch.tensor([a[1]]))
        kb = rope_2d(k, torch.tensor([b[0]]), torch.tensor([b[1]]))
        return (qa @ kb.T).item()

    assert abs(score((2, 5), (4, 1)) - score((10, 13), (12, 9))) < 1e-12
    assert abs(score((2, 5), (4, 1)) - score((2, 5), (1, 4))) > 1e-3


def test_mrope_positions_follow_qwen2_vl():
    pos = mrope_positions(2, 2, 3, 2)
    assert pos.tolist() == [[0, 1, 2, 2, 2, 2, 2, 2, 5, 6],
                            [0, 1, 2, 2, 2, 3, 3, 3, 5, 6],
                            [0, 1, 2, 3, 4, 2, 3, 4, 5, 6]]
    with pytest.raises(ValueError, match="sum"):
        mrope(torch.randn(3, 8), pos[:, :3], (1, 1, 1))


def test_text_after_an_image_resumes_at_its_start_plus_the_longer_side():
    for before, gh, gw in ((1, 2, 4), (0, 16, 16), (3, 5, 2), (2, 1, 7)):
        pos = mrope_positions(before, gh, gw, 1)
        assert int(pos[0, -1]) == before + max(gh, gw)


def test_a_shift_makes_smaller_windows_along_all_four_edges():
    h = w = 8
    mask = window_mask(h, w, 4, 2)
    sizes = sorted(int(n) for n in torch.unique(mask.int(), dim=0, return_counts=True)[1])
    # rows with the same pattern = patches of one window; count patches per window
    assert sizes == [4] * 4 + [8] * 4 + [16]
    mask = window_mask(12, 12, 4, 1)  # strips 1 wide at the top/left, 3 at the bottom/right
    sizes = sorted(int(n) for n in torch.unique(mask.int(), dim=0, return_counts=True)[1])
    assert sizes == sorted([1, 3, 3, 9] + [4, 4, 12, 12] * 2 + [16] * 4)
