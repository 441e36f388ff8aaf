"""q05's explorer: the weights that additive, dot-product and scaled dot-product scores give.

Queries and keys have independent standard-normal components, as in q04. Additive
attention (Bahdanau et al., 2015) is a freshly initialised ``AdditiveAttention`` with
PyTorch's default ``nn.Linear`` initialisation; its score ``w_vᵀ tanh(W_q q + W_k k)`` is
bounded by ‖w_v‖₁ whatever d_k is. The unscaled dot product has variance d_k and
saturates softmax; dividing by √d_k keeps it at variance 1 (Vaswani et al., 2017, §3.2.1).
"""

import math

from attention_qa.panel import Control, Explorer, Frame, View
from attention_qa.panel.palette import BLUE, GREEN, RED
from attention_qa.panel.plots import key_edges, sorted_weights_axes
from attention_qa.saturation import saturation_stats, score_function_weights

D_K_VALUES = tuple(2**i for i in range(11))  # 1 … 1024
KEY_COUNTS = (8, 32, 128)
NUM_QUERIES = 256
D_HIDDEN = 64
METHODS = ("additive", "dot", "scaled dot")
COLOURS = {"additive": GREEN, "dot": RED, "scaled dot": BLUE}


def score_function_frame(d_k: int, m: int) -> Frame:
    weights = score_function_weights(d_k, m)
    # softmax(log p) = p, so the saturation figures of q04 apply to the weights directly.
    stats = {name: saturation_stats(p.log()) for name, p in weights.items()}
    max_weight = {name: s["max_weight"].mean().item() for name, s in stats.items()}
    entropy = {name: s["entropy"].mean().item() for name, s in stats.items()}
    data = {
        "m": m,
        "sorted": {name: p[0].sort(descending=True).values for name, p in weights.items()},
        "max_weight": max_weight,
        "entropy_fraction": {name: e / math.log(m) for name, e in entropy.items()},
    }
    figures = {
        "max weight": ", ".join(f"{name} {max_weight[name]:.3f}" for name in METHODS)
        + f" (uniform 1/m = {1 / m:.3f})",
        "entropy": ", ".join(f"{name} {entropy[name]:.2f}" for name in METHODS)
        + f" nats (uniform log m = {math.log(m):.2f})",
    }
    return Frame(data=data, figures=figures)


class ScoreFunctionView(View):
    """One query's sorted weights above, the means over all queries below."""

    figsize = (6.0, 4.6)

    def setup(self, fig):
        ax_weights, ax_bars = fig.subplots(2, 1, height_ratios=(3, 2))
        self.lines = {
            name: ax_weights.stairs(
                [0.0], [0.0, 1.0], color=COLOURS[name], linewidth=1.6, animated=True
            )
            for name in METHODS
        }
        self.uniform = sorted_weights_axes(ax_weights)
        ax_weights.legend(
            [*self.lines.values(), self.uniform],
            [*METHODS, "uniform 1/m"],
            loc="upper right",
            frameon=False,
            ncol=2,
        )
        width = 0.26
        self.bars = {}
        for i, name in enumerate(METHODS):
            self.bars[name] = ax_bars.bar(
                [j + (i - 1) * width for j in range(2)],
                [0.0, 0.0],
                width=width,
                color=COLOURS[name],
                animated=True,
            )
        ax_bars.set(
            title="means over all queries",
            xticks=[0, 1],
            xticklabels=["max weight", "entropy / log m"],
            ylim=(0, 1.05),
            yticks=[0, 0.5, 1],
            xlim=(-0.5, 1.5),
        )

    def update(self, data):
        edges = key_edges(data["m"])
        for name, line in self.lines.items():
            line.set_data(data["sorted"][name].numpy(), edges)
        self.uniform.set_ydata([1 / data["m"]] * 2)
        for name, bars in self.bars.items():
            bars[0].set_height(data["max_weight"][name])
            bars[1].set_height(data["entropy_fraction"][name])


def score_function_explorer() -> Explorer:
    """d_k (1 … 1024) × number of keys → weights of additive, dot and scaled dot scores."""
    return Explorer(
        "Additive, dot-product and scaled dot-product scores as d_k grows",
        [
            Control("d_k", "d_k", D_K_VALUES, default=64),
            Control("m", "keys m", KEY_COUNTS, default=32),
        ],
        score_function_frame,
        ScoreFunctionView(),
        caption=(
            f"Figures are means over {NUM_QUERIES} random queries with standard-normal "
            f"components. Additive attention has d_hidden = {D_HIDDEN} and PyTorch's default "
            "initialisation. Max weight runs from 1/m (uniform) to 1 (one-hot); entropy from "
            "log m to 0."
        ),
    )
