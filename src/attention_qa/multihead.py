"""Multi-head attention, with grouped-query attention as a special case, latent attention,
and their costs.

Follows Vaswani et al. (2017), "Attention Is All You Need", section 3.2.2:
``MultiHead(Q, K, V) = Concat(head_1, …, head_h) W_O`` with
``head_i = Attention(Q W_Q_i, K W_K_i, V W_V_i)``. Grouped-query attention follows
Ainslie et al. (2023), "GQA": ``num_kv_heads`` key/value heads are shared by groups of query
heads (``num_kv_heads = 1`` is Shazeer's (2019) multi-query attention). Query head i uses
key/value head ``i // (num_heads // num_kv_heads)``, the grouping of PyTorch's
``scaled_dot_product_attention(..., enable_gqa=True)``.

Multi-head latent attention follows DeepSeek-AI (2024), "DeepSeek-V2", section 2.1: keys and
values of every head are rebuilt from one small latent vector per token, which is all a
decoder has to cache.

Masks are boolean with **True = may attend**, like the rest of the package; beware that
``torch.nn.MultiheadAttention`` reads a boolean mask the other way round.

``attention_flops``, ``kv_cache_bytes`` and ``latent_cache_bytes`` are defined in
``attention_qa.costs``; they stay importable from here, where the book first put them (q11's
checker imports ``attention_flops`` from here). New code imports them from ``costs``.
"""

import math

import torch
from torch import nn

from attention_qa.attention import scaled_dot_product_attention
from attention_qa.costs import (  # noqa: F401  (kept importable here: see the docstring)
    attention_flops,
    kv_cache_bytes,
    latent_cache_bytes,
)
from attention_qa.validation import (
    require_heads_divide,
    require_positive_int,
    require_tensor,
    require_weight_dtype,
    shape_str,
)


def split_heads(x: torch.Tensor, num_heads: int) -> torch.Tensor:
    """(B, n, h·d) → (B, h, n, d): features split into heads, the head axis moved in front
    of the tokens, so that each head is an independent (tokens × d) attention problem.
    A plain ``view(B, h, n, d)`` would instead cut the token axis into pieces."""
    B, n, width = x.shape
    return x.view(B, n, num_heads, width // num_heads).transpose(1, 2)  # (B, h, n, d)


def merge_heads(x: torch.Tensor) -> torch.Tensor:
    """(B, h, n, d) → (B, n, h·d), undoing ``split_heads``: heads back next to their
    features, then concatenated. The transpose must come first; ``view(B, n, h·d)`` alone
    would mix tokens and heads."""
    B, h, n, d = x.shape
    return x.transpose(1, 2).reshape(B, n, h * d)  # (B, n, h·d)


class MultiHeadAttention(nn.Module):
    """``h`` heads of scaled dot-product attention, each of width ``d_k = d_model // h``.

    ``w_q`` and ``w_o`` map ``d_model → d_model``; ``w_k`` and ``w_v`` map
    ``d_model → num_kv_heads · d_k``, so with fewer key/value heads the K/V projections
    (and the K/V cache) shrink by ``num_heads / num_kv_heads``.
    """

    def __init__(self, d_model: int, num_heads: int, num_kv_heads: int | None = None,
                 bias: bool = True):
        super().__init__()
        d_k = require_heads_divide(d_model, num_heads, "d_k")
        num_kv_heads = num_heads if num_kv_heads is None else num_kv_heads
        require_positive_int("num_kv_heads", num_kv_heads)
        if num_heads % num_kv_heads != 0:
            raise ValueError(
                f"num_kv_heads={num_kv_heads} must divide num_heads={num_heads} so that every "
                f"key/value head serves the same number of query heads"
            )
        self.d_model = d_model
        self.num_heads = num_heads
        self.num_kv_heads = num_kv_heads
        self.d_k = d_k
        self.w_q = nn.Linear(d_model, d_model, bias=bias)
        self.w_k = nn.Linear(d_model, num_kv_heads * self.d_k, bias=bias)
        self.w_v = nn.Linear(d_model, num_kv_heads * self.d_k, bias=bias)
        self.w_o = nn.Linear(d_model, d_model, bias=bias)

    def extra_repr(self) -> str:
        return (
            f"d_model={self.d_model}, num_heads={self.num_heads}, "
            f"num_kv_heads={self.num_kv_heads}"
        )

    def _check_inputs(self, query, key, value) -> None:
        d = self.d_model
        for name, x, length in (("query", query, "n"), ("key", key, "m"), ("value", value, "m")):
            require_tensor(name, x, floating=True)
            if x.ndim != 3 or x.shape[-1] != d:
                raise ValueError(
                    f"{name} has shape {shape_str(x.shape)} but must be (B, {length}, {d}) "
                    f"with d_model={d}"
                )
        batch, m = query.shape[0], key.shape[1]
        if key.shape[0] != batch:
            raise ValueError(
                f"key has shape {shape_str(key.shape)} but query has B={batch}; "
                f"key must be ({batch}, m, {d})"
            )
        if value.shape[:2] != key.shape[:2]:
            raise ValueError(
                f"value has shape {shape_str(value.shape)} but key has shape "
                f"{shape_str(key.shape)}; value must be ({batch}, {m}, {d})"
            )
        for name, x in (("query", query), ("key", key), ("value", value)):
            require_weight_dtype(name, x, self.w_q.weight)

    def forward(self, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
                mask: torch.Tensor | None = None,
                cache: dict | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """Return ``(output, weights)``: output (B, n, d_model), weights (B, h, n, m).

        query: (B, n, d_model); key, value: (B, m, d_model); pass the same tensor three times
        for self-attention. mask: boolean, broadcastable to (B, h, n, m), True = may attend;
        a query whose keys are all masked gets zero weights (its output is then ``w_o``'s bias).

        cache: a dict, empty at the first call, for decoding one step at a time (Pope et al.,
        2022). The keys and values projected from ``key`` and ``value`` are appended to the
        ones it holds (``cache["k"]``, ``cache["v"]``, each (B, h_kv, past, d_k)), and the
        queries attend to all of them: m is then past + the new positions, and the mask
        refers to those m keys (``causal_mask(n, m)`` for causal decoding).
        """
        self._check_inputs(query, key, value)
        h, h_kv = self.num_heads, self.num_kv_heads
        q = split_heads(self.w_q(query), h)  # (B, n, d_model) → (B, h, n, d_k)
        k = split_heads(self.w_k(key), h_kv)  # (B, m, h_kv·d_k) → (B, h_kv, m, d_k)
        v = split_heads(self.w_v(value), h_kv)  # (B, m, h_kv·d_k) → (B, h_kv, m, d_k)
        if cache is not None:
            if "k" in cache:  # earlier positions: their keys and values are not recomputed
                k = torch.cat([cache["k"], k], dim=2)  # (B, h_kv, past + m, d_k)
                v = torch.cat([cache["v"], v], dim=2)  # (B, h_kv, past + m, d_k)
            cache["k"], cache["v"] = k, v
        return self._attend(q, k, v, mask)

    def _attend(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                mask: torch.Tensor | None) -> tuple[torch.Tensor, torch.Tensor]:
        """Attention on heads already split: q (B, h, n, d_k), k and v (B, h_kv, m, d_k)."""
        group = self.num_heads // self.num_kv_heads
        if group > 1:
            # Repeat each K/V head for its `group` query heads, consecutively, so that query
            # head i reads K/V head i // group (as enable_gqa does), not i % num_kv_heads.
            k = k.repeat_interleave(group, dim=1)  # (B, h, m, d_k)
            v = v.repeat_interleave(group, dim=1)  # (B, h, m, d_k)
        out, weights = scaled_dot_product_attention(q, k, v, mask)  # (B, h, n, d_k), (B, h, n, m)
        return self.w_o(merge_heads(out)), weights  # (B, n, d_model), (B, h, n, m)


class MultiHeadLatentAttention(nn.Module):
    """Self-attention whose keys and values are rebuilt from a cached latent ``c = w_dkv(x)``.

    DeepSeek-V2 (DeepSeek-AI, 2024), section 2.1.2, without its decoupled RoPE keys and its
    query compression. All projections are bias-free: ``w_q`` (d_model → d_model),
    ``w_dkv`` (d_model → d_latent), ``w_uk`` and ``w_uv`` (d_latent → d_model, every head's
    keys and values) and ``w_o`` (d_model → d_model); d_head = d_model / num_heads. A decoder
    caches c, d_latent numbers per token, instead of 2 · d_model for K and V
    (``latent_cache_bytes``).

    ``forward(x, mask=None, absorb=False)``: x (B, n, d_model) → ``(output (B, n, d_model),
    weights (B, h, n, n))``, scores scaled by 1/√d_head; mask boolean, broadcastable to
    (B, h, n, n), True = may attend; a query whose keys are all masked gets zero weights and
    a zero output. ``absorb=True`` never builds K or V: head i's score is
    ``q_iᵀ (W_uk,i c) = (W_uk,iᵀ q_i)ᵀ c``, so W_uk is folded into the query and the scores
    come straight from the latent; likewise the weights average c first and W_uv is applied
    after. Same result, up to rounding.
    """

    def __init__(self, d_model: int, num_heads: int, d_latent: int):
        super().__init__()
        d_head = require_heads_divide(d_model, num_heads, "d_head")
        require_positive_int("d_latent", d_latent)
        self.d_model = d_model
        self.num_heads = num_heads
        self.d_latent = d_latent
        self.d_head = d_head
        self.w_q = nn.Linear(d_model, d_model, bias=False)
        self.w_dkv = nn.Linear(d_model, d_latent, bias=False)
        self.w_uk = nn.Linear(d_latent, d_model, bias=False)
        self.w_uv = nn.Linear(d_latent, d_model, bias=False)
        self.w_o = nn.Linear(d_model, d_model, bias=False)

    def extra_repr(self) -> str:
        return f"d_model={self.d_model}, num_heads={self.num_heads}, d_latent={self.d_latent}"

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None,
                absorb: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
        self._check_input(x)
        if not isinstance(absorb, bool):
            raise TypeError(f"absorb must be True or False, got {absorb!r}")
        h, d_head, d_latent = self.num_heads, self.d_head, self.d_latent
        scale = 1.0 / math.sqrt(d_head)
        q = split_heads(self.w_q(x), h)  # (B, h, n, d_head)
        c = self.w_dkv(x)  # (B, n, d_latent): all that a decoder would cache
        if absorb:
            w_uk = self.w_uk.weight.view(h, d_head, d_latent)  # head i's block of W_uk
            w_uv = self.w_uv.weight.view(h, d_head, d_latent)  # head i's block of W_uv
            q_latent = q @ w_uk  # (B, h, n, d_latent): W_uk,iᵀ q, the query read in c's space
            c_all = c.unsqueeze(1)  # (B, 1, n, d_latent): one latent for every head
            # Attention in the latent space: keys and values are c itself.
            out_latent, weights = scaled_dot_product_attention(
                q_latent, c_all, c_all, mask, scale=scale
            )  # (B, h, n, d_latent), (B, h, n, n)
            out = out_latent @ w_uv.transpose(-2, -1)  # (B, h, n, d_head): Σ_j w_ij W_uv,i c_j
        else:
            k = split_heads(self.w_uk(c), h)  # (B, h, n, d_head)
            v = split_heads(self.w_uv(c), h)  # (B, h, n, d_head)
            out, weights = scaled_dot_product_attention(q, k, v, mask, scale=scale)
        return self.w_o(merge_heads(out)), weights  # (B, n, d_model), (B, h, n, n)

    def _check_input(self, x) -> None:
        require_tensor("x", x, floating=True)
        if x.ndim != 3 or x.shape[-1] != self.d_model:
            raise ValueError(
                f"x has shape {shape_str(x.shape)} but must be (B, n, {self.d_model}) "
                f"with d_model={self.d_model}"
            )
        require_weight_dtype("x", x, self.w_q.weight)


def head_scores(num_heads: int, n: int, d_model: int = 64, seed: int = 0) -> torch.Tensor:
    """Raw scores Q_i K_iᵀ of every head, (h, n, n), in float64, for standard-normal tokens."""
    torch.manual_seed(seed)
    mha = MultiHeadAttention(d_model, num_heads).double()
    with torch.no_grad():
        for layer in (mha.w_q, mha.w_k):
            # Unit-variance q and k components, the assumption behind the 1/√d_k scaling.
            layer.weight.normal_(0, d_model**-0.5)
    x = torch.randn(n, d_model, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    d_k = d_model // num_heads
    with torch.no_grad():
        q = mha.w_q(x).view(n, num_heads, d_k).transpose(0, 1)  # (h, n, d_k)
        k = mha.w_k(x).view(n, num_heads, d_k).transpose(0, 1)  # (h, n, d_k)
    return q @ k.transpose(-2, -1)  # (h, n, n)
