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
"""

import torch
from torch import nn

from attention_qa.blocks import FeedForward
from attention_qa.validation import require_positive_int, require_tensor, shape_str


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
        if x.dtype != self.router.weight.dtype:
            raise TypeError(
                f"x has dtype {x.dtype} but the module's weights have dtype "
                f"{self.router.weight.dtype}; convert one to match (e.g. module.to(x.dtype))"
            )
