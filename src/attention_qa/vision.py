"""Attention over images and in diffusion (q37): windows over the patch grid, learned
queries, text cross-attention into a U-Net's feature maps, and rotary positions in two
and three axes.

* Swin's window attention (Liu et al., 2021, §3.2): the h × w patch grid is cut into
  M × M windows and each patch attends only inside its own window; every other layer the
  windows are shifted by ⌊M/2⌋ patches, computed as a cyclic shift of the grid
  (``torch.roll`` by −s) with a mask that keeps the pieces that wrapped round apart
  (Figure 4; ``attn_mask`` in microsoft/Swin-Transformer's ``models/swin_transformer.py``).
  ``window_attention`` computes it that way; ``window_mask`` is the same attention written
  as a mask over the whole grid, row by row. Eq. (1) and (2) give the costs.
* Learned queries (DETR's object queries, Carion et al., 2020, §3.2; BLIP-2's Q-Former
  queries, Li et al., 2023, §3.1): a fixed set of trained vectors that cross-attend to image
  features, ``learned_query_attention``.
* A diffusion U-Net's intermediate feature map φ(z), (B, C, h, w) with C = 320 to 1,280 in
  Stable Diffusion v1 (not the 4-channel latent z itself), read as h·w tokens whose
  projections cross-attend to text features (Rombach et al., 2022, §3.3;
  CompVis/stable-diffusion's ``SpatialTransformer``), and classifier-free guidance (Ho and
  Salimans, 2022).
* RoPE (q25) over two axes and, as Qwen2-VL's M-RoPE (Wang et al., 2024, §2.1), over
  (t, h, w).

Notation: H, W are pixels; h, w are the token grid (Swin's Eq. 1 and 2), so the number of
heads is ``num_heads``, never h.
"""

import math

import torch

from attention_qa.positional import _rope_theta, apply_rope, rotate_pairs
from attention_qa.validation import (
    require_nonnegative_int,
    require_positive_int,
    require_tensor,
    shape_str,
)

# --- Swin: window attention and shifted windows --------------------------------------------


def _check_window_inputs(q, k, v, grid, window, shift) -> tuple[int, int]:
    """q, k, v: (B, h·w, d) sharing B and h·w (q and k their d_k) on a valid grid and window;
    returns (h, w)."""
    h, w = _check_grid(grid, window, shift)
    for name, x in (("q", q), ("k", k), ("v", v)):
        require_tensor(name, x, floating=True)
        if x.ndim != 3 or x.shape[1] != h * w:
            raise ValueError(f"{name} has shape {shape_str(x.shape)} but must be (B, h·w, d) "
                             f"with h·w = {h}·{w} = {h * w}")
    if k.shape[:2] != q.shape[:2] or v.shape[:2] != q.shape[:2] or k.shape[2] != q.shape[2]:
        raise ValueError(f"q {shape_str(q.shape)}, k {shape_str(k.shape)} and v "
                         f"{shape_str(v.shape)} must share B and h·w, and q and k their d_k")
    return h, w


def window_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, grid: tuple[int, int],
                     window: int, shift: int = 0) -> torch.Tensor:
    """Attention inside M × M windows of an h × w patch grid, Swin's way.

    q, k: (B, h·w, d_k), v: (B, h·w, d_v), the patches in row-major order; grid = (h, w);
    window = M must divide h and w; shift = s with 0 ≤ s < M (Swin uses ⌊M/2⌋ in every
    second block). The grid is rolled by −s along both axes, cut into (h/M)(w/M) windows of
    M² patches, and each window attends within itself, under a mask that keeps apart the
    pieces the roll brought together; then the grid is rolled back. Returns (B, h·w, d_v).
    No relative position bias: this is the attention pattern only.
    """
    h, w = _check_window_inputs(q, k, v, grid, window, shift)
    B, M = q.shape[0], window
    windows = [_partition(_roll(x, h, w, -shift), h, w, M) for x in (q, k, v)]
    qw, kw, vw = windows  # (B, nW, M², d) each
    keep = swin_region_mask(h, w, M, shift)  # (nW, M², M²)
    scores = qw @ kw.transpose(-2, -1) / math.sqrt(q.shape[-1])  # (B, nW, M², M²)
    scores = scores.masked_fill(~keep, float("-inf"))
    out = scores.softmax(dim=-1) @ vw  # (B, nW, M², d_v)
    out = _unpartition(out, h, w, M)  # (B, h·w, d_v), rolled
    return _roll(out, h, w, shift).reshape(B, h * w, -1)  # (B, h·w, d_v)


def window_mask(h: int, w: int, window: int, shift: int = 0) -> torch.Tensor:
    """(h·w, h·w) boolean mask over the patch grid in row-major order: True where patch i may
    attend to patch j under (shifted) window attention.

    Two patches share a window when ⌊(row − s)/M⌋ and ⌊(col − s)/M⌋ agree: with s = 0 the
    regular M × M windows; with s > 0 windows whose borders moved s patches right and down,
    so the windows along every edge are smaller: strips s patches wide at the top and left,
    M − s wide at the bottom and right. With Swin's s = ⌊M/2⌋ and even M that is four
    corner windows, edge windows along all four sides and full M × M windows inside, e.g. on
    an 8 × 8 grid with M = 4: four 2 × 2 corners, four 2 × 4 edges and one 4 × 4 centre
    (Swin's Figure 2, right). Equal to ``window_attention``'s pattern (tested).
    """
    _check_grid((h, w), window, shift)
    rows = torch.div(torch.arange(h) - shift, window, rounding_mode="floor")  # (h,)
    cols = torch.div(torch.arange(w) - shift, window, rounding_mode="floor")  # (w,)
    group_r = rows.repeat_interleave(w)  # (h·w,) row-major
    group_c = cols.repeat(h)  # (h·w,)
    return (group_r[:, None] == group_r[None, :]) & (group_c[:, None] == group_c[None, :])


def swin_region_mask(h: int, w: int, window: int, shift: int) -> torch.Tensor:
    """(nW, M², M²) boolean mask, True where Swin lets two patches of one window (after the
    cyclic shift) attend: the patches came from the same region of the grid.

    Built as ``attn_mask`` is in microsoft/Swin-Transformer: label the rolled grid's regions
    by the slices (0, h − M), (h − M, h − s), (h − s, h) of each axis, cut the labels into
    windows, and compare. Swin adds −100 where this is False; here it is a boolean mask.
    With shift 0 every entry is True.
    """
    _check_grid((h, w), window, shift)
    M = window
    labels = torch.zeros(h, w, dtype=torch.long)
    if shift:
        cuts = (slice(0, -M), slice(-M, -shift), slice(-shift, None))
        for i, rows in enumerate(cuts):
            for j, cols in enumerate(cuts):
                labels[rows, cols] = 3 * i + j
    windows = _partition(labels.reshape(1, h * w, 1), h, w, M)[0, :, :, 0]  # (nW, M²)
    return windows[:, :, None] == windows[:, None, :]  # (nW, M², M²)


def msa_flops(h: int, w: int, C: int) -> int:
    """Swin's Eq. (1), global multi-head self-attention over h × w patches of width C:
    4hwC² (the Q, K, V and output projections) + 2(hw)²C (QKᵀ and the weighted sum),
    counted as multiply-adds, softmax omitted."""
    for name, value in (("h", h), ("w", w), ("C", C)):
        require_positive_int(name, value)
    return 4 * h * w * C * C + 2 * (h * w) ** 2 * C


def window_msa_flops(h: int, w: int, C: int, window: int) -> int:
    """Swin's Eq. (2), window attention with M × M windows: 4hwC² + 2M²hwC, linear in hw."""
    for name, value in (("h", h), ("w", w), ("C", C), ("window", window)):
        require_positive_int(name, value)
    return 4 * h * w * C * C + 2 * window**2 * h * w * C


# --- learned queries (DETR, Q-Former) and text cross-attention in diffusion -----------------


def _check_learned_query_inputs(queries, memory) -> None:
    """queries (N_q, d) and memory (B, m, d), floating, of one width d."""
    require_tensor("queries", queries, floating=True)
    require_tensor("memory", memory, floating=True)
    if queries.ndim != 2:
        raise ValueError(f"queries has shape {shape_str(queries.shape)} but must be (N_q, d)")
    if memory.ndim != 3 or memory.shape[-1] != queries.shape[-1]:
        raise ValueError(f"memory has shape {shape_str(memory.shape)} but must be (B, m, d) "
                         f"with d = {queries.shape[-1]}, the queries' width")


def learned_query_attention(queries: torch.Tensor, memory: torch.Tensor):
    """A fixed set of learned queries cross-attending to image features.

    queries: (N_q, d), the same for every image (DETR's object queries, BLIP-2's query
    tokens); memory: (B, m, d) image features as keys and values. Returns (output
    (B, N_q, d), weights (B, N_q, m)). One head, no projections: the pattern only.
    """
    _check_learned_query_inputs(queries, memory)
    scores = queries @ memory.transpose(-2, -1) / math.sqrt(queries.shape[-1])  # (B, N_q, m)
    weights = scores.softmax(dim=-1)
    return weights @ memory, weights  # (B, N_q, d), (B, N_q, m)


def latent_to_tokens(latent: torch.Tensor) -> torch.Tensor:
    """(B, C, h, w) → (B, h·w, C): one token per pixel of a feature map, row by row ('b c h w
    -> b (h w) c' in Stable Diffusion's SpatialTransformer, applied to the U-Net's features)."""
    require_tensor("latent", latent)
    if latent.ndim != 4:
        raise ValueError(f"latent has shape {shape_str(latent.shape)} but must be (B, C, h, w)")
    return latent.flatten(2).transpose(1, 2)  # (B, h·w, C)


def tokens_to_latent(tokens: torch.Tensor, h: int, w: int) -> torch.Tensor:
    """(B, h·w, C) → (B, C, h, w), the inverse of ``latent_to_tokens``."""
    require_tensor("tokens", tokens)
    require_positive_int("h", h)
    require_positive_int("w", w)
    if tokens.ndim != 3 or tokens.shape[1] != h * w:
        raise ValueError(f"tokens has shape {shape_str(tokens.shape)} but must be (B, h·w, C) "
                         f"with h·w = {h}·{w} = {h * w}")
    return tokens.transpose(1, 2).reshape(tokens.shape[0], -1, h, w)  # (B, C, h, w)


def _check_text_cross_inputs(latent, text, w_q, w_k, w_v, num_heads) -> None:
    """latent (B, C, h, w), text (B, L, d_text), w_q (C, d), w_k and w_v (d_text, d), with
    num_heads dividing d."""
    require_tensor("latent", latent, floating=True)
    require_tensor("text", text, floating=True)
    if latent.ndim != 4:
        raise ValueError(f"latent has shape {shape_str(latent.shape)} but must be (B, C, h, w)")
    if text.ndim != 3 or text.shape[0] != latent.shape[0]:
        raise ValueError(f"text has shape {shape_str(text.shape)} but must be (B, L, d_text) "
                         f"with B = {latent.shape[0]}")
    C, d_text = latent.shape[1], text.shape[-1]
    require_positive_int("num_heads", num_heads)
    if w_q.ndim != 2 or w_q.shape[0] != C:
        raise ValueError(f"w_q has shape {shape_str(w_q.shape)} but must be (C, d) with C = {C}")
    d = w_q.shape[1]
    for name, m in (("w_k", w_k), ("w_v", w_v)):
        if m.shape != (d_text, d):
            raise ValueError(f"{name} has shape {shape_str(m.shape)} but must be (d_text, d) "
                             f"= ({d_text}, {d})")
    if d % num_heads:
        raise ValueError(f"num_heads={num_heads} must divide d={d}")


def text_cross_attention(latent: torch.Tensor, text: torch.Tensor, w_q: torch.Tensor,
                         w_k: torch.Tensor, w_v: torch.Tensor, num_heads: int = 1):
    """A diffusion U-Net's cross-attention: the pixels of a feature map attend to the text.

    latent: (B, C, h, w), the U-Net's intermediate feature map at one resolution (320, 640
    or 1,280 channels in Stable Diffusion v1, not the 4-channel latent); text: (B, L,
    d_text), e.g. CLIP's (B, 77, 768) for Stable Diffusion v1; w_q: (C, d), w_k and w_v:
    (d_text, d), d divisible by num_heads. Queries are projections of the h·w feature
    tokens, keys and values of the L text tokens. Returns (output (B, d, h, w), weights
    (B, num_heads, h·w, L)); no output projection.
    """
    _check_text_cross_inputs(latent, text, w_q, w_k, w_v, num_heads)
    (h, w), d = latent.shape[2:], w_q.shape[1]
    q = latent_to_tokens(latent) @ w_q  # (B, h·w, d)
    k, v = text @ w_k, text @ w_v  # (B, L, d) each
    q, k, v = (x.unflatten(-1, (num_heads, -1)).transpose(1, 2) for x in (q, k, v))
    scores = q @ k.transpose(-2, -1) / math.sqrt(d // num_heads)  # (B, num_heads, h·w, L)
    weights = scores.softmax(dim=-1)
    out = (weights @ v).transpose(1, 2).flatten(2)  # (B, h·w, d)
    return tokens_to_latent(out, h, w), weights  # (B, d, h, w), (B, num_heads, h·w, L)


def classifier_free_guidance(eps_uncond: torch.Tensor, eps_cond: torch.Tensor,
                             scale: float) -> torch.Tensor:
    """ε_uncond + scale·(ε_cond − ε_uncond), as Stable Diffusion's sampler writes it (its
    default scale is 7.5). Ho and Salimans's (1 + w)·ε_cond − w·ε_uncond is the case
    scale = 1 + w; scale = 1 is the conditional model alone."""
    if eps_uncond.shape != eps_cond.shape:
        raise ValueError(f"eps_uncond {shape_str(eps_uncond.shape)} and eps_cond "
                         f"{shape_str(eps_cond.shape)} must have the same shape")
    if isinstance(scale, bool) or not isinstance(scale, (int, float)) or not math.isfinite(scale):
        raise ValueError(f"scale must be a finite number, got {scale!r}")
    return eps_uncond + scale * (eps_cond - eps_uncond)


# --- rotary positions over two and three axes ----------------------------------------------


def rope_2d(x: torch.Tensor, rows, cols, base: float = 10000.0) -> torch.Tensor:
    """2-D RoPE: the first half of x's features rotated by the row, the second by the column.

    x: (..., n, d) with d divisible by 4; rows, cols: (n,) integer positions. Each half is
    q25's ``apply_rope`` with its own d/2 features, so q·k after rotation depends on the
    positions only through (Δrow, Δcol). One common layout; models differ in how they split
    the features between the axes.
    """
    require_tensor("x", x, min_ndim=2, floating=True)
    d = x.shape[-1]
    if d % 4:
        raise ValueError(f"x has shape {shape_str(x.shape)} but its last dim d={d} must be "
                         f"divisible by 4: two axes, each rotating pairs")
    first, second = x[..., : d // 2], x[..., d // 2 :]
    return torch.cat([apply_rope(first, rows, base), apply_rope(second, cols, base)], dim=-1)


def _check_mrope_inputs(x, positions, sections) -> tuple[tuple[int, ...], torch.Tensor]:
    """x (..., n, d) with d even; three section sizes summing to d/2; (3, n) integer
    positions. Returns the sections as a tuple and the positions as a tensor."""
    require_tensor("x", x, min_ndim=2, floating=True)
    n, d = x.shape[-2], x.shape[-1]
    if d % 2:
        raise ValueError(f"x has shape {shape_str(x.shape)} but its last dim d={d} must be even")
    sections = tuple(sections)
    if (len(sections) != 3 or any(isinstance(s, bool) or not isinstance(s, int) or s < 0
                                  for s in sections) or sum(sections) != d // 2):
        raise ValueError(f"sections must be three non-negative integers summing to d/2 = "
                         f"{d // 2}, got {sections}")
    positions = torch.as_tensor(positions)
    if positions.is_floating_point() or positions.shape != (3, n):
        raise ValueError(f"positions must be integers of shape (3, {n}), got dtype "
                         f"{positions.dtype} and shape {shape_str(positions.shape)}")
    return sections, positions


def mrope(x: torch.Tensor, positions, sections, base: float = 10000.0) -> torch.Tensor:
    """M-RoPE: RoPE whose feature pairs are split into (t, h, w) sections.

    x: (..., n, d), d even; positions: (3, n) integers, the (t, h, w) position of each token;
    sections: three counts of pairs summing to d/2 (Qwen2-VL's ``mrope_section`` is
    [16, 24, 24] for its 128-wide heads). Pair i turns at θᵢ = base^(−2i/d), as in 1-D RoPE,
    by the angle t·θᵢ for the first sections[0] pairs, h·θᵢ for the next sections[1] and
    w·θᵢ for the rest. Pairs are adjacent features, the book's convention (Qwen2-VL's code
    pairs feature i with i + d/2; a permutation of the features). With t = h = w = p this is
    1-D RoPE at position p.
    """
    sections, positions = _check_mrope_inputs(x, positions, sections)
    d = x.shape[-1]
    theta = _rope_theta(d, base)  # (d/2,), float64, as in 1-D RoPE
    axis = torch.repeat_interleave(torch.arange(3), torch.tensor(sections))  # (d/2,)
    pos = positions.to(torch.float64)[axis].T  # (n, d/2): each pair's own coordinate
    return rotate_pairs(x, pos * theta)  # (..., n, d)


def mrope_positions(text_before: int, grid_h: int, grid_w: int, text_after: int) -> torch.Tensor:
    """(3, n) M-RoPE positions of text, one image of grid_h × grid_w tokens, then text.

    Text tokens get t = h = w = their index; the image's tokens share one t (the index where
    the image starts) and take h and w from their row and column, offset by that start; the
    text after the image resumes one past the largest position used (Qwen2-VL, §2.1), i.e.
    at text_before + max(grid_h, grid_w). grid_h, grid_w are the grid the LLM sees, after
    Qwen2-VL's 2 × 2 merge (``llm_grid_h`` in Transformers' ``get_rope_index``). n =
    text_before + grid_h·grid_w + text_after.
    """
    require_nonnegative_int("text_before", text_before)
    require_positive_int("grid_h", grid_h)
    require_positive_int("grid_w", grid_w)
    require_nonnegative_int("text_after", text_after)
    before = torch.arange(text_before).expand(3, -1)  # (3, text_before)
    start = text_before
    rows = torch.arange(grid_h).repeat_interleave(grid_w)  # (grid_h·grid_w,)
    cols = torch.arange(grid_w).repeat(grid_h)
    image = torch.stack([torch.zeros_like(rows), rows, cols]) + start  # (3, grid_h·grid_w)
    resume = int(image.max()) + 1
    after = torch.arange(resume, resume + text_after).expand(3, -1)  # (3, text_after)
    return torch.cat([before, image, after], dim=1)  # (3, n)


# --- helpers --------------------------------------------------------------------------------


def _check_grid(grid, window, shift) -> tuple[int, int]:
    if not isinstance(grid, (tuple, list)) or len(grid) != 2:
        raise ValueError(f"grid must be a pair (h, w), got {grid!r}")
    h, w = grid
    require_positive_int("h", h)
    require_positive_int("w", w)
    require_positive_int("window", window)
    require_nonnegative_int("shift", shift)
    if h % window or w % window:
        raise ValueError(f"window={window} must divide the grid's h={h} and w={w} (Swin pads "
                         f"the feature map to a multiple of the window first)")
    if shift >= window:
        raise ValueError(f"shift={shift} must be smaller than window={window}")
    return h, w


def _roll(x: torch.Tensor, h: int, w: int, by: int) -> torch.Tensor:
    """Roll a (B, h·w, d) grid of tokens by ``by`` patches along rows and columns."""
    if by == 0:
        return x
    grid = x.reshape(x.shape[0], h, w, -1)  # (B, h, w, d)
    return torch.roll(grid, shifts=(by, by), dims=(1, 2)).reshape(x.shape)


def _partition(x: torch.Tensor, h: int, w: int, M: int) -> torch.Tensor:
    """(B, h·w, d) row-major → (B, nW, M², d): Swin's window_partition."""
    B = x.shape[0]
    x = x.reshape(B, h // M, M, w // M, M, -1)  # (B, h/M, M, w/M, M, d)
    return x.permute(0, 1, 3, 2, 4, 5).reshape(B, (h // M) * (w // M), M * M, -1)


def _unpartition(x: torch.Tensor, h: int, w: int, M: int) -> torch.Tensor:
    """(B, nW, M², d) → (B, h·w, d): Swin's window_reverse."""
    B = x.shape[0]
    x = x.reshape(B, h // M, w // M, M, M, -1).permute(0, 1, 3, 2, 4, 5)  # (B, h/M, M, w/M, M, d)
    return x.reshape(B, h * w, -1)


# --- images into a language model (q45): gated cross-attention, token counts, Q-Former masks -


def _check_gated_inputs(x, media, w_q, w_k, w_v, w_o, num_heads) -> None:
    """x (..., n, d_model), media (..., m, d_media) with the same leading dims, w_q
    (d_model, d), w_k and w_v (d_media, d), w_o (d, d_model), num_heads dividing d."""
    require_tensor("x", x, min_ndim=2, floating=True)
    require_tensor("media", media, min_ndim=2, floating=True)
    if media.shape[:-2] != x.shape[:-2]:
        raise ValueError(f"media has shape {shape_str(media.shape)} but must be (..., m, "
                         f"d_media) with the leading dims {tuple(x.shape[:-2])} of x")
    d_model, d_media = x.shape[-1], media.shape[-1]
    for name, m in (("w_q", w_q), ("w_k", w_k), ("w_v", w_v), ("w_o", w_o)):
        require_tensor(name, m, floating=True)
    require_positive_int("num_heads", num_heads)
    if w_q.ndim != 2 or w_q.shape[0] != d_model:
        raise ValueError(f"w_q has shape {shape_str(w_q.shape)} but must be (d_model, d) "
                         f"with d_model = {d_model}")
    d = w_q.shape[1]
    for name, m in (("w_k", w_k), ("w_v", w_v)):
        if m.shape != (d_media, d):
            raise ValueError(f"{name} has shape {shape_str(m.shape)} but must be (d_media, d) "
                             f"= ({d_media}, {d})")
    if w_o.shape != (d, d_model):
        raise ValueError(f"w_o has shape {shape_str(w_o.shape)} but must be (d, d_model) "
                         f"= ({d}, {d_model})")
    if d % num_heads:
        raise ValueError(f"num_heads={num_heads} must divide d={d}")


def gated_cross_attention(x: torch.Tensor, media: torch.Tensor, w_q: torch.Tensor,
                          w_k: torch.Tensor, w_v: torch.Tensor, w_o: torch.Tensor, alpha,
                          num_heads: int = 1) -> torch.Tensor:
    """Flamingo's tanh-gated cross-attention: x + tanh(α) · MHA(x W_q, media W_k, media W_v) W_o.

    x: (..., n, d_model), the language model's hidden states (queries); media: (..., m,
    d_media), the visual tokens (keys and values; Flamingo's Perceiver Resampler gives 64);
    w_q: (d_model, d), w_k and w_v: (d_media, d), w_o: (d, d_model); alpha a number or a
    tensor that broadcasts against x (one gate per layer in Alayrac et al., 2022, §2.2 and
    Figure 4; IDEFICS also allows one per channel). α is initialised at 0, where
    tanh(α) = 0 and the layer returns x exactly: the frozen language model starts unchanged.
    No mask (every text token sees every visual token) and no feed-forward sub-layer.
    """
    _check_gated_inputs(x, media, w_q, w_k, w_v, w_o, num_heads)
    q, k, v = x @ w_q, media @ w_k, media @ w_v  # (..., n, d), (..., m, d), (..., m, d)
    q, k, v = (t.unflatten(-1, (num_heads, -1)).transpose(-3, -2) for t in (q, k, v))
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])  # (..., num_heads, n, m)
    out = (scores.softmax(dim=-1) @ v).transpose(-3, -2).flatten(-2)  # (..., n, d)
    gate = torch.tanh(torch.as_tensor(alpha, dtype=x.dtype))
    return x + gate * (out @ w_o)  # (..., n, d_model)


def image_token_count(height: int, width: int, patch_size: int = 14, merge: int = 1) -> int:
    """How many tokens an image of height × width pixels becomes: (height / patch) ·
    (width / patch) patches, then merge × merge neighbours fused into one token.

    LLaVA-1.5: 336 × 336 pixels, patches of 14 → 24 · 24 = 576 tokens, merge 1. Qwen2-VL:
    patches of 14 and a 2 × 2 merge (``spatial_merge_size`` 2), so a 224 × 224 image gives
    64 tokens (66 with its vision-start and vision-end tokens, Wang et al., 2024, §2.1).
    Sizes must divide: a model resizes or pads the image first (Qwen2-VL's ``smart_resize``
    rounds each side to a multiple of patch · merge = 28).
    """
    for name, value in (("height", height), ("width", width), ("patch_size", patch_size),
                        ("merge", merge)):
        require_positive_int(name, value)
    for name, value in (("height", height), ("width", width)):
        if value % patch_size:
            raise ValueError(f"{name}={value} is not a multiple of patch_size={patch_size}: "
                             "resize or pad the image first")
        if (value // patch_size) % merge:
            raise ValueError(f"{name}={value} gives {value // patch_size} patches, not a "
                             f"multiple of merge={merge}: make it a multiple of "
                             f"patch_size · merge = {patch_size * merge}")
    return (height // patch_size) * (width // patch_size) // (merge * merge)


QFORMER_OBJECTIVES = ("itc", "itm", "itg")


def qformer_mask(num_queries: int, num_text: int, objective: str) -> torch.Tensor:
    """The Q-Former's self-attention mask in BLIP-2's first stage (Li et al., 2023, §3.2 and
    Figure 2, right): a (N_q + L, N_q + L) boolean matrix over the learned queries then the
    text tokens, True where a row may attend to a column.

    * ``"itc"`` (image–text contrastive): uni-modal, queries see queries and text sees text;
    * ``"itm"`` (image–text matching): bi-directional, everything sees everything;
    * ``"itg"`` (image-grounded text generation): multimodal causal, queries see all queries
      and no text, a text token sees all queries and the text up to itself.
    """
    require_positive_int("num_queries", num_queries)
    require_positive_int("num_text", num_text)
    if objective not in QFORMER_OBJECTIVES:
        raise ValueError(f"objective must be one of {QFORMER_OBJECTIVES}, got {objective!r}")
    N = num_queries + num_text
    is_query = torch.arange(N) < num_queries  # (N,)
    if objective == "itm":
        return torch.ones(N, N, dtype=torch.bool)
    same = is_query[:, None] == is_query[None, :]  # (N, N)
    if objective == "itc":
        return same
    causal = torch.ones(N, N, dtype=torch.bool).tril()
    return (is_query[None, :] & ~is_query[:, None]) | (same & (causal | is_query[:, None]))
