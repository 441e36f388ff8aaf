"""A tiny attention model to train on the CPU in seconds: learn which key a query points to.

Each example holds m distinct key tokens and one query token; the query's partner under a
fixed random pairing is among the keys, and the model must put its attention there. Only
the projections W_q and W_k learn, so the one thing that differs between runs is how the
scores q·k are scaled — the setting of q04 (Vaswani et al., 2017, section 3.2.1).
"""

import math

import torch
from torch import nn


def pointer_batch(vocab: int, m: int, batch: int, pairing: torch.Tensor, g: torch.Generator):
    """Key tokens (batch, m), query tokens (batch,) and the index of the right key (batch,)."""
    keys = torch.rand(batch, vocab, generator=g).argsort(dim=-1)[:, :m]  # (B, m)
    target = torch.randint(m, (batch,), generator=g)  # (B,)
    query = pairing[keys[torch.arange(batch), target]]  # (B,)
    return keys, query, target


def train_pointer(
    scale: float,
    d_k: int = 256,
    m: int = 16,
    vocab: int = 64,
    d_embed: int = 32,
    steps: int = 100,
    batch: int = 32,
    lr: float = 1e-2,
    seed: int = 0,
) -> list[float]:
    """Train W_q, W_k with Adam; scores are (q·k) × ``scale``. Returns the loss per step."""
    torch.manual_seed(seed)
    embed = torch.randn(vocab, d_embed)  # fixed, unit-variance components
    pairing = torch.randperm(vocab)
    values = nn.functional.normalize(torch.randn(vocab, d_embed), dim=-1)  # fixed unit vectors
    w_q = nn.Linear(d_embed, d_k, bias=False)
    w_k = nn.Linear(d_embed, d_k, bias=False)
    for w in (w_q, w_k):  # unit-variance q and k components at the start
        nn.init.normal_(w.weight, std=1 / math.sqrt(d_embed))
    opt = torch.optim.Adam([w_q.weight, w_k.weight], lr=lr)
    g = torch.Generator().manual_seed(seed + 1)
    losses = []
    for _ in range(steps):
        keys, query, target = pointer_batch(vocab, m, batch, pairing, g)
        q = w_q(embed[query])  # (B, d_k)
        k = w_k(embed[keys])  # (B, m, d_k)
        scores = (k @ q.unsqueeze(-1)).squeeze(-1) * scale  # (B, m)
        weights = torch.softmax(scores, dim=-1)  # (B, m)
        output = (weights.unsqueeze(-1) * values[keys]).sum(dim=1)  # (B, d_v)
        # The loss sits downstream of the softmax, as in a real network: its gradient
        # reaches the scores only through the softmax Jacobian.
        loss = (output - values[keys[torch.arange(batch), target]]).pow(2).sum(-1).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses
