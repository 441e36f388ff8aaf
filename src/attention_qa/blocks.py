"""The pieces of one Transformer layer: layer normalisation, the feed-forward network and
the block that joins them to self-attention with residual connections.

Follows Vaswani et al. (2017), "Attention Is All You Need": section 3.1 (each sublayer is
``LayerNorm(x + Sublayer(x))``, "Post-LN") and section 3.3 (``FFN(x) = max(0, x W_1 + b_1)
W_2 + b_2``). Layer normalisation is Ba, Kiros and Hinton (2016), "Layer Normalization".
The Pre-LN variant, ``x + Sublayer(LayerNorm(x))``, is the one Xiong et al. (2020), "On
Layer Normalization in the Transformer Architecture", show trains without warm-up.

Two pieces of today's blocks (LLaMA, Touvron et al., 2023) sit beside them: ``RMSNorm``
(Zhang and Sennrich, 2019) and the gated ``SwiGLU`` feed-forward network (Shazeer, 2020).

Masks are boolean with **True = may attend**, like the rest of the package. There is no
dropout: the book's blocks stay deterministic, and ``nn.TransformerEncoderLayer`` with
``dropout=0`` computes the same function.
"""

import torch
import torch.nn.functional as F
from torch import nn

from attention_qa.multihead import MultiHeadAttention
from attention_qa.validation import (
    require_positive_int,
    require_positive_number,
    require_tensor,
    shape_str,
)


def _check_last_dim(name: str, x, d_model: int, want: str) -> None:
    require_tensor(name, x, min_ndim=1, floating=True)
    if x.shape[-1] != d_model:
        raise ValueError(
            f"{name} has shape {shape_str(x.shape)} but this module has d_model={d_model}; "
            f"{name} must be {want}"
        )


class LayerNorm(nn.Module):
    """Normalise each position's features to mean 0 and variance 1, then scale and shift.

    ``y = (x − mean) / √(var + eps) · weight + bias`` over the last dim, with the biased
    variance (divide by d_model, not d_model − 1), as ``nn.LayerNorm`` does. ``weight``
    starts at ones and ``bias`` at zeros, so a fresh layer only normalises.
    """

    def __init__(self, d_model: int, eps: float = 1e-5):
        super().__init__()
        self.d_model = require_positive_int("d_model", d_model)
        # eps > 0 keeps a constant row (variance 0) from dividing by zero.
        self.eps = require_positive_number("eps", eps)
        self.weight = nn.Parameter(torch.ones(d_model))  # (d_model,)
        self.bias = nn.Parameter(torch.zeros(d_model))  # (d_model,)

    def extra_repr(self) -> str:
        return f"d_model={self.d_model}, eps={self.eps}"

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x: (..., d_model) → (..., d_model)."""
        _check_last_dim("x", x, self.d_model, f"(..., {self.d_model})")
        mean = x.mean(dim=-1, keepdim=True)  # (..., 1)
        # Biased variance, as in Ba et al. and nn.LayerNorm: the statistics describe this
        # one vector, they are not an estimate of a population's.
        var = x.var(dim=-1, unbiased=False, keepdim=True)  # (..., 1)
        x_hat = (x - mean) / torch.sqrt(var + self.eps)  # (..., d_model)
        return x_hat * self.weight + self.bias  # (..., d_model)


class RMSNorm(nn.Module):
    """Root-mean-square normalisation: ``y = x / √(mean(x²) + eps) · weight`` over the last dim.

    Zhang and Sennrich (2019), "Root Mean Square Layer Normalization": LayerNorm without
    the mean subtraction and without the bias, as in LLaMA (Touvron et al., 2023). It
    rescales each vector to unit root mean square but does not centre it. Equals
    ``torch.nn.RMSNorm(d_model, eps=eps)`` holding the same ``weight``.
    """

    def __init__(self, d_model: int, eps: float = 1e-6):
        super().__init__()
        self.d_model = require_positive_int("d_model", d_model)
        # eps > 0 keeps an all-zero row from dividing by zero.
        self.eps = require_positive_number("eps", eps)
        self.weight = nn.Parameter(torch.ones(d_model))  # (d_model,)

    def extra_repr(self) -> str:
        return f"d_model={self.d_model}, eps={self.eps}"

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x: (..., d_model) → (..., d_model)."""
        _check_last_dim("x", x, self.d_model, f"(..., {self.d_model})")
        mean_square = x.pow(2).mean(dim=-1, keepdim=True)  # (..., 1)
        return x * torch.rsqrt(mean_square + self.eps) * self.weight  # (..., d_model)


class SwiGLU(nn.Module):
    """The gated feed-forward network of LLaMA: ``w_down(silu(w_gate(x)) * w_up(x))``.

    Shazeer (2020), "GLU Variants Improve Transformer", FFN_SwiGLU with Swish₁ = SiLU,
    ``silu(z) = z · sigmoid(z)``: one d_model → d_ff projection, passed through SiLU, gates
    another elementwise. The three projections carry no bias, as in the paper and LLaMA.
    With three matrices instead of two, LLaMA takes d_ff ≈ (2/3)·4·d_model to keep the
    parameter count of a 4·d_model ReLU network.
    """

    def __init__(self, d_model: int, d_ff: int):
        super().__init__()
        self.d_model = require_positive_int("d_model", d_model)
        self.d_ff = require_positive_int("d_ff", d_ff)
        self.w_gate = nn.Linear(d_model, d_ff, bias=False)
        self.w_up = nn.Linear(d_model, d_ff, bias=False)
        self.w_down = nn.Linear(d_ff, d_model, bias=False)

    def extra_repr(self) -> str:
        return f"d_model={self.d_model}, d_ff={self.d_ff}"

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x: (..., d_model) → (..., d_model)."""
        _check_last_dim("x", x, self.d_model, f"(..., {self.d_model})")
        gate = F.silu(self.w_gate(x))  # (..., d_ff)
        return self.w_down(gate * self.w_up(x))  # (..., d_ff) → (..., d_model)


class FeedForward(nn.Module):
    """Position-wise feed-forward network: ``Linear(d_model → d_ff) → ReLU → Linear(d_ff →
    d_model)``, applied to every position separately with the same weights (§3.3).

    The layer names ``linear1`` and ``linear2`` are those of ``nn.TransformerEncoderLayer``.
    """

    def __init__(self, d_model: int, d_ff: int):
        super().__init__()
        self.d_model = require_positive_int("d_model", d_model)
        self.d_ff = require_positive_int("d_ff", d_ff)
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)

    def extra_repr(self) -> str:
        return f"d_model={self.d_model}, d_ff={self.d_ff}"

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x: (..., d_model) → (..., d_model)."""
        _check_last_dim("x", x, self.d_model, f"(..., {self.d_model})")
        hidden = torch.relu(self.linear1(x))  # (..., d_ff)
        return self.linear2(hidden)  # (..., d_model)


class TransformerBlock(nn.Module):
    """One encoder layer: self-attention, then the feed-forward network, each wrapped in a
    residual connection and a LayerNorm.

    norm_first=False (Post-LN, the 2017 paper): ``x = LN(x + Attn(x)); x = LN(x + FFN(x))``.
    norm_first=True (Pre-LN): ``x = x + Attn(LN(x)); x = x + FFN(LN(x))``; the residual
    path then carries x unnormalised from input to output.

    ``forward(x, mask=None)``: x (B, n, d_model) → (B, n, d_model); mask boolean,
    broadcastable to (B, h, n, n), True = may attend (e.g. ``causal_mask(n)``).
    """

    def __init__(self, d_model: int, num_heads: int, d_ff: int, norm_first: bool = False):
        super().__init__()
        require_positive_int("d_model", d_model)
        require_positive_int("num_heads", num_heads)
        require_positive_int("d_ff", d_ff)
        if not isinstance(norm_first, bool):
            raise TypeError(f"norm_first must be True or False, got {norm_first!r}")
        self.d_model = d_model
        self.norm_first = norm_first
        self.attn = MultiHeadAttention(d_model, num_heads)
        self.ffn = FeedForward(d_model, d_ff)
        self.norm1 = LayerNorm(d_model)
        self.norm2 = LayerNorm(d_model)

    def extra_repr(self) -> str:
        return f"norm_first={self.norm_first}"

    def _self_attention(self, x: torch.Tensor, mask) -> torch.Tensor:
        out, _ = self.attn(x, x, x, mask=mask)  # (B, n, d_model)
        return out

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        require_tensor("x", x, floating=True)
        if x.ndim != 3 or x.shape[-1] != self.d_model:
            raise ValueError(
                f"x has shape {shape_str(x.shape)} but must be (B, n, {self.d_model}) "
                f"with d_model={self.d_model}"
            )
        if self.norm_first:
            x = x + self._self_attention(self.norm1(x), mask)  # (B, n, d_model)
            x = x + self.ffn(self.norm2(x))  # (B, n, d_model)
        else:
            x = self.norm1(x + self._self_attention(x, mask))  # (B, n, d_model)
            x = self.norm2(x + self.ffn(x))  # (B, n, d_model)
        return x
