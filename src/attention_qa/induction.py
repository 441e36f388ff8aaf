"""Induction heads in a two-layer attention-only transformer (q22).

A tiny model (token + learned position embeddings, two layers of multi-head
attention with residual connections, no MLP, no layer norm, an unembedding)
is trained on random blocks of tokens said twice.  The functions here give
per-head attention patterns, previous-token scores (layer 0), induction
scores (layer 1) and head ablations; ``trained_model`` is the chapter's run
with its loss curve on a fixed held-out batch, and ``hidden_from_layer1``
hides a layer-0 head from layer 1's queries, keys or values only.

Induction heads and their phase change follow Olsson et al. (2022), "In-context
Learning and Induction Heads"; the previous-token head they compose with
through layer 1's keys (K-composition), Elhage et al. (2021), "A Mathematical
Framework for Transformer Circuits".
"""

from __future__ import annotations

import functools

import torch
from torch import nn

from attention_qa.training import single_thread, trained_once


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
    with single_thread():  # tiny matrices: extra threads only wait for each other
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


# --- the chapter's run: one model, a fixed evaluation batch, a loss curve --------------------

STEPS = 1500  # Adam steps of the chapter's run
CURVE_EVERY = 25  # a checkpoint every CURVE_EVERY steps for the loss curve
EVAL_T, EVAL_K = 24, 8  # evaluation sequences: 8 random tokens, then a block of 8 said twice


def evaluation_batch(batch: int = 256, seed: int = 99) -> torch.Tensor:
    """The fixed held-out batch (batch, EVAL_T) every figure of the chapter is measured on."""
    return repeated_batch(torch.Generator().manual_seed(seed), batch, EVAL_K, 16, EVAL_T)


@functools.lru_cache(maxsize=None)
def trained_model(steps: int = STEPS, seed: int = 0):
    """The chapter's model and its learning curve, trained once per process (cached).

    Returns ``(model, curve)``: ``train(steps, seed=seed)`` with a checkpoint every
    CURVE_EVERY steps, and for each checkpoint a dict with its step, its loss and accuracy on
    the second copy of ``evaluation_batch()``, the largest previous-token score in layer 0
    and the mean induction score in layer 1. Do not modify the returned model.
    """

    def run() -> dict:
        model, _, ckpts = train(steps, seed=seed, keep=tuple(range(0, steps + 1, CURVE_EVERY)))
        x = evaluation_batch()
        probe = AttnOnly(vocab=model.vocab, ctx=model.ctx)
        curve = []
        for step, state in sorted(ckpts.items()):
            probe.load_state_dict(state)
            with torch.no_grad():
                logits, attn = probe(x, return_attn=True)  # (B, T, vocab), (layers, B, h, T, T)
            pred, target = logits[:, EVAL_T - EVAL_K : -1], x[:, EVAL_T - EVAL_K + 1 :]
            curve.append({
                "step": step,
                "loss": float(nn.functional.cross_entropy(pred.transpose(1, 2), target)),
                "accuracy": float((pred.argmax(-1) == target).float().mean()),
                "previous-token (best layer-0 head)": float(previous_token_scores(attn[0]).max()),
                "induction (mean of layer 1)": float(induction_scores(attn[1], EVAL_K).mean()),
            })
        return {"state": model.state_dict(), "vocab": model.vocab, "ctx": model.ctx, "curve": curve}

    with torch.random.fork_rng(devices=[]):
        result = trained_once(f"induction-model-{steps}-{seed}", run)
        model = AttnOnly(vocab=result["vocab"], ctx=result["ctx"])
    model.load_state_dict(result["state"])
    return model.eval(), result["curve"]


def head_scores(model: AttnOnly, x: torch.Tensor, k: int, ablate=()) -> dict:
    """Per-head scores on repeated sequences x (B, T) whose last 2k tokens are a block said
    twice, with the heads in ``ablate`` switched off: tensors of shape (layers, h)."""
    with torch.no_grad():
        _, attn = model(x, ablate=ablate, return_attn=True)  # (layers, B, h, T, T)
    return {
        "previous-token": torch.stack([previous_token_scores(a) for a in attn]),
        "induction": torch.stack([induction_scores(a, k) for a in attn]),
    }


def hidden_from_layer1(
    model: AttnOnly, x: torch.Tensor, head: tuple[int, int], parts: str
) -> tuple[torch.Tensor, torch.Tensor]:
    """Hide a layer-0 head's output from some of layer 1's inputs only: a test of composition.

    Layer 1 computes its queries, keys and values from the residual stream; for each letter
    of ``parts`` ("q", "k", "v") that projection reads the stream *without* ``head``'s output,
    the others read it whole, and so does the unembedding. Elhage et al. (2021) call a later
    head's use of an earlier head through W_Q, W_K or W_V Q-, K- or V-composition.
    x: (B, T) → logits (B, T, vocab) and layer 1's attention (B, h, T, T).
    """
    if model.L != 2 or head[0] != 0 or not set(parts) <= set("qkv"):
        raise ValueError(
            f"needs a two-layer model, a layer-0 head and parts from 'qkv'; got {model.L} "
            f"layers, head {head}, parts {parts!r}"
        )
    B, T = x.shape
    mask = torch.ones(T, T, dtype=torch.bool).tril()

    def split_heads(t):  # (B, T, d) -> (B, h, T, dh)
        return t.view(B, T, model.h, model.dh).transpose(1, 2)

    def merge_heads(z):  # (B, h, T, dh) -> (B, T, d)
        return z.transpose(1, 2).reshape(B, T, model.d)

    def attend(q, k, v):
        s = (q @ k.transpose(-1, -2)) / model.dh**0.5  # (B, h, T, T)
        a = s.masked_fill(~mask, float("-inf")).softmax(-1)
        return a, a @ v

    r0 = model.emb(x) + model.pos(torch.arange(T))  # (B, T, d)
    _, z0 = attend(*(split_heads(t) for t in model.qkv[0](r0).split(model.d, dim=-1)))
    z0_hidden = z0.clone()
    z0_hidden[:, head[1]] = 0.0
    whole = r0 + model.out[0](merge_heads(z0))
    hidden = r0 + model.out[0](merge_heads(z0_hidden))
    qkv_whole = model.qkv[1](whole).split(model.d, dim=-1)
    qkv_hidden = model.qkv[1](hidden).split(model.d, dim=-1)
    q, k, v = (
        split_heads(h if p in parts else w)
        for p, w, h in zip("qkv", qkv_whole, qkv_hidden, strict=True)
    )
    a1, z1 = attend(q, k, v)
    return model.unemb(whole + model.out[1](merge_heads(z1))), a1
