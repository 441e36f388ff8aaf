"""q04's explorer: how d_k and the scaling choice push softmax into saturation.

Queries and keys have independent standard-normal components, so q·k has variance d_k
(Vaswani et al., 2017, footnote 4). The panel shows the spread of the scores, the weights
of one query, and the saturation figures averaged over all queries.
"""

import math

import torch

from attention_qa.panel import Control, Explorer, Frame, View
from attention_qa.panel.palette import BLUE, RED
from attention_qa.panel.plots import key_edges, sorted_weights_axes
from attention_qa.saturation import (
    SCALINGS,
    saturation_stats,
    scaled_scores,
)

D_K_VALUES = tuple(2**i for i in range(11))  # 1 … 1024
KEY_COUNTS = (8, 32, 128)
NUM_QUERIES = 256


SCORE_RANGE = 12.0  # the histogram's fixed x-range; scores beyond it pile into the end bins
SCORE_BINS = 48


def saturation_frame(d_k: int, scaling: str, m: int) -> Frame:
    scores = scaled_scores(d_k, scaling, m)  # (n, m)
    stats = {name: value.mean().item() for name, value in saturation_stats(scores).items()}
    weights = torch.softmax(scores[0], dim=-1).sort(descending=True).values  # (m,)
    clipped = scores.flatten().clamp(-SCORE_RANGE, SCORE_RANGE)
    counts, edges = torch.histogram(clipped, bins=SCORE_BINS, range=(-SCORE_RANGE, SCORE_RANGE))
    data = {
        "fractions": counts / counts.sum(),
        "edges": edges,
        "beyond": (scores.abs() > SCORE_RANGE).float().mean().item(),
        "weights": weights,
        "std": scores.std().item(),
        "m": m,
    }
    figures = {
        "score std": f"{data['std']:.2f}",
        "max weight": f"{stats['max_weight']:.3f}",
        "entropy": f"{stats['entropy']:.2f} of log m = {math.log(m):.2f} nats",
        "Jacobian norm": f"{stats['jacobian_norm']:.3f}",
    }
    return Frame(data=data, figures=figures)


class SaturationView(View):
    """The spread of all scores above, one query's sorted weights below."""

    figsize = (6.0, 4.6)

    def setup(self, fig):
        ax_scores, ax_weights = fig.subplots(2, 1)
        self.hist = ax_scores.stairs([0.0], [0.0, 1.0], fill=True, color=BLUE, animated=True)
        ax_scores.set(
            xlabel=f"score after scaling, all queries (clipped at ±{SCORE_RANGE:g})",
            ylabel="fraction",
            xlim=(-SCORE_RANGE, SCORE_RANGE),
            ylim=(0, 0.6),
        )
        # The title carries the spread: no corner of the histogram is free for every setting.
        self.note = ax_scores.set_title("scores", animated=True)
        self.bars = ax_weights.stairs([0.0], [0.0, 1.0], fill=True, color=RED, animated=True)
        self.uniform = sorted_weights_axes(ax_weights)
        ax_weights.legend([self.uniform], ["uniform 1/m"], loc="upper right", frameon=False)

    def update(self, data):
        self.hist.set_data(data["fractions"].numpy(), data["edges"].numpy())
        self.note.set_text(
            f"scores: std {data['std']:.2f}, {100 * data['beyond']:.0f}% beyond ±{SCORE_RANGE:g}"
        )
        self.bars.set_data(data["weights"].numpy(), key_edges(data["m"]))
        self.uniform.set_ydata([1 / data["m"]] * 2)


def saturation_explorer() -> Explorer:
    """d_k (1 … 1024, log scale) × scaling × number of keys → scores, weights, saturation."""
    return Explorer(
        "Softmax saturation: d_k, scaling and the number of keys",
        [
            Control("d_k", "d_k", D_K_VALUES, default=64),
            Control("scaling", "scaling", SCALINGS, default="1/√d_k"),
            Control("m", "keys m", KEY_COUNTS, default=32),
        ],
        saturation_frame,
        SaturationView(),
        caption=(
            f"Figures are means over {NUM_QUERIES} random queries with standard-normal "
            "components. Max weight runs from 1/m (uniform) to 1 (one-hot); entropy from "
            "log m to 0; the Jacobian norm falls to 0 as softmax saturates."
        ),
    )
