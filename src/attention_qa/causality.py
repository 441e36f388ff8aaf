"""The leak test of causal self-attention: perturb one token, see which outputs move.

A causal mask (Vaswani et al., 2017, section 3.2.3) lets position i attend to keys 0..i. If
it is right, changing the token at position p can change the outputs at p, p+1, … only; a
change at an earlier position is a leak of the future into the past. ``MASK_VARIANTS``
holds the right mask and the wrong ones found in circulation; masks are boolean, True = may
attend, as everywhere in the package.
"""

import functools

import torch

from attention_qa.masks import causal_mask
from attention_qa.multihead import MultiHeadAttention

LEAK_SEQ_LEN = 8
D_MODEL = 16
VOCAB = 20
LEAK_CHANGE_TOL = 1e-6  # a |Δ output| above this counts as a change

# name → (n, n) boolean mask, True = may attend
MASK_VARIANTS = {
    "correct": lambda n: causal_mask(n),
    "none": lambda n: torch.ones(n, n, dtype=torch.bool),
    "transposed": lambda n: causal_mask(n).T,
    # triu(ones, diagonal=1) marks the future to block; passed where True means keep, it
    # lets each position see only the future.
    "block mask read as keep": lambda n: torch.triu(torch.ones(n, n, dtype=torch.bool), 1),
    # The matrix seed 003 prints: triu(ones, diagonal=0) blocks the diagonal too.
    "diagonal blocked": lambda n: ~torch.triu(torch.ones(n, n, dtype=torch.bool), 0),
}
LEAK_MASK_NAMES = tuple(MASK_VARIANTS)


def variant_mask(name: str, n: int = LEAK_SEQ_LEN) -> torch.Tensor:
    if name not in MASK_VARIANTS:
        raise ValueError(f"mask must be one of {list(MASK_VARIANTS)}, got {name!r}")
    return MASK_VARIANTS[name](n)  # (n, n)


@functools.lru_cache(maxsize=None)
def one_layer(seed: int = 0):
    """Token embeddings followed by one self-attention layer, with fixed random weights."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        embed = torch.nn.Embedding(VOCAB, D_MODEL)
        attn = MultiHeadAttention(D_MODEL, num_heads=2)
    return embed, attn


TOKENS = torch.tensor([[3, 14, 7, 1, 9, 12, 5, 18]])  # (1, LEAK_SEQ_LEN)


@torch.no_grad()
def output_change(position: int, mask_name: str) -> torch.Tensor:
    """max |Δ output| per position, (LEAK_SEQ_LEN,), when the token at ``position`` changes."""
    if not 0 <= position < LEAK_SEQ_LEN:
        raise ValueError(f"position must lie in 0..{LEAK_SEQ_LEN - 1}, got {position!r}")
    mask = variant_mask(mask_name)
    perturbed = TOKENS.clone()
    perturbed[0, position] = (perturbed[0, position] + 1) % VOCAB
    embed, attn = one_layer()
    outs = []
    for tokens in (TOKENS, perturbed):
        x = embed(tokens)  # (1, n, d_model)
        outs.append(attn(x, x, x, mask)[0])  # (1, n, d_model)
    return (outs[1] - outs[0]).abs().amax(dim=-1)[0]  # (n,)
