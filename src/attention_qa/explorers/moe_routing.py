"""q24's explorer: how a mixture-of-experts router spreads tokens over its experts.

A batch of 256 tokens is routed to the top k of E experts by its router logits (Shazeer et
al., 2017). The bars are each expert's load f_i, the fraction of the token-to-expert
assignments it received; the dots are P_i, the mean over tokens of the router's softmax at
the chosen temperature; Switch Transformer's auxiliary loss is E · Σ f_i P_i (Fedus et al.,
2022, eq. 4), printed with the assignments an expert buffer of capacity factor 1.25 would
drop (§2.2). Computed by ``attention_qa.moe.router_statistics``, ``expert_capacity`` and
``capacity_keep``.

The logits are standard normal, one column per expert, plus a skew added to expert 1's
column: what a router learns when every token shares a direction that expert 1's row
points along, the start of the collapse the auxiliary loss fights.
"""

import torch

from attention_qa.moe import capacity_keep, expert_capacity, router_statistics
from attention_qa.panel import Control, Explorer, Frame, View
from attention_qa.panel.palette import BLUE, GREEN, INK, RED

NUM_TOKENS = 256
SEED = 24
EXPERTS = (2, 4, 8, 16)
TOP_K = (1, 2)
TEMPERATURES = (0.25, 0.5, 1.0, 2.0, 4.0)
SKEWS = (0.0, 1.0, 2.0, 4.0)
CAPACITY_FACTOR = 1.25
LOAD_COLOUR, PROB_COLOUR = BLUE, RED


def router_logits(num_experts: int, skew: float) -> torch.Tensor:
    """(NUM_TOKENS, num_experts) float64 logits, the same draw for every skew."""
    g = torch.Generator().manual_seed(SEED)
    logits = torch.randn(NUM_TOKENS, num_experts, generator=g, dtype=torch.float64)
    logits[:, 0] += skew  # expert 1 (index 0) is favoured by every token
    return logits


def moe_routing_frame(num_experts: int, top_k: int, temperature: float, skew: float) -> Frame:
    stats = router_statistics(router_logits(num_experts, skew), top_k, temperature)
    capacity = expert_capacity(NUM_TOKENS, num_experts, top_k, CAPACITY_FACTOR)
    kept = capacity_keep(stats["experts"], num_experts, capacity)
    assignments = kept.numel()
    dropped = assignments - int(kept.sum())
    load, prob = stats["load"], stats["mean_prob"]
    loss = stats["balance_loss"].item()
    busiest = int(load.argmax())
    data = {"load": load.tolist(), "prob": prob.tolist(), "loss": loss, "top_k": top_k,
            "capacity": capacity / assignments}
    figures = {
        "balance loss": f"{loss:.2f} (1 = even load, {num_experts} = one expert takes all)",
        "busiest expert": f"expert {busiest + 1} with {load[busiest].item():.0%} of the load",
        "P of expert 1": f"{prob[0].item():.2f}",
        "dropped at capacity 1.25×": (
            f"{dropped} of {assignments} assignments ({capacity} slots per expert)"
        ),
    }
    return Frame(data=data, figures=figures)


class LoadView(View):
    figsize = (6.4, 3.6)

    def setup(self, fig):
        self.ax = ax = fig.subplots()
        top = max(EXPERTS)
        self.bars = ax.bar(range(top), [0.0] * top, color=LOAD_COLOUR, animated=True,
                           label="load f (bars)")
        (self.dots,) = ax.plot([], [], "o", color=PROB_COLOUR, markersize=7, animated=True,
                               label="mean router prob. P (dots)")
        (self.even,) = ax.plot([], [], "--", color=INK, linewidth=1, animated=True,
                               label="even share 1/E")
        (self.cap,) = ax.plot([], [], ":", color=GREEN, linewidth=2, animated=True,
                              label="capacity: above it, dropped")
        # The band above 1 holds the legend, so no bar ever runs into it.
        ax.set(ylim=(0, 1.42), yticks=(0, 0.25, 0.5, 0.75, 1), ylabel="share",
               xlabel="expert")
        ax.legend(loc="upper center", ncols=2, frameon=False, handlelength=1.5,
                  columnspacing=1.0, borderaxespad=0.2)
        self.title = ax.set_title("balance loss", animated=True)
        self.shown = None

    def update(self, data):
        E = len(data["load"])
        for i, bar in enumerate(self.bars):
            bar.set_visible(i < E)
            bar.set_height(data["load"][i] if i < E else 0.0)
        self.dots.set_data(range(E), data["prob"])
        self.even.set_data([-0.5, E - 0.5], [1 / E, 1 / E])
        self.cap.set_data([-0.5, E - 0.5], [data["capacity"]] * 2)
        self.title.set_text(f"E = {E}, top-{data['top_k']}: balance loss {data['loss']:.2f}")
        if self.shown == E:
            return False
        self.shown = E
        self.ax.set(xlim=(-0.6, E - 0.4), xticks=range(E),
                    xticklabels=[str(i + 1) for i in range(E)])
        return True


def moe_routing_explorer() -> Explorer:
    """Experts × top-k × router temperature × skew → load per expert, P and the balance loss."""
    return Explorer(
        "Mixture of experts: load per expert and the balance loss",
        [
            Control("num_experts", "experts E", EXPERTS, default=8),
            Control("top_k", "top-k", TOP_K, default=2),
            Control("temperature", "router temperature", TEMPERATURES, default=1.0),
            Control("skew", "skew toward expert 1", SKEWS, default=0.0),
        ],
        moe_routing_frame,
        LoadView(),
        caption=(
            f"{NUM_TOKENS} tokens with standard-normal router logits, a skew added to expert "
            "1's. Bars: load f_i, the share of the token-to-expert assignments; dots: P_i, "
            "the mean of softmax(logits / temperature). Balance loss = E · Σ f_i P_i "
            "(Switch Transformer). The temperature moves the dots, never the bars."
        ),
    )
