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

import math

import torch
import torch.nn.functional as F
from torch import nn

from attention_qa.multihead import MultiHeadAttention, merge_heads, split_heads
from attention_qa.validation import (
    require_heads_divide,
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


def _check_block_input(x, d_model: int) -> None:
    """The check of a block's input: a floating tensor of shape (B, n, d_model)."""
    require_tensor("x", x, floating=True)
    if x.ndim != 3 or x.shape[-1] != d_model:
        raise ValueError(
            f"x has shape {shape_str(x.shape)} but must be (B, n, {d_model}) "
            f"with d_model={d_model}"
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
        _check_block_input(x, self.d_model)
        if self.norm_first:
            x = x + self._self_attention(self.norm1(x), mask)  # (B, n, d_model)
            x = x + self.ffn(self.norm2(x))  # (B, n, d_model)
        else:
            x = self.norm1(x + self._self_attention(x, mask))  # (B, n, d_model)
            x = self.norm2(x + self.ffn(x))  # (B, n, d_model)
        return x


NORMS = ("layernorm", "rmsnorm")
FFNS = ("relu", "swiglu")


class ConfigurableBlock(nn.Module):
    """A decoder block whose parts can be swapped one at a time, from the 2017 block to LLaMA's.

    - ``norm``: ``"layernorm"`` (``LayerNorm``) or ``"rmsnorm"`` (``RMSNorm``, no mean, no bias);
    - ``ffn``: ``"relu"`` (``FeedForward``, two matrices) or ``"swiglu"`` (``SwiGLU``, three);
    - ``norm_first``: False is Post-LN ``x = norm(x + f(x))``, True is Pre-LN
      ``x = x + f(norm(x))`` (LLaMA, GPT-2);
    - ``bias``: whether the attention projections, the ReLU network and the LayerNorms carry
      biases (``SwiGLU`` and ``RMSNorm`` have none; LLaMA has none anywhere);
    - ``qk_norm``: normalise each head's queries and keys with an ``RMSNorm`` of width d_head
      before their dot product (Dehghani et al., 2023, "Scaling Vision Transformers to 22B
      Parameters"; OLMo 2, Qwen 3), so that no growth of W_Q or W_K can inflate the scores.

    Self-attention is causal. ``forward(x)``: x (B, n, d_model) → (B, n, d_model);
    ``forward_with_logits(x)`` also returns the attention logits q·k/√d_head, (B, h, n, n),
    before the mask.
    """

    def __init__(self, d_model: int, num_heads: int, d_ff: int, *, norm: str = "layernorm",
                 ffn: str = "relu", norm_first: bool = False, bias: bool = True,
                 qk_norm: bool = False):
        super().__init__()
        d_head = require_heads_divide(d_model, num_heads, "d_head")
        require_positive_int("d_ff", d_ff)
        if norm not in NORMS:
            raise ValueError(f"norm must be one of {NORMS}, got {norm!r}")
        if ffn not in FFNS:
            raise ValueError(f"ffn must be one of {FFNS}, got {ffn!r}")
        for name, value in (("norm_first", norm_first), ("bias", bias), ("qk_norm", qk_norm)):
            if not isinstance(value, bool):
                raise TypeError(f"{name} must be True or False, got {value!r}")
        self.d_model, self.num_heads, self.d_head = d_model, num_heads, d_head
        self.norm, self.ffn_kind = norm, ffn
        self.norm_first, self.bias, self.qk_norm = norm_first, bias, qk_norm
        self.w_q = nn.Linear(d_model, d_model, bias=bias)
        self.w_k = nn.Linear(d_model, d_model, bias=bias)
        self.w_v = nn.Linear(d_model, d_model, bias=bias)
        self.w_o = nn.Linear(d_model, d_model, bias=bias)
        if qk_norm:
            self.q_norm = RMSNorm(self.d_head)
            self.k_norm = RMSNorm(self.d_head)
        self.ffn = SwiGLU(d_model, d_ff) if ffn == "swiglu" else FeedForward(d_model, d_ff)
        if ffn == "relu" and not bias:
            self.ffn.linear1.bias = None
            self.ffn.linear2.bias = None
        self.norm1 = self._make_norm()
        self.norm2 = self._make_norm()

    def _make_norm(self) -> nn.Module:
        if self.norm == "rmsnorm":
            return RMSNorm(self.d_model)
        layer = LayerNorm(self.d_model)
        if not self.bias:
            # A bias-free LayerNorm: the bias stays a zero buffer, not a parameter.
            del layer.bias
            layer.register_buffer("bias", torch.zeros(self.d_model))
        return layer

    def extra_repr(self) -> str:
        return (f"norm={self.norm!r}, ffn={self.ffn_kind!r}, norm_first={self.norm_first}, "
                f"bias={self.bias}, qk_norm={self.qk_norm}")

    def attention(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Causal self-attention: x (B, n, d_model) → (output (B, n, d_model), logits)."""
        n, h = x.shape[1], self.num_heads
        q = split_heads(self.w_q(x), h)  # (B, h, n, d_head)
        k = split_heads(self.w_k(x), h)  # (B, h, n, d_head)
        v = split_heads(self.w_v(x), h)  # (B, h, n, d_head)
        if self.qk_norm:
            # Each q and k now has root mean square 1 (times the norm's weight): norm √d_head.
            q, k = self.q_norm(q), self.k_norm(k)  # (B, h, n, d_head)
        logits = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)  # (B, h, n, n)
        future = torch.ones(n, n, dtype=torch.bool, device=x.device).triu(1)  # (n, n)
        weights = torch.softmax(logits.masked_fill(future, -math.inf), dim=-1)  # (B, h, n, n)
        out = merge_heads(weights @ v)  # (B, n, d_model)
        return self.w_o(out), logits

    def forward_with_logits(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """x (B, n, d_model) → (output (B, n, d_model), attention logits (B, h, n, n))."""
        _check_block_input(x, self.d_model)
        if self.norm_first:
            attended, logits = self.attention(self.norm1(x))
            x = x + attended  # (B, n, d_model)
            x = x + self.ffn(self.norm2(x))  # (B, n, d_model)
        else:
            attended, logits = self.attention(x)
            x = self.norm1(x + attended)  # (B, n, d_model)
            x = self.norm2(x + self.ffn(x))  # (B, n, d_model)
        return x, logits

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.forward_with_logits(x)[0]


def stack_statistics(num_layers: int = 8, *, d_model: int = 96, num_heads: int = 4,
                     d_ff: int = 384, n: int = 32, qk_scale: float = 1.0, seed: int = 0,
                     **parts) -> dict[str, list[float]]:
    """Activation statistics of a stack of fresh ``ConfigurableBlock(..., **parts)``, in float64.

    The input is standard normal, (1, n, d_model). ``qk_scale`` multiplies every W_Q and W_K,
    a stand-in for the growth of those weights during training. Returns per layer the root
    mean square of the residual stream after the layer (``"rms"``) and the largest |logit|
    q·k/√d_head of its attention (``"max_logit"``).
    """
    require_positive_int("num_layers", num_layers)
    require_positive_number("qk_scale", qk_scale)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        blocks = [ConfigurableBlock(d_model, num_heads, d_ff, **parts).double()
                  for _ in range(num_layers)]
        x = torch.randn(1, n, d_model, dtype=torch.float64)  # (1, n, d_model)
    rms, max_logit = [], []
    with torch.no_grad():
        for block in blocks:
            block.w_q.weight.mul_(qk_scale)
            block.w_k.weight.mul_(qk_scale)
            x, logits = block.forward_with_logits(x)  # (1, n, d_model), (1, h, n, n)
            rms.append(x.pow(2).mean().sqrt().item())
            max_logit.append(logits.abs().max().item())
    return {"rms": rms, "max_logit": max_logit}
