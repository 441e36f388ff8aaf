"""q19's explorer: floating-point operations of one self-attention, recurrent or
convolutional layer, as a function of the sequence length n and the width d.

Follows the comparison of Vaswani et al. (2017), Table 1: O(n²·d) for self-attention,
O(n·d²) for a recurrent layer, O(k·n·d²) for a convolution of kernel width k. The counts
are exact for the operations named below, with a multiply-add counted as 2 FLOPs (as
``torch.utils.flop_counter`` counts them):

* self-attention: the scores QKᵀ and the weighted sum of values, 2·(2·n²·d); the
  projections, 8·n·d², are position-wise like the FFN and left out, as in the paper's table;
* recurrent: hₜ = tanh(xₜU + hₜ₋₁W) for n steps, 2·(2·n·d²);
* convolutional: a d → d channel convolution of width k over n positions, 2·k·n·d².
"""

import torch

from attention_qa.costs import KERNEL, layer_flops
from attention_qa.panel import Control, Explorer, Frame, View
from attention_qa.panel.palette import BLUE, GREEN, INK, INK_LIGHT, RED

N_VALUES = (16, 64, 256, 1024, 4096, 16384)
D_VALUES = (64, 128, 256, 512, 1024, 2048)
LAYERS = ("self-attention", "recurrent", f"convolution (k = {KERNEL})")
COLOURS = (BLUE, RED, GREEN)
Y_RANGE = (1e4, 1e13)


def costs_frame(n: int, d: int) -> Frame:
    flops = layer_flops(n, d)
    ratio = flops["self-attention"] / flops["recurrent"]
    figures = {name: f"{value:.3g} FLOPs" for name, value in flops.items()}
    figures["attention / recurrent"] = f"{ratio:.3g} (= n/d)"
    figures["cheaper per layer"] = "self-attention" if n < d else (
        "recurrent" if n > d else "neither (n = d)"
    )
    grid = torch.logspace(1, 4.5, 50, dtype=torch.float64)  # n from 10 to about 31 600
    curves = {
        "self-attention": (4 * grid * grid * d).numpy(),
        "recurrent": (4 * grid * d * d).numpy(),
    }
    data = {"bars": [flops[name] for name in LAYERS], "n": n, "d": d, "grid": grid.numpy(),
            "curves": curves}
    return Frame(data=data, figures=figures)


class CostsView(View):
    figsize = (6.4, 3.4)

    def setup(self, fig):
        ax_bars, ax_curve = fig.subplots(1, 2, width_ratios=(1, 1.6))
        self.bars = ax_bars.bar(range(3), [1.0] * 3, color=COLOURS, animated=True)
        ax_bars.set(
            yscale="log",
            ylim=Y_RANGE,
            xticks=range(3),
            xticklabels=("attn.", "RNN", "conv"),
            yticks=(1e4, 1e8, 1e12),
            ylabel="FLOPs per layer",
            title="at this n and d",
        )
        (self.att,) = ax_curve.plot([10, 10], [1, 1], color=COLOURS[0], animated=True,
                                     label="attention")
        (self.rnn,) = ax_curve.plot([10, 10], [1, 1], color=COLOURS[1], animated=True,
                                     label="RNN")
        self.cross = ax_curve.axvline(64, color=INK_LIGHT, linestyle="--", linewidth=1,
                                      animated=True)
        (self.here,) = ax_curve.plot([16], [1e5], "o", color=INK, animated=True)
        ax_curve.set(
            xscale="log",
            yscale="log",
            xlim=(10, 10**4.5),
            ylim=Y_RANGE,
            xticks=(10, 1e2, 1e3, 1e4),
            yticks=(1e4, 1e8, 1e12),
            xlabel="sequence length n",
        )
        # The note titles the plot: attention is cheaper left of the dashed line, n = d.
        self.note = ax_curve.set_title("attention cheaper for n < 2048", animated=True)
        ax_curve.tick_params(axis="y", labelleft=False)  # the same scale as the bars
        ax_curve.legend(loc="lower right", frameon=False)

    def update(self, data):
        for bar, value in zip(self.bars, data["bars"], strict=True):
            bar.set_height(value)
        self.att.set_data(data["grid"], data["curves"]["self-attention"])
        self.rnn.set_data(data["grid"], data["curves"]["recurrent"])
        self.cross.set_xdata([data["d"], data["d"]])
        self.here.set_data([data["n"]], [data["bars"][0]])
        self.note.set_text(f"attention cheaper for n < {data['d']}")


def layer_costs_explorer() -> Explorer:
    """n × d → FLOPs of a self-attention, recurrent and convolutional layer."""
    return Explorer(
        "Cost per layer: self-attention vs recurrent vs convolutional",
        [
            Control("n", "sequence length n", N_VALUES, default=256),
            Control("d", "width d", D_VALUES, default=512),
        ],
        costs_frame,
        CostsView(),
        caption=(
            "FLOPs with a multiply-add as 2: self-attention 4·n²·d (scores and weighted sum), "
            f"recurrent 4·n·d², convolution 2·k·n·d² with k = {KERNEL}. Self-attention is "
            "cheaper than the recurrent layer exactly when n < d."
        ),
    )
