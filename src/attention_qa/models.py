"""A tiny decoder-only Transformer language model, small enough to read and to run on a CPU.

The shape is GPT-2's (Radford et al., 2019): learned token and position embeddings, a stack
of pre-LN decoder blocks (Xiong et al., 2020, "On Layer Normalization in the Transformer
Architecture") with causal self-attention and a 4·d_model MLP (GELU in GPT-2's tanh form), a
final LayerNorm and a linear head to the vocabulary. Generation is greedy and can keep a K/V
cache per layer, so each step feeds only the newest token (Pope et al., 2022, "Efficiently
Scaling Transformer Inference").
"""

import torch
from torch import nn

from attention_qa.masks import causal_mask
from attention_qa.multihead import MultiHeadAttention
from attention_qa.validation import require_positive_int, require_tensor, shape_str


class _DecoderBlock(nn.Module):
    """Pre-LN block: ``x + attn(LN(x))`` then ``x + mlp(LN(x))``."""

    def __init__(self, d_model: int, num_heads: int):
        super().__init__()
        self.ln_1 = nn.LayerNorm(d_model)
        self.attn = MultiHeadAttention(d_model, num_heads)
        self.ln_2 = nn.LayerNorm(d_model)
        self.mlp = nn.Sequential(
            nn.Linear(d_model, 4 * d_model), nn.GELU(approximate="tanh"),
            nn.Linear(4 * d_model, d_model),
        )

    def forward(self, x: torch.Tensor, cache: dict | None = None) -> torch.Tensor:
        """x: (B, t, d_model), the newest t positions.

        Without a cache this is plain causal self-attention over the t positions. With a
        cache (a dict, empty at first) the attention module reads the keys and values of
        earlier positions from it and appends those of the new positions, so nothing is
        recomputed; the t queries are the last t of the m positions, and ``causal_mask(t,
        m)`` lets query i see keys 0..(m − t + i), the cached ones and the new ones up to
        itself.
        """
        y = self.ln_1(x)  # (B, t, d_model)
        t = x.shape[1]
        past = cache["k"].shape[2] if cache else 0
        a, _ = self.attn(y, y, y, causal_mask(t, past + t), cache=cache)  # (B, t, d_model)
        x = x + a
        return x + self.mlp(self.ln_2(x))  # (B, t, d_model)


class TinyTransformerLM(nn.Module):
    """Decoder-only LM: ``forward(tokens)`` gives next-token logits at every position."""

    def __init__(self, vocab_size: int, d_model: int, num_heads: int, num_layers: int,
                 max_len: int):
        super().__init__()
        for name, value in (("vocab_size", vocab_size), ("d_model", d_model),
                            ("num_heads", num_heads), ("num_layers", num_layers),
                            ("max_len", max_len)):
            require_positive_int(name, value)
        self.vocab_size = vocab_size
        self.max_len = max_len
        self.tok_emb = nn.Embedding(vocab_size, d_model)
        self.pos_emb = nn.Embedding(max_len, d_model)
        self.blocks = nn.ModuleList(_DecoderBlock(d_model, num_heads) for _ in range(num_layers))
        self.ln_f = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab_size, bias=False)

    def _check_tokens(self, tokens) -> None:
        require_tensor("tokens", tokens)
        if tokens.is_floating_point() or tokens.is_complex() or tokens.dtype == torch.bool:
            raise TypeError(
                f"tokens must be an integer tensor of token ids, got dtype {tokens.dtype}"
            )
        if tokens.ndim != 2 or tokens.shape[1] == 0:
            raise ValueError(
                f"tokens has shape {shape_str(tokens.shape)} but must be (B, T) with T ≥ 1"
            )
        if tokens.shape[1] > self.max_len:
            raise ValueError(
                f"tokens has shape {shape_str(tokens.shape)}: T={tokens.shape[1]} is longer "
                f"than max_len={self.max_len}"
            )
        bad = (tokens < 0) | (tokens >= self.vocab_size)
        if bad.any():
            raise ValueError(
                f"tokens must lie in 0..vocab_size-1={self.vocab_size - 1}, "
                f"got {sorted(set(tokens[bad].tolist()))}"
            )

    def _logits(self, tokens: torch.Tensor, caches: list[dict] | None = None,
                start: int = 0) -> torch.Tensor:
        T = tokens.shape[1]
        positions = torch.arange(start, start + T, device=tokens.device)  # (T,)
        x = self.tok_emb(tokens) + self.pos_emb(positions)  # (B, T, d_model)
        for i, block in enumerate(self.blocks):
            x = block(x, None if caches is None else caches[i])  # (B, T, d_model)
        return self.head(self.ln_f(x))  # (B, T, vocab_size)

    def forward(self, tokens: torch.Tensor, caches: list[dict] | None = None,
                start: int = 0) -> torch.Tensor:
        """tokens: (B, T) integer ids in 0..vocab_size-1 → logits (B, T, vocab_size).

        The logits at position t depend only on tokens 0..t (causal self-attention).
        For decoding with a K/V cache, pass ``caches`` (one dict per block, empty at first)
        and the position ``start`` of the first token: the caches then hold positions
        0..start − 1 and receive the new ones.
        """
        self._check_tokens(tokens)
        if caches is not None and len(caches) != len(self.blocks):
            raise ValueError(
                f"caches has {len(caches)} entries but the model has {len(self.blocks)} "
                "blocks: pass one dict per block, empty at first"
            )
        if (isinstance(start, bool) or not isinstance(start, int) or start < 0
                or start + tokens.shape[1] > self.max_len):
            raise ValueError(
                f"start={start!r} with T={tokens.shape[1]} tokens must give positions within "
                f"0..max_len-1={self.max_len - 1}"
            )
        return self._logits(tokens, caches, start)

    @torch.no_grad()
    def generate(self, tokens: torch.Tensor, max_new_tokens: int,
                 use_cache: bool = True) -> torch.Tensor:
        """Append ``max_new_tokens`` greedy (argmax) tokens: (B, T) → (B, T + max_new_tokens).

        ``use_cache=True`` keeps each layer's keys and values and feeds only the newest token
        per step; ``use_cache=False`` re-runs the whole sequence each step. Both give the same
        tokens; the cache trades memory (see ``costs.kv_cache_bytes``) for time.
        """
        self._check_tokens(tokens)
        if (isinstance(max_new_tokens, bool) or not isinstance(max_new_tokens, int)
                or max_new_tokens < 0):
            raise ValueError(
                f"max_new_tokens must be a non-negative integer, got {max_new_tokens!r}"
            )
        T = tokens.shape[1]
        if T + max_new_tokens > self.max_len:
            raise ValueError(
                f"the prompt has T={T} tokens and max_new_tokens={max_new_tokens}, "
                f"{T + max_new_tokens} in all, but max_len={self.max_len}"
            )
        out = tokens
        if max_new_tokens == 0:
            return out.clone()
        if not use_cache:
            for _ in range(max_new_tokens):
                logits = self._logits(out)  # (B, t, vocab_size)
                nxt = logits[:, -1].argmax(dim=-1, keepdim=True)  # (B, 1)
                out = torch.cat([out, nxt], dim=1)
            return out
        caches = [{} for _ in self.blocks]
        logits = self._logits(out, caches)  # (B, T, vocab_size); fills the caches
        for step in range(max_new_tokens):
            nxt = logits[:, -1].argmax(dim=-1, keepdim=True)  # (B, 1)
            out = torch.cat([out, nxt], dim=1)
            if step + 1 < max_new_tokens:
                logits = self._logits(nxt, caches, start=out.shape[1] - 1)  # (B, 1, vocab_size)
        return out
