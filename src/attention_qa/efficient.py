"""Attention without the (n, m) matrix: online softmax, tiled attention, linear attention.

Three ideas, each from one paper:

- ``online_softmax`` follows Milakov & Gimelshein (2018), "Online normalizer calculation
  for softmax": one pass keeps a running max and a running sum of exponentials, rescaling
  the sum whenever the max grows, so the normaliser never needs the whole row at once.
- ``tiled_attention`` follows the outer loop of Dao et al. (2022), "FlashAttention: Fast and
  Memory-Efficient Exact Attention with IO-Awareness" (Algorithm 1): keys and values are read
  block by block, and a running max, a running denominator and a running weighted sum of
  values give the *exact* softmax attention. Only an (n, block) slice of scores exists at
  any time, so memory grows as O(n · block) instead of O(n · m). Queries are processed all at
  once here; FlashAttention also tiles them, which changes the speed, not the result.
- ``linear_attention`` follows Katharopoulos et al. (2020), "Transformers are RNNs: Fast
  Autoregressive Transformers with Linear Attention": replacing exp(q·k) with φ(q)·φ(k),
  φ(x) = elu(x) + 1, lets matrix products be regrouped, φ(Q) (φ(K)ᵀ V), so the cost is
  linear in the sequence length. It is a *different* model, not an approximation that
  converges to softmax attention.
- ``random_feature_attention`` follows Choromanski et al. (2021), "Rethinking Attention with
  Performers" (FAVOR+): positive random features φ(x) = exp(ωᵀx − |x|²/2) / √r, with
  ω ~ N(0, I_d), satisfy E[φ(q)ᵀφ(k)] = exp(qᵀk), so the same regrouping as linear attention
  gives an *unbiased estimate* of softmax attention's kernel whose error shrinks as the
  number of features r grows.

``peak_memory_bytes``, which measures the memory these functions use, lives in
``attention_qa.measure`` and is re-exported here for older imports.
"""

import math

import torch
import torch.nn.functional as F

from attention_qa.measure import peak_memory_bytes  # noqa: F401  (kept importable: docstring)
from attention_qa.validation import (
    check_qkv,
    require_generator,
    require_positive_int,
    require_tensor,
)

FEATURE_MAPS = ("elu", "identity")


def online_softmax(scores: torch.Tensor, block_size: int) -> torch.Tensor:
    """Softmax over the last dim, its normaliser computed block by block; equals torch.softmax.

    scores: (..., m). block_size: how many entries of a row are read at a time (any
    positive integer; the last block may be shorter).

    For each block the running max M and running sum L = Σ exp(x − M) are updated as
    M' = max(M, max(block)) and L' = L · exp(M − M') + Σ exp(block − M'); a second pass then
    writes exp(x − M) / L. A row of only -inf has no softmax and gives NaN, as torch.softmax.
    """
    require_tensor("scores", scores, min_ndim=1, floating=True)
    require_positive_int("block_size", block_size)
    m = scores.shape[-1]
    run_max = scores.new_full((*scores.shape[:-1], 1), -math.inf)  # (..., 1)
    run_sum = scores.new_zeros((*scores.shape[:-1], 1))  # (..., 1)
    for start in range(0, m, block_size):
        block = scores[..., start : start + block_size]  # (..., b)
        new_max = torch.maximum(run_max, block.amax(dim=-1, keepdim=True))  # (..., 1)
        # While a row has seen only -inf, shift by 0 instead: -inf − (-inf) would be NaN.
        shift = torch.where(torch.isinf(new_max), torch.zeros_like(new_max), new_max)
        run_sum = run_sum * torch.exp(run_max - shift) + torch.exp(block - shift).sum(
            dim=-1, keepdim=True
        )  # (..., 1)
        run_max = new_max
    return torch.exp(scores - run_max) / run_sum  # (..., m)


def _expand_mask_keys(mask: torch.Tensor, m: int) -> torch.Tensor:
    """View of ``mask`` whose last dim is m, so it can be sliced key block by key block."""
    if mask.ndim == 0:
        mask = mask.reshape(1)
    if mask.shape[-1] != m:
        # A size-1 key dim broadcasts; expand() is a view, so no (n, m) copy is made.
        mask = mask.expand(*mask.shape[:-1], m)
    return mask


def tiled_attention(q, k, v, mask=None, block_size: int = 64, scale=None) -> torch.Tensor:
    """Exact scaled dot-product attention over key/value blocks; returns the output only.

    q: (..., n, d_k), k: (..., m, d_k), v: (..., m, d_v); leading dims broadcast.
    mask: boolean, broadcastable to (..., n, m), True = may attend.
    block_size: keys per block, any positive integer (the last block may be shorter).
    scale: multiplies the scores; defaults to 1/√d_k.

    Same result as ``attention_qa.attention.scaled_dot_product_attention(...)[0]``, including
    a zero output for a query whose keys are all masked, but the largest score tensor held
    at any time is (..., n, block_size), never (..., n, m).
    """
    check_qkv(q, k, v, mask)
    require_positive_int("block_size", block_size)
    if scale is None:
        scale = 1.0 / math.sqrt(q.shape[-1])
    m = k.shape[-2]
    if mask is not None:
        mask = _expand_mask_keys(mask, m)
    batch = torch.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    if mask is not None:
        batch = torch.broadcast_shapes(batch, mask.shape[:-2])
    n, d_v = q.shape[-2], v.shape[-1]
    run_max = q.new_full((*batch, n, 1), -math.inf)  # (..., n, 1)
    run_den = q.new_zeros((*batch, n, 1))  # (..., n, 1)
    run_out = q.new_zeros((*batch, n, d_v))  # (..., n, d_v)
    for start in range(0, m, block_size):
        k_blk = k[..., start : start + block_size, :]  # (..., b, d_k)
        v_blk = v[..., start : start + block_size, :]  # (..., b, d_v)
        scores = (q @ k_blk.transpose(-2, -1)) * scale  # (..., n, b)
        if mask is not None:
            # -inf, not the dtype's min: a masked key then adds exactly 0 to the denominator,
            # so a fully masked row ends with run_den = 0 and is found without re-reading mask.
            scores = scores.masked_fill(~mask[..., start : start + block_size], -math.inf)
        new_max = torch.maximum(run_max, scores.amax(dim=-1, keepdim=True))  # (..., n, 1)
        # A row that has seen only masked keys keeps shift 0, so exp(-inf − 0) = 0, not NaN.
        shift = torch.where(torch.isinf(new_max), torch.zeros_like(new_max), new_max)
        p = torch.exp(scores - shift)  # (..., n, b), unnormalised weights
        # Earlier blocks were weighted against the old max; rescale them to the new one.
        correction = torch.exp(run_max - shift)  # (..., n, 1)
        run_den = run_den * correction + p.sum(dim=-1, keepdim=True)  # (..., n, 1)
        run_out = run_out * correction + p @ v_blk  # (..., n, d_v)
        run_max = new_max
    # A fully masked row has run_den = 0 and run_out = 0: divide by 1 to return zeros.
    safe_den = torch.where(run_den > 0, run_den, torch.ones_like(run_den))
    return run_out / safe_den  # (..., n, d_v)


def _feature(x: torch.Tensor, feature_map: str) -> torch.Tensor:
    if feature_map == "elu":
        # elu(x) + 1 is positive everywhere, so every weight and the denominator are > 0.
        return F.elu(x) + 1
    return x


def linear_attention(q, k, v, feature_map: str = "elu", causal: bool = False) -> torch.Tensor:
    """Linear attention of Katharopoulos et al. (2020); returns the output only.

    q: (..., n, d_k), k: (..., m, d_k), v: (..., m, d_v); leading dims broadcast.

    feature_map="elu": φ(x) = elu(x) + 1 and
        out_i = φ(q_i)ᵀ (Σ_j φ(k_j) v_jᵀ) / φ(q_i)ᵀ (Σ_j φ(k_j)),
    computed as φ(Q) (φ(K)ᵀ V), so the tensors are (..., n, d_v) or (..., d_k, d_v) at most,
    never (..., n, m).
    feature_map="identity": φ(x) = x and no normalisation, i.e. exactly (Q Kᵀ) V computed as
    Q (Kᵀ V). It is not attention (no softmax, weights can be negative); it is there to show
    that regrouping the product is exact and that this regrouping is the whole trick.

    causal=True: query i sees key j when j ≤ i + (m − n), the convention of
    ``attention_qa.masks.causal_mask``; the sums become prefix sums over keys (the RNN view:
    the state Σ_j φ(k_j) v_jᵀ is updated one key at a time). A query that sees no key gets a
    zero output. The prefix sums hold (..., m, d_k, d_v) values, fine for the book's sizes.
    """
    check_qkv(q, k, v, None)
    if feature_map not in FEATURE_MAPS:
        raise ValueError(f"feature_map must be one of {FEATURE_MAPS}, got {feature_map!r}")
    phi_q = _feature(q, feature_map)  # (..., n, d_k)
    phi_k = _feature(k, feature_map)  # (..., m, d_k)
    normalise = feature_map != "identity"
    if not causal:
        kv = phi_k.transpose(-2, -1) @ v  # (..., d_k, d_v)
        out = phi_q @ kv  # (..., n, d_v)
        if not normalise:
            return out
        z = phi_k.sum(dim=-2, keepdim=True)  # (..., 1, d_k)
        den = (phi_q * z).sum(dim=-1, keepdim=True)  # (..., n, 1)
        # den = 0 only when there are no keys (φ > 0); out is 0 then, and so is the result.
        return out / torch.where(den > 0, den, torch.ones_like(den))

    n, m = q.shape[-2], k.shape[-2]
    states = (phi_k.unsqueeze(-1) * v.unsqueeze(-2)).cumsum(dim=-3)  # (..., m, d_k, d_v)
    sums = phi_k.cumsum(dim=-2)  # (..., m, d_k)
    # Prepend the empty state (no key seen yet) so that a query before the first key reads it.
    states = torch.cat([torch.zeros_like(states[..., :1, :, :]), states], dim=-3)
    sums = torch.cat([torch.zeros_like(sums[..., :1, :]), sums], dim=-2)
    # Query i has seen keys 0 .. i + m − n, i.e. prefix number i + m − n + 1.
    seen = (torch.arange(n, device=q.device) + (m - n + 1)).clamp(0, m)  # (n,)
    out = (phi_q.unsqueeze(-2) @ states[..., seen, :, :]).squeeze(-2)  # (..., n, d_v)
    if not normalise:
        return out
    den = (phi_q * sums[..., seen, :]).sum(dim=-1, keepdim=True)  # (..., n, 1)
    # Only a query that has seen no key has den = 0 (φ > 0); its out is 0 too.
    return out / torch.where(den > 0, den, torch.ones_like(den))


def random_feature_attention(q, k, v, num_features: int, generator=None) -> torch.Tensor:
    """Performer's FAVOR+ estimate of softmax(q kᵀ / √d) v, in time linear in n and m.

    q: (..., n, d), k: (..., m, d), v: (..., m, d_v); leading dims broadcast. Non-causal.
    num_features: r, the number of random features; the error against exact attention falls
    roughly as 1/√r. generator: the ``torch.Generator`` the projection is drawn from (None:
    PyTorch's global random state); the same seed gives the same output.

    The r projection directions ω are *orthogonal random features* (the "+" of FAVOR+):
    blocks of d orthonormal directions, each rescaled to the length of a Gaussian vector,
    so every ω is still N(0, I_d) on its own but the estimate varies less than with
    independent draws. Every implicit weight is positive and each output row is a convex
    combination of the rows of v, as in softmax attention.
    """
    check_qkv(q, k, v, None)
    require_positive_int("num_features", num_features)
    require_generator("generator", generator)
    d = q.shape[-1]
    omega = _orthogonal_gaussian(num_features, d, generator).to(q.device, q.dtype)  # (r, d)
    # Split the 1/√d of the scores between the two sides: (q/d^¼)ᵀ(k/d^¼) = qᵀk/√d.
    q = q * d**-0.25  # (..., n, d)
    k = k * d**-0.25  # (..., m, d)
    q_exp = q @ omega.T - (q * q).sum(dim=-1, keepdim=True) / 2  # (..., n, r): ωᵀq − |q|²/2
    k_exp = k @ omega.T - (k * k).sum(dim=-1, keepdim=True) / 2  # (..., m, r)
    # Subtract a maximum before exp so nothing overflows. Per query row is allowed because a
    # factor common to a query's features cancels between numerator and denominator; for the
    # keys it must be one constant for all of them. The paper's 1/√r cancels the same way.
    phi_q = torch.exp(q_exp - q_exp.amax(dim=-1, keepdim=True))  # (..., n, r)
    phi_k = torch.exp(k_exp - k_exp.amax(dim=(-2, -1), keepdim=True))  # (..., m, r)
    kv = phi_k.transpose(-2, -1) @ v  # (..., r, d_v): Σ_j φ(k_j) v_jᵀ
    z = phi_k.sum(dim=-2).unsqueeze(-1)  # (..., r, 1): Σ_j φ(k_j)
    return (phi_q @ kv) / (phi_q @ z)  # (..., n, d_v)


def _orthogonal_gaussian(num_features: int, d: int, generator) -> torch.Tensor:
    """(num_features, d) rows drawn as N(0, I_d) each, orthogonal within blocks of d rows."""
    device = generator.device if generator is not None else torch.device("cpu")
    blocks = []
    for _ in range(-(-num_features // d)):
        gaussian = torch.randn(d, d, generator=generator, dtype=torch.float64, device=device)
        basis, r = torch.linalg.qr(gaussian)  # (d, d) orthonormal columns
        # Fixing the signs by R's diagonal makes the basis uniformly (Haar) distributed.
        blocks.append((basis * torch.sign(torch.diagonal(r))).T)  # (d, d) orthonormal rows
    directions = torch.cat(blocks)[:num_features]  # (r, d)
    lengths = torch.randn(
        num_features, d, generator=generator, dtype=torch.float64, device=device
    ).norm(dim=-1, keepdim=True)  # (r, 1): the length of a Gaussian vector, χ with d dof
    return directions * lengths  # (r, d)
