"""A mixture-of-experts feed-forward layer with top-k routing and a load-balancing loss.

Follows Shazeer et al. (2017), "Outrageously Large Neural Networks: The Sparsely-Gated
Mixture-of-Experts Layer" (a router picks the top k experts of each token; their outputs are
mixed by a softmax over the chosen experts' logits), and Fedus, Zoph and Shazeer (2022),
"Switch Transformers", equation (4) for the auxiliary loss
``num_experts · Σᵢ loadᵢ · Pᵢ``, which is 1 when the router spreads tokens evenly and grows
to num_experts when one expert takes every token.

The experts are the package's ``FeedForward``: each token still goes through d_model → d_ff
→ d_model, but only through k of the num_experts networks, so the parameters grow with
num_experts while the compute per token grows with k.

Beside the layer, the pieces a chapter takes apart:

- ``top_k_gates``: the router's gates as a dense (..., num_experts) matrix, zero off the
  top k, optionally at a temperature;
- ``router_statistics``: the choice, the load, the mean router probability and the balance
  loss of a batch of router logits;
- ``expert_capacity`` and ``capacity_keep``: Switch Transformer's capacity (§2.2), a fixed
  number of slots per expert, and which token-to-expert assignments overflow it;
- ``moe_parameter_counts`` and ``MIXTRAL_8X7B``: total and active parameters of a decoder
  whose feed-forward networks are SwiGLU experts (Jiang et al., 2024, "Mixtral of Experts").
"""

import math

import torch
from torch import nn

from attention_qa.blocks import FeedForward
from attention_qa.validation import (
    require_nonnegative_int,
    require_positive_int,
    require_positive_number,
    require_tensor,
    require_weight_dtype,
    shape_str,
)

# The published configuration of mistralai/Mixtral-8x7B-v0.1 (its config.json on Hugging
# Face): hidden_size 4096, intermediate_size 14336, 32 layers, 32 query heads and 8 key/value
# heads of width 4096 / 32 = 128, 8 local experts, 2 experts per token, a 32000-token
# vocabulary, untied input and output embeddings.
MIXTRAL_8X7B = {
    "vocab_size": 32000,
    "d_model": 4096,
    "d_ff": 14336,
    "num_layers": 32,
    "num_heads": 32,
    "num_kv_heads": 8,
    "num_experts": 8,
    "top_k": 2,
    "tied": False,
}


class MoEFeedForward(nn.Module):
    """``num_experts`` feed-forward networks, of which each token uses its ``top_k``.

    ``router = nn.Linear(d_model, num_experts, bias=False)`` scores the experts of a token;
    ``experts`` is an ``nn.ModuleList`` of ``FeedForward(d_model, d_ff)``.

    ``forward(x)``: x (..., d_model) → ``(y, aux)``. y (..., d_model) is, for every token,
    ``Σ gate_e · expert_e(token)`` over its top_k experts by router logit, the gates being the
    softmax of those top_k logits. ``aux["load"]`` (num_experts,) is the fraction of the
    token-to-expert assignments each expert received (it sums to 1);
    ``aux["balance_loss"]`` is Switch Transformer's ``num_experts · Σᵢ loadᵢ · Pᵢ``, Pᵢ the
    mean over tokens of the full softmax of the router logits. The load is a count and
    carries no gradient; the loss reaches the router through P.
    """

    def __init__(self, d_model: int, d_ff: int, num_experts: int, top_k: int = 2):
        super().__init__()
        self.d_model = require_positive_int("d_model", d_model)
        self.d_ff = require_positive_int("d_ff", d_ff)
        self.num_experts = require_positive_int("num_experts", num_experts)
        if isinstance(top_k, bool) or not isinstance(top_k, int) or not 1 <= top_k <= num_experts:
            raise ValueError(
                f"top_k must be an integer in 1..num_experts={num_experts}, got {top_k!r}"
            )
        self.top_k = top_k
        self.router = nn.Linear(d_model, num_experts, bias=False)
        self.experts = nn.ModuleList(FeedForward(d_model, d_ff) for _ in range(num_experts))

    def extra_repr(self) -> str:
        return f"num_experts={self.num_experts}, top_k={self.top_k}"

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        self._check_input(x)
        E, k = self.num_experts, self.top_k
        tokens = x.reshape(-1, self.d_model)  # (T, d_model), T = every position of x
        logits = self.router(tokens)  # (T, E)
        top_logits, top_experts = logits.topk(k, dim=-1)  # (T, k), (T, k)
        gates = torch.softmax(top_logits, dim=-1)  # (T, k): the chosen experts' shares
        y = torch.zeros_like(tokens)  # (T, d_model)
        for e, expert in enumerate(self.experts):
            # Only the tokens routed to expert e go through it: this is where MoE saves compute.
            token_ids, slot = (top_experts == e).nonzero(as_tuple=True)  # (T_e,), (T_e,)
            if token_ids.numel() == 0:
                continue
            out = expert(tokens[token_ids])  # (T_e, d_model)
            y = y.index_add(0, token_ids, gates[token_ids, slot].unsqueeze(-1) * out)
        counts = torch.bincount(top_experts.flatten(), minlength=E)  # (E,)
        load = counts.to(x.dtype) / top_experts.numel()  # (E,), sums to 1
        mean_prob = torch.softmax(logits, dim=-1).mean(dim=0)  # (E,): P
        balance_loss = E * (load * mean_prob).sum()  # 1 when balanced, up to E when not
        return y.reshape(x.shape), {"load": load, "balance_loss": balance_loss}

    def _check_input(self, x) -> None:
        require_tensor("x", x, min_ndim=1, floating=True)
        if x.shape[-1] != self.d_model:
            raise ValueError(
                f"x has shape {shape_str(x.shape)} but this module has d_model={self.d_model}; "
                f"x must be (..., {self.d_model})"
            )
        if x.numel() == 0:
            raise ValueError(
                f"x has shape {shape_str(x.shape)}, no tokens: the load of each expert "
                f"would be 0/0"
            )
        require_weight_dtype("x", x, self.router.weight)


def top_k_gates(logits: torch.Tensor, top_k: int, temperature: float = 1.0) -> torch.Tensor:
    """The router's gates of each token as a dense (..., num_experts) matrix.

    ``softmax(logits / temperature)`` over each token's top_k experts (by logit), zero for
    the others: the gates of a token sum to 1. This equals the full softmax with the
    entries outside the top k zeroed and the rest renormalised. The temperature changes
    how sharp the gates are, never which experts are chosen.
    """
    require_tensor("logits", logits, min_ndim=1, floating=True)
    E = logits.shape[-1]
    _require_top_k(top_k, E)
    require_positive_number("temperature", temperature)
    top_logits, top_experts = logits.topk(top_k, dim=-1)  # (..., k), (..., k)
    gates = torch.softmax(top_logits / temperature, dim=-1)  # (..., k)
    return torch.zeros_like(logits).scatter(-1, top_experts, gates)  # (..., E)


def router_statistics(logits: torch.Tensor, top_k: int,
                      temperature: float = 1.0) -> dict[str, torch.Tensor]:
    """What a router does with a batch: logits (..., E) of T tokens in all → a dict of

    ``experts`` (T, k): each token's chosen experts, best first; ``gates`` (T, E): the dense
    gates (``top_k_gates``); ``load`` (E,): the fraction of the T·k assignments each expert
    got; ``mean_prob`` (E,): P, the mean over tokens of ``softmax(logits / temperature)``;
    ``balance_loss``: Switch Transformer's ``E · Σᵢ loadᵢ · Pᵢ`` (Fedus et al., 2022, eq. 4).
    At temperature 1 these are ``MoEFeedForward``'s ``aux``.
    """
    gates = top_k_gates(logits, top_k, temperature)  # validates
    E = logits.shape[-1]
    flat = logits.reshape(-1, E)  # (T, E)
    if flat.shape[0] == 0:
        raise ValueError(f"logits has shape {shape_str(logits.shape)}, no tokens to route")
    experts = flat.topk(top_k, dim=-1).indices  # (T, k)
    counts = torch.bincount(experts.flatten(), minlength=E)  # (E,)
    load = counts.to(flat.dtype) / experts.numel()  # (E,), sums to 1
    mean_prob = torch.softmax(flat / temperature, dim=-1).mean(dim=0)  # (E,)
    return {
        "experts": experts,
        "gates": gates.reshape(-1, E),
        "load": load,
        "mean_prob": mean_prob,
        "balance_loss": E * (load * mean_prob).sum(),
    }


def expert_capacity(num_tokens: int, num_experts: int, top_k: int,
                    capacity_factor: float) -> int:
    """Slots per expert: ``ceil(capacity_factor · num_tokens · top_k / num_experts)``.

    Fedus et al. (2022), §2.2: each expert gets a fixed buffer, the even share of the
    batch's assignments times a capacity factor (1.0 to 2.0 in the paper). Fixed sizes keep
    the computation static; what overflows is dropped.
    """
    require_positive_int("num_tokens", num_tokens)
    require_positive_int("num_experts", num_experts)
    _require_top_k(top_k, num_experts)
    require_positive_number("capacity_factor", capacity_factor)
    return math.ceil(capacity_factor * num_tokens * top_k / num_experts)


def capacity_keep(experts: torch.Tensor, num_experts: int, capacity: int) -> torch.Tensor:
    """Which assignments fit: experts (T, k) → bool (T, k), False where an expert is full.

    Every token's first choice is served before any second choice (as GShard, Lepikhin et
    al., 2021, does for top-2), and within one rank tokens are served in order. A dropped
    assignment contributes nothing: the token goes on through the residual connection only.
    """
    require_tensor("experts", experts, min_ndim=2)
    if experts.ndim != 2 or experts.dtype not in (torch.int64, torch.int32):
        raise ValueError(
            f"experts has shape {shape_str(experts.shape)} and dtype {experts.dtype}; it must "
            f"be an integer tensor (T, k) of expert indices"
        )
    require_positive_int("num_experts", num_experts)
    require_nonnegative_int("capacity", capacity)
    if experts.numel() and not 0 <= int(experts.min()) <= int(experts.max()) < num_experts:
        raise ValueError(f"experts must lie in 0..{num_experts - 1}")
    by_rank = experts.T.reshape(-1)  # (k·T,): all first choices, then all second choices
    one_hot = torch.nn.functional.one_hot(by_rank.long(), num_experts)  # (k·T, E)
    position = (one_hot.cumsum(dim=0) * one_hot).sum(dim=-1)  # (k·T,): 1 = first in line
    return (position <= capacity).reshape(experts.shape[1], -1).T  # (T, k)


def moe_parameter_counts(*, vocab_size: int, d_model: int, d_ff: int, num_layers: int,
                         num_heads: int, num_kv_heads: int, num_experts: int, top_k: int,
                         tied: bool = False) -> dict[str, int]:
    """Total and active parameters of a decoder with SwiGLU experts (Mixtral's layout).

    Per layer: attention with query and output projections d_model × d_model and key and
    value projections d_model × (num_kv_heads · d_head), d_head = d_model / num_heads (no
    biases); a router d_model × num_experts; num_experts SwiGLU experts of 3 · d_model · d_ff
    weights each; two RMSNorm weights. Then a final RMSNorm and the input and output
    embeddings (one matrix when ``tied``). ``active`` is what one token's forward pass uses:
    everything but the num_experts − top_k experts it skips in every layer, counting the
    embeddings whole, as Mistral AI's "active parameters" do.
    """
    for name, value in (("vocab_size", vocab_size), ("d_model", d_model), ("d_ff", d_ff),
                        ("num_layers", num_layers), ("num_heads", num_heads),
                        ("num_kv_heads", num_kv_heads), ("num_experts", num_experts)):
        require_positive_int(name, value)
    _require_top_k(top_k, num_experts)
    if d_model % num_heads or num_heads % num_kv_heads:
        raise ValueError(
            f"num_heads={num_heads} must divide d_model={d_model}, and num_kv_heads="
            f"{num_kv_heads} must divide num_heads"
        )
    d_head = d_model // num_heads
    expert = 3 * d_model * d_ff  # w_gate, w_up, w_down
    counts = {
        "embeddings": vocab_size * d_model * (1 if tied else 2),
        "attention": num_layers * (2 * d_model * d_model + 2 * d_model * num_kv_heads * d_head),
        "routers": num_layers * d_model * num_experts,
        "experts": num_layers * num_experts * expert,
        "norms": num_layers * 2 * d_model + d_model,
    }
    counts["total"] = sum(counts.values())
    counts["active"] = counts["total"] - num_layers * (num_experts - top_k) * expert
    return counts


def _require_top_k(top_k, num_experts: int) -> None:
    if isinstance(top_k, bool) or not isinstance(top_k, int) or not 1 <= top_k <= num_experts:
        raise ValueError(
            f"top_k must be an integer in 1..num_experts={num_experts}, got {top_k!r}"
        )
