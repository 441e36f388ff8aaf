"""Scaled dot-product attention, written out so that every step can be read.

Follows Vaswani et al. (2017), "Attention Is All You Need", equation (1):
``softmax(Q Kᵀ / √d_k) V``. The mask convention is PyTorch's
``torch.nn.functional.scaled_dot_product_attention``: a boolean mask where
**True means "may attend"**.

Older scoring rules sit beside it: ``AdditiveAttention`` follows Bahdanau, Cho and
Bengio (2015), "Neural Machine Translation by Jointly Learning to Align and Translate",
``GeneralAttention`` the bilinear score of Luong, Pham and Manning (2015), "Effective
Approaches to Attention-based Neural Machine Translation", and ``attention_pooling`` is
the Nadaraya (1964) and Watson (1964) kernel regression that attention generalises.
"""

import math
import numbers

import torch
from torch import nn

from attention_qa.validation import check_qkv, require_positive_int, require_tensor, shape_str


def scaled_dot_product_attention(q, k, v, mask=None, scale=None):
    """Return ``(output, weights)`` of scaled dot-product attention.

    q: (..., n, d_k), k: (..., m, d_k), v: (..., m, d_v); leading dims broadcast.
    mask: boolean, broadcastable to (..., n, m), True = may attend.
    scale: multiplies the scores; defaults to 1/√d_k.

    A query whose keys are all masked gets zero weights and a zero output.
    """
    check_qkv(q, k, v, mask)
    if scale is None:
        scale = 1.0 / math.sqrt(q.shape[-1])
    scores = (q @ k.transpose(-2, -1)) * scale  # (..., n, m)
    weights = masked_softmax(scores, mask, inplace=True)  # (..., n, m); scores is ours
    output = weights @ v  # (..., n, d_v)
    return output, weights


def masked_softmax(scores, mask=None, *, inplace: bool = False):
    """Softmax over the keys (last axis) that leaves zero weights on fully masked rows.

    scores: (..., n, m); mask: boolean, broadcastable to it, True = may attend.
    ``inplace=True`` writes the mask into ``scores`` instead of a copy, so that only one
    (..., n, m) score tensor is alive at a time (for a caller that owns ``scores``).
    """
    if mask is not None:
        # The most negative finite value of the dtype: -inf would turn a fully masked
        # row into NaN, and -1e9 would overflow float16.
        fill = torch.finfo(scores.dtype).min
        if inplace and torch.broadcast_shapes(mask.shape, scores.shape) == scores.shape:
            scores = scores.masked_fill_(~mask, fill)
        else:
            scores = scores.masked_fill(~mask, fill)
    weights = torch.softmax(scores, dim=-1)  # (..., n, m)
    if mask is not None:
        # A fully masked row would otherwise be uniform over forbidden keys.
        weights = weights.masked_fill(~mask.any(dim=-1, keepdim=True), 0.0)
    return weights


class AdditiveAttention(nn.Module):
    """Additive (Bahdanau) attention: ``score(q, k) = w_vᵀ tanh(W_q q + W_k k)``.

    Bahdanau et al. (2015), section 3.1 and appendix A.1.2. The projections carry no
    bias, as in the paper's score: ``W_q.weight`` is (d_hidden, d_query), ``W_k.weight``
    is (d_hidden, d_key) and ``w_v.weight`` is (1, d_hidden), the row vector w_vᵀ.
    Because the query and key are projected separately, d_query and d_key need not be
    equal, unlike in a dot product.

    ``forward(q, k, v, mask=None)`` follows ``scaled_dot_product_attention``:
    q: (..., n, d_query), k: (..., m, d_key), v: (..., m, d_v), leading dims broadcast;
    mask: boolean, broadcastable to (..., n, m), True = may attend. It returns
    ``(output (..., n, d_v), weights (..., n, m))``; a query whose keys are all masked
    gets zero weights and a zero output.
    """

    def __init__(self, d_query: int, d_key: int, d_hidden: int):
        super().__init__()
        self.d_query = require_positive_int("d_query", d_query)
        self.d_key = require_positive_int("d_key", d_key)
        self.d_hidden = require_positive_int("d_hidden", d_hidden)
        self.W_q = nn.Linear(d_query, d_hidden, bias=False)
        self.W_k = nn.Linear(d_key, d_hidden, bias=False)
        self.w_v = nn.Linear(d_hidden, 1, bias=False)

    def forward(self, q, k, v, mask=None):
        _check_score_inputs(self.d_query, self.d_key, self.W_q.weight.dtype, q, k, v, mask)
        q_h = self.W_q(q)  # (..., n, d_hidden)
        k_h = self.W_k(k)  # (..., m, d_hidden)
        # Every query meets every key: broadcast to one hidden vector per (query, key) pair.
        features = torch.tanh(q_h.unsqueeze(-2) + k_h.unsqueeze(-3))  # (..., n, m, d_hidden)
        scores = self.w_v(features).squeeze(-1)  # (..., n, m)
        weights = masked_softmax(scores, mask)  # (..., n, m)
        output = weights @ v  # (..., n, d_v)
        return output, weights


class GeneralAttention(nn.Module):
    """Luong's "general" (bilinear) score: ``score(q, k) = qᵀ W k``, with no scaling.

    Luong, Pham and Manning (2015), "Effective Approaches to Attention-based Neural Machine
    Translation", section 3.1. ``W = nn.Linear(d_key, d_query, bias=False)``, so
    ``W.weight`` is the (d_query, d_key) matrix of the score and ``W(k)`` maps each key into
    the query's space. With d_query = d_key and W the identity it is the plain dot product.

    ``forward(q, k, v, mask=None)`` follows ``AdditiveAttention``:
    q: (..., n, d_query), k: (..., m, d_key), v: (..., m, d_v), leading dims broadcast;
    mask: boolean, broadcastable to (..., n, m), True = may attend. It returns
    ``(output (..., n, d_v), weights (..., n, m))``; a query whose keys are all masked
    gets zero weights and a zero output.
    """

    def __init__(self, d_query: int, d_key: int):
        super().__init__()
        self.d_query = require_positive_int("d_query", d_query)
        self.d_key = require_positive_int("d_key", d_key)
        self.W = nn.Linear(d_key, d_query, bias=False)

    def forward(self, q, k, v, mask=None):
        _check_score_inputs(self.d_query, self.d_key, self.W.weight.dtype, q, k, v, mask)
        k_in_q_space = self.W(k)  # (..., m, d_query): W k_j for every key
        scores = q @ k_in_q_space.transpose(-2, -1)  # (..., n, m): q_iᵀ W k_j
        weights = masked_softmax(scores, mask, inplace=True)  # (..., n, m); scores is ours
        output = weights @ v  # (..., n, d_v)
        return output, weights


def _check_score_inputs(d_query: int, d_key: int, weight_dtype, q, k, v, mask) -> None:
    """The checks of a score module whose query and key widths may differ."""
    check_qkv(q, k, v, mask, same_d_k=False)
    if q.shape[-1] != d_query:
        raise ValueError(
            f"q has shape {shape_str(q.shape)} but this module has d_query={d_query}; "
            f"q must be (..., n, {d_query})"
        )
    if k.shape[-1] != d_key:
        raise ValueError(
            f"k has shape {shape_str(k.shape)} but this module has d_key={d_key}; "
            f"k must be (..., m, {d_key})"
        )
    if q.dtype != weight_dtype:
        raise TypeError(
            f"q, k and v have dtype {q.dtype} but the module's weights have dtype "
            f"{weight_dtype}; convert one to match (e.g. module.to(q.dtype))"
        )


def _check_pooling_inputs(queries, keys, values, bandwidth) -> None:
    """The checks of ``attention_pooling``: three 1-D floating tensors of one dtype, at least
    one key, as many values as keys, and a positive, finite bandwidth."""
    for name, x in (("queries", queries), ("keys", keys), ("values", values)):
        require_tensor(name, x, floating=True)
        if x.ndim != 1:
            want = "(n,)" if name == "queries" else "(m,)"
            raise ValueError(f"{name} has shape {shape_str(x.shape)} but must be 1-D {want}")
    if not queries.dtype == keys.dtype == values.dtype:
        raise TypeError(
            f"queries, keys and values must share a dtype, got {queries.dtype}, "
            f"{keys.dtype} and {values.dtype}"
        )
    m = keys.shape[0]
    if m == 0:
        raise ValueError("keys has shape (0,) but needs at least one key to average over")
    if values.shape[0] != m:
        raise ValueError(
            f"values has shape {shape_str(values.shape)} but keys has m={m}; "
            f"values must be ({m},)"
        )
    if isinstance(bandwidth, torch.Tensor):
        if bandwidth.ndim != 0 or not bandwidth.is_floating_point():
            raise ValueError(
                f"bandwidth must be a number or a 0-d floating tensor, got a tensor of "
                f"shape {shape_str(bandwidth.shape)} and dtype {bandwidth.dtype}"
            )
        positive = bool(bandwidth > 0) and bool(torch.isfinite(bandwidth))
    elif isinstance(bandwidth, numbers.Real) and not isinstance(bandwidth, bool):
        positive = 0 < bandwidth < math.inf
    else:
        raise TypeError(f"bandwidth must be a positive number, got {type(bandwidth).__name__}")
    if not positive:
        raise ValueError(f"bandwidth must be a positive, finite number, got {bandwidth!r}")


def attention_pooling(queries, keys, values, bandwidth):
    """Return ``(output, weights)`` of Gaussian-kernel Nadaraya–Watson pooling.

    queries: (n,), keys: (m,), values: (m,), all 1-D floating tensors of one dtype.
    bandwidth: a positive number, or a positive 0-d tensor (so it can be learned).

    ``weights[i, j] = softmax_j(−(queries[i] − keys[j])² / (2·bandwidth²))`` is (n, m)
    and ``output = weights @ values`` is (n,): each output is a weighted average of the
    values whose keys lie near the query.
    """
    _check_pooling_inputs(queries, keys, values, bandwidth)
    diffs = queries.unsqueeze(1) - keys.unsqueeze(0)  # (n, m)
    scores = -(diffs**2) / (2 * bandwidth**2)  # (n, m)
    weights = torch.softmax(scores, dim=-1)  # (n, m)
    output = weights @ values  # (n,)
    return output, weights


# --- the book's small examples (q01, q03) --------------------------------------------------------

def pooling_true_function(x: torch.Tensor) -> torch.Tensor:
    """The curve the toy data are drawn around."""
    return 2 * torch.sin(x) + 0.5 * x


def pooling_toy_data(num_keys: int = 40, seed: int = 0):
    """Keys x_j sorted in [0, 5] and values y_j = f(x_j) + noise, both (m,)."""
    g = torch.Generator().manual_seed(seed)
    keys = torch.rand(num_keys, generator=g).mul(5.0).sort().values  # (m,)
    values = pooling_true_function(keys) + 0.3 * torch.randn(num_keys, generator=g)  # (m,)
    return keys, values


WORKED_TOKENS = ("the", "cat", "sat")
WORKED_SCALINGS = ("÷√d_k", "none")


def worked_example():
    """The token vectors X (3, 4) and projections W_Q, W_K, W_V (4, 4), one decimal each."""
    X = torch.tensor(
        [
            [1.0, 0.0, 1.0, 0.0],  # the
            [0.0, 2.0, 0.0, 1.0],  # cat
            [1.0, 1.0, 0.0, 1.0],  # sat
        ]
    )  # (n, d_model)
    g = torch.Generator().manual_seed(17)
    W_Q, W_K, W_V = (
        torch.randn(4, 4, generator=g).round(decimals=1) + 0.0 for _ in range(3)
    )  # (d_model, d_k) each; d_v = d_k = 4 here; + 0.0 turns −0.0 into 0.0
    return X, W_Q, W_K, W_V


def worked_steps(token: int, scaling: str = "÷√d_k") -> dict[str, torch.Tensor]:
    """Every intermediate of one query: scores (m,), scaled (m,), weights (m,), parts (m, d_v)."""
    if scaling not in WORKED_SCALINGS:
        raise ValueError(f"scaling must be one of {WORKED_SCALINGS}, got {scaling!r}")
    X, W_Q, W_K, W_V = worked_example()
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V  # (n, d_k), (m, d_k), (m, d_v)
    scores = K @ Q[token]  # (m,)
    scaled = scores / math.sqrt(K.shape[-1]) if scaling == "÷√d_k" else scores
    weights = torch.softmax(scaled, dim=-1)  # (m,)
    parts = weights[:, None] * V  # (m, d_v): p_j v_j
    return {"scores": scores, "scaled": scaled, "weights": weights, "parts": parts,
            "output": parts.sum(dim=0)}
