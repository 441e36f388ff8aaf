"""Induction heads in a two-layer attention-only transformer (q22).

A tiny model (token + learned position embeddings, two layers of multi-head
attention with residual connections, no MLP, no layer norm, an unembedding)
is trained on random blocks of tokens said twice.  The functions here give
per-head attention patterns, previous-token scores (layer 0), induction
scores (layer 1) and head ablations.
"""

from __future__ import annotations

import torch
from torch import nn


class AttnOnly(nn.Module):
    """Two-layer attention-only transformer; heads kept separate for ablation."""

    def __init__(
        self, vocab: int = 16, d: int = 32, heads: int = 4, layers: int = 2, ctx: int = 32
    ):
        super().__init__()
        self.vocab, self.d, self.h, self.L, self.ctx = vocab, d, heads, layers, ctx
        self.dh = d // heads
        self.emb = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(ctx, d)
        self.qkv = nn.ModuleList(nn.Linear(d, 3 * d, bias=False) for _ in range(layers))
        self.out = nn.ModuleList(nn.Linear(d, d, bias=False) for _ in range(layers))
        self.unemb = nn.Linear(d, vocab, bias=False)

    def forward(
        self, x: torch.Tensor, ablate: tuple[tuple[int, int], ...] = (), return_attn: bool = False
    ):
        """Logits (and per-layer attention, shape layers x batch x heads x T x T)."""
        B, T = x.shape
        r = self.emb(x) + self.pos(torch.arange(T))
        mask = torch.ones(T, T, dtype=torch.bool).tril()
        attns = []
        for layer in range(self.L):
            q, k, v = self.qkv[layer](r).split(self.d, dim=-1)
            q, k, v = (t.view(B, T, self.h, self.dh).transpose(1, 2) for t in (q, k, v))
            s = (q @ k.transpose(-1, -2)) / self.dh**0.5
            a = s.masked_fill(~mask, float("-inf")).softmax(-1)
            z = a @ v  # B, h, T, dh
            for lay, head in ablate:
                if lay == layer:
                    z[:, head] = 0.0
            attns.append(a)
            r = r + self.out[layer](z.transpose(1, 2).reshape(B, T, self.d))
        logits = self.unemb(r)
        return (logits, torch.stack(attns)) if return_attn else logits


def repeated_batch(
    gen: torch.Generator, batch: int, k: int, vocab: int, T: int | None = None
) -> torch.Tensor:
    """Random prefix of T-2k tokens, then a random block of k tokens said twice: (batch, T)."""
    T = 2 * k if T is None else T
    prefix = torch.randint(0, vocab, (batch, T - 2 * k), generator=gen)
    block = torch.randint(0, vocab, (batch, k), generator=gen)
    return torch.cat([prefix, block, block], dim=1)


def second_copy_loss(model: AttnOnly, x: torch.Tensor, k: int, ablate=()) -> torch.Tensor:
    """Mean next-token loss on the second copy's tokens after its first (the predictable ones)."""
    T = x.shape[1]
    logits = model(x, ablate=ablate)
    pred = logits[:, T - k : -1]
    return nn.functional.cross_entropy(pred.reshape(-1, model.vocab), x[:, T - k + 1 :].reshape(-1))


def second_copy_accuracy(model: AttnOnly, x: torch.Tensor, k: int, ablate=()) -> float:
    """Fraction of second-copy tokens (after its first) predicted exactly."""
    T = x.shape[1]
    with torch.no_grad():
        logits = model(x, ablate=ablate)
    pred = logits[:, T - k : -1].argmax(-1)
    return float((pred == x[:, T - k + 1 :]).float().mean())


def train(
    steps: int = 600,
    T: int = 24,
    vocab: int = 16,
    seed: int = 0,
    batch: int = 64,
    lr: float = 3e-3,
    every: int = 20,
    keep: tuple[int, ...] = (),
):
    """Train on repeated blocks.  Returns (model, losses every `every` steps, checkpoints)."""
    torch.manual_seed(seed)
    model = AttnOnly(vocab=vocab, ctx=T)
    gen = torch.Generator().manual_seed(seed + 1)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    losses, ckpts = [], {}
    for step in range(steps + 1):
        if step in keep:
            ckpts[step] = {n: p.detach().clone() for n, p in model.state_dict().items()}
        if step == steps:
            break
        k = int(torch.randint(3, T // 2 + 1, (1,), generator=gen))
        x = repeated_batch(gen, batch, k, vocab, T)
        loss = second_copy_loss(model, x, k)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % every == 0:
            losses.append((step, float(loss.detach())))
    return model, losses, ckpts


def previous_token_scores(attn: torch.Tensor) -> torch.Tensor:
    """Mean attention from each position t>=1 to t-1, per head: attn (B, h, T, T) -> (h,)."""
    T = attn.shape[-1]
    idx = torch.arange(1, T)
    return attn[:, :, idx, idx - 1].mean(dim=(0, 2))


def induction_scores(attn: torch.Tensor, k: int) -> torch.Tensor:
    """Mean attention from second-copy position t (t>=T-k) to t-k+1, per head -> (h,).

    Position t-k+1 holds the token after the earlier occurrence of token x[t].
    """
    T = attn.shape[-1]
    idx = torch.arange(T - k, T)
    return attn[:, :, idx, idx - k + 1].mean(dim=(0, 2))
