"""The strided sparse pattern of the Sparse Transformer, as a boolean mask.

Child et al. (2019), "Generating Long Sequences with Sparse Transformers", section 4.1, split
attention into a local part (the previous ``stride`` positions) and a strided part (every
``stride``-th position before the query), so that any position reaches any other in two
steps while each query sees about ``2 · n / stride`` keys instead of n. Here both parts are
in one mask, True = may attend (the convention of ``attention_qa.masks``); with
``causal=False`` the pattern is mirrored so that queries also see later keys.

``sparse_vs_full`` compares q20's three sparse patterns (sliding window, strided, global +
local; Beltagy et al., 2020) with full attention on the same queries, keys and values.
"""

import torch

from attention_qa.attention import scaled_dot_product_attention
from attention_qa.masks import global_local_mask, sliding_window_mask
from attention_qa.validation import require_positive_int


def strided_mask(n: int, stride: int, causal: bool = False) -> torch.Tensor:
    """Bool ``(n, n)``: query i sees key j when ``|i − j| < stride`` or ``stride`` divides i − j.

    With ``causal=True`` only keys ``j ≤ i`` are kept. ``stride=1`` allows every key.
    """
    require_positive_int("n", n)
    require_positive_int("stride", stride)
    if not isinstance(causal, bool):
        raise ValueError(f"causal must be True or False, got {causal!r}")
    i = torch.arange(n).unsqueeze(1)  # (n, 1)
    j = torch.arange(n).unsqueeze(0)  # (1, n)
    offset = i - j  # (n, n), positive when the key lies before the query
    allowed = (offset.abs() < stride) | (offset % stride == 0)  # (n, n)
    if causal:
        allowed = allowed & (offset >= 0)
    return allowed


SPARSE_PATTERNS = ("sliding window", "strided", "global + local")
SPARSE_INPUTS = ("local", "random")


def pattern_mask(pattern: str, n: int, window: int) -> torch.Tensor:
    """Bool (n, n) for one pattern; every pattern keeps the band |i − j| ≤ window."""
    if pattern == "sliding window":
        return sliding_window_mask(n, window)
    if pattern == "strided":
        # stride = window + 1: the same band, plus every (window + 1)-th key beyond it.
        return strided_mask(n, window + 1)
    if pattern == "global + local":
        return global_local_mask(n, window, [0])  # position 0 plays [CLS]
    raise ValueError(f"pattern must be one of {SPARSE_PATTERNS}, got {pattern!r}")


def make_qkv(inputs: str, n: int, d_k: int = 16, seed: int = 0):
    """Standard-normal k and v; q random, or ("local") 1.5 × (k_{i−1} + k_i + k_{i+1}) + noise."""
    if inputs not in SPARSE_INPUTS:
        raise ValueError(f"inputs must be one of {SPARSE_INPUTS}, got {inputs!r}")
    g = torch.Generator().manual_seed(seed)
    q, k, v = (torch.randn(n, d_k, generator=g) for _ in range(3))  # each (n, d_k)
    if inputs == "local":
        padded = torch.cat([torch.zeros(1, d_k), k, torch.zeros(1, d_k)])  # (n + 2, d_k)
        q = 1.5 * (padded[:-2] + padded[1:-1] + padded[2:]) + 0.5 * q  # (n, d_k)
    return q, k, v


def sparse_vs_full(pattern: str, n: int, window: int, inputs: str = "local") -> dict:
    """Mask, sparse weights, and each query's output error against full attention.

    The error of query i is the RMS over the d_k components of (sparse − full) output; the
    values have unit variance, so 1 means an error as large as a value itself.
    """
    # float64: the panel draws these weights, and its pictures must not depend on the
    # CPU's summation order (thread count, vector width)
    q, k, v = (t.double() for t in make_qkv(inputs, n))  # (n, d_k) each
    mask = pattern_mask(pattern, n, window)  # (n, n)
    full_out, full_w = scaled_dot_product_attention(q, k, v)  # (n, d_k), (n, n)
    sparse_out, sparse_w = scaled_dot_product_attention(q, k, v, mask)  # (n, d_k), (n, n)
    error = (sparse_out - full_out).pow(2).mean(dim=-1).sqrt()  # (n,)
    return {
        "mask": mask,
        "weights": sparse_w,
        "error": error,
        "kept": mask.float().mean().item(),
        # How much of full attention's weight falls on the keys the pattern keeps.
        "mass": (full_w * mask).sum(-1).mean().item(),
        "n": n,
    }
