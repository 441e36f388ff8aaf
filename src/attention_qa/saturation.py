"""How saturated a softmax is: the figures behind "why divide by √d_k".

As the scores spread out, softmax tends to a one-hot vector and its Jacobian
``diag(p) − p pᵀ`` tends to zero, so almost no gradient flows back through it
(Vaswani et al., 2017, footnote 4 and section 3.2.1).

``scaled_scores`` makes the random scores the book measures, with each scaling;
``score_function_weights`` the weights of additive, dot and scaled-dot scores on the same
queries and keys (Bahdanau et al., 2015; Luong et al., 2015; Vaswani et al., 2017).
"""

import math

import torch

from attention_qa.attention import AdditiveAttention
from attention_qa.masks import causal_mask, padding_mask
from attention_qa.validation import require_positive_int, require_tensor


def softmax_jacobian_norm(p: torch.Tensor) -> torch.Tensor:
    """Frobenius norm of ``diag(p) − p pᵀ`` over the last dim, without building the matrix.

    ‖diag(p) − ppᵀ‖²_F = Σ pᵢ² − 2 Σ pᵢ³ + (Σ pᵢ²)².
    """
    sum_sq = (p * p).sum(dim=-1)
    sum_cube = (p * p * p).sum(dim=-1)
    return (sum_sq - 2 * sum_cube + sum_sq * sum_sq).clamp_min(0).sqrt()


def saturation_stats(scores: torch.Tensor) -> dict[str, torch.Tensor]:
    """Saturation figures of ``softmax(scores)`` over the last dim; leading dims are kept.

    Returns ``max_weight`` (1 for one-hot, 1/m for uniform), ``entropy`` in nats
    (0 for one-hot, log m for uniform) and ``jacobian_norm`` (0 for one-hot).
    """
    require_tensor("scores", scores, min_ndim=1, floating=True)
    p = torch.softmax(scores, dim=-1)  # (..., m)
    return {
        "max_weight": p.amax(dim=-1),
        "entropy": torch.special.entr(p).sum(dim=-1),
        "jacobian_norm": softmax_jacobian_norm(p),
    }


SCALINGS = ("none", "1/√d_k", "1/d_k")


def scale_for(scaling: str, d_k: int) -> float:
    """The factor the raw scores q·k are multiplied by."""
    factors = {"none": 1.0, "1/√d_k": 1 / math.sqrt(d_k), "1/d_k": 1 / d_k}
    if scaling not in factors:
        raise ValueError(f"scaling must be one of {list(factors)}, got {scaling!r}")
    return factors[scaling]


def scaled_scores(d_k: int, scaling: str, m: int, n: int = 256, seed: int = 0):
    """Scores of n random queries against m random keys, unit-variance components."""
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(n, d_k, generator=g)  # (n, d_k)
    k = torch.randn(m, d_k, generator=g)  # (m, d_k)
    return (q @ k.T) * scale_for(scaling, d_k)  # (n, m)


def score_function_weights(
    d_k: int, m: int, n: int = 256, d_hidden: int = 64, seed: int = 0
) -> dict[str, torch.Tensor]:
    """Attention weights, each (n, m), of the three score functions on the same q and k.

    q (n, d_k) and k (m, d_k) are standard normal, drawn from ``seed``; the additive
    module is initialised from ``seed`` too, without touching the global random state.
    """
    for name, value in (("d_k", d_k), ("m", m), ("n", n), ("d_hidden", d_hidden)):
        require_positive_int(name, value)
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(n, d_k, generator=g)  # (n, d_k)
    k = torch.randn(m, d_k, generator=g)  # (m, d_k)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        additive = AdditiveAttention(d_k, d_k, d_hidden)
    with torch.no_grad():
        _, additive_weights = additive(q, k, torch.zeros(m, 1))  # (n, m)
    dots = q @ k.T  # (n, m)
    return {
        "additive": additive_weights,
        "dot": torch.softmax(dots, dim=-1),
        "scaled dot": torch.softmax(dots / math.sqrt(d_k), dim=-1),
    }


PLAYGROUND_MASKS = ("none", "padding", "causal")


def valid_length(n: int) -> int:
    """With the padding mask, the last quarter of the n keys is padding."""
    return n - n // 4


def playground_weights(d_k: int, heads: int, mask: str, scaling: str, n: int, seed: int = 0):
    """Return ``(scores, weights)``, each (heads, n, n), masked scores at the dtype's minimum.

    Any positive d_k, heads and n work, not only the panel's values.
    """
    for name, value in (("d_k", d_k), ("heads", heads), ("n", n)):
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise ValueError(f"{name} must be a positive integer, got {value!r}")
    if mask not in PLAYGROUND_MASKS:
        raise ValueError(f"mask must be one of {PLAYGROUND_MASKS}, got {mask!r}")
    if mask == "padding" and n < 2:
        raise ValueError("a padding mask needs at least 2 tokens, one real and one padding")
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(heads, n, d_k, generator=g)  # (h, n, d_k)
    k = torch.randn(heads, n, d_k, generator=g)  # (h, m, d_k), m = n
    scores = (q @ k.transpose(-2, -1)) * scale_for(scaling, d_k)  # (h, n, m)
    scores = scores.masked_fill(~_playground_keep(mask, n), torch.finfo(scores.dtype).min)
    return scores, torch.softmax(scores, dim=-1)  # (h, n, m) each


def _playground_keep(mask: str, n: int) -> torch.Tensor:
    """The playground's mask, True = may attend: (n, n), or (1, n) for padding."""
    return {
        "none": torch.ones(n, n, dtype=torch.bool),
        "padding": padding_mask([valid_length(n)], n),  # (1, m): keys only
        "causal": causal_mask(n),  # (n, m)
    }[mask]


def uniform_playground_stats(mask: str, n: int) -> dict[str, float]:
    """Max weight and entropy of uniform attention under a playground mask, means over queries.

    Each query spreads its weight evenly over the keys it may see: with the causal mask,
    query i sees i + 1 keys, so the means are those of 1/(i + 1) and log(i + 1).
    """
    if mask not in PLAYGROUND_MASKS:
        raise ValueError(f"mask must be one of {PLAYGROUND_MASKS}, got {mask!r}")
    require_positive_int("n", n)
    zeros = torch.zeros(n, n).masked_fill(~_playground_keep(mask, n), torch.finfo().min)
    stats = saturation_stats(zeros)  # each (n,)
    return {"max_weight": stats["max_weight"].mean().item(),
            "entropy": stats["entropy"].mean().item()}


def playground_figures(scores: torch.Tensor, mask: str) -> dict[str, str]:
    """The playground's figures for ``scores`` (h, n, n) under ``mask``: each head's max
    weight, entropy and Jacobian norm (means over the queries), and what uniform weights
    would give; any number of heads and any length, not only the panel's values."""
    require_tensor("scores", scores, min_ndim=3)
    if scores.ndim != 3 or scores.shape[1] != scores.shape[2]:
        raise ValueError(f"scores has shape {tuple(scores.shape)} but must be (heads, n, n)")
    heads, n, _ = scores.shape
    stats = {name: value.mean(-1) for name, value in saturation_stats(scores).items()}  # (h,)
    figures = {}
    for i in range(heads):
        figures[f"head {i + 1}"] = (
            f"max weight {stats['max_weight'][i]:.2f}, entropy {stats['entropy'][i]:.2f} nats, "
            f"Jacobian norm {stats['jacobian_norm'][i]:.3f}"
        )
    uniform = uniform_playground_stats(mask, n)  # means over the queries, as for the heads
    figures["uniform would give"] = (
        f"max weight {uniform['max_weight']:.2f}, entropy {uniform['entropy']:.2f} nats"
    )
    return figures
