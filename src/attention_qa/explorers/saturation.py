"""q04's explorer: how d_k and the scaling choice push softmax into saturation.

Queries and keys have independent standard-normal components, so q·k has variance d_k
(Vaswani et al., 2017, footnote 4). The panel shows the spread of the scores, the weights
of one query, and the saturation figures averaged over all queries.
"""

import math

import torch

from attention_qa.explorer import Control, Explorer, Frame, View
from attention_qa.saturation import saturation_stats

D_K_VALUES = tuple(2**i for i in range(11))  # 1 … 1024
SCALINGS = ("none", "1/√d_k", "1/d_k")
KEY_COUNTS = (8, 32, 128)
NUM_QUERIES = 256


def scale_for(scaling: str, d_k: int) -> float:
    """The factor the raw scores q·k are multiplied by."""
    factors = {"none": 1.0, "1/√d_k": 1 / math.sqrt(d_k), "1/d_k": 1 / d_k}
    if scaling not in factors:
        raise ValueError(f"scaling must be one of {list(factors)}, got {scaling!r}")
    return factors[scaling]


def scaled_scores(d_k: int, scaling: str, m: int, n: int = NUM_QUERIES, seed: int = 0):
    """Scores of n random queries against m random keys, unit-variance components."""
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(n, d_k, generator=g)  # (n, d_k)
    k = torch.randn(m, d_k, generator=g)  # (m, d_k)
    return (q @ k.T) * scale_for(scaling, d_k)  # (n, m)


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


def sorted_weights_axes(ax):
    """Axes for one query's m weights, largest first, over [0, 1]; returns the 1/m line."""
    (uniform,) = ax.plot([0, 1], [0, 0], color="#222222", linestyle="--", linewidth=1,
                         animated=True)
    ax.set(
        title="weights of one query, largest first",
        xlabel="keys, sorted (fraction of m)",
        ylabel="weight",
        xlim=(0, 1),
        ylim=(0, 1.02),
    )
    return uniform


def key_edges(m: int):
    """Edges of m equal steps over [0, 1], for a stairs plot of m sorted weights."""
    return torch.linspace(0, 1, m + 1).numpy()


class SaturationView(View):
    figsize = (7.6, 2.6)

    def setup(self, fig):
        ax_scores, ax_weights = fig.subplots(1, 2)
        self.hist = ax_scores.stairs([0.0], [0.0, 1.0], fill=True, color="#4477aa", animated=True)
        ax_scores.set(
            title="scores after scaling (all queries)",
            xlabel=f"score (clipped at ±{SCORE_RANGE:g})",
            ylabel="fraction per bin",
            xlim=(-SCORE_RANGE, SCORE_RANGE),
            ylim=(0, 0.6),
        )
        self.note = ax_scores.text(
            0.02, 0.95, "", transform=ax_scores.transAxes, va="top", animated=True
        )
        self.bars = ax_weights.stairs([0.0], [0.0, 1.0], fill=True, color="#ee6677", animated=True)
        self.uniform = sorted_weights_axes(ax_weights)
        ax_weights.legend([self.uniform], ["uniform 1/m"], loc="upper right", frameon=False)

    def update(self, data):
        self.hist.set_data(data["fractions"].numpy(), data["edges"].numpy())
        self.note.set_text(
            f"std {data['std']:.2f}\n{100 * data['beyond']:.0f}% beyond ±{SCORE_RANGE:g}"
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
