"""q01's explorer: attention as Nadaraya–Watson kernel regression on 1-D toy data.

Nadaraya (1964) and Watson (1964) estimate y at a query x by a weighted average of the
observed y_j, with Gaussian-kernel weights softmax_j(−(x − x_j)² / (2h²)). The keys are the
x_j, the values the y_j. The panel shows, for one bandwidth h and one query, the weights
over the keys and the curve fitted at every query; as h → 0 the soft lookup becomes a hard
lookup of the nearest key's value.
"""

import torch

from attention_qa.attention import attention_pooling, pooling_toy_data, pooling_true_function
from attention_qa.panel import Control, Explorer, Frame, View
from attention_qa.panel.palette import BLUE, GREEN, GREY, INK, PURPLE, RED

BANDWIDTHS = (0.02, 0.05, 0.1, 0.2, 0.35, 0.5, 0.8, 1.2, 2.0)
QUERY_POSITIONS = (0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5)
NUM_KEYS = 40
X_RANGE = (0.0, 5.0)


true_function = pooling_true_function  # the names chapters used before
toy_data = pooling_toy_data
KEYS, VALUES = pooling_toy_data(NUM_KEYS)
GRID = torch.linspace(*X_RANGE, 201)  # (n,) queries at which the fitted curve is drawn


def pooling_frame(bandwidth: float, query: float) -> Frame:
    fitted, _ = attention_pooling(GRID, KEYS, VALUES, bandwidth)  # (n,)
    out, weights = attention_pooling(torch.tensor([query]), KEYS, VALUES, bandwidth)
    weights = weights[0]  # (m,)
    nearest = (KEYS - query).abs().argmin()
    data = {"fitted": fitted, "weights": weights, "query": query, "output": out.item()}
    figures = {
        "output": f"{out.item():.3f}",
        "nearest key's value (hard lookup)": f"{VALUES[nearest].item():.3f}",
        "max weight": f"{weights.max().item():.3f}",
        "weights sum to": f"{weights.sum().item():.3f}",
    }
    return Frame(data=data, figures=figures)


class PoolingView(View):
    """The fitted curve above, the marked query's weights below, on the same x axis."""

    figsize = (6.0, 4.3)

    def setup(self, fig):
        ax_fit, ax_w = fig.subplots(2, 1, sharex=True)
        keys, values = KEYS.numpy(), VALUES.numpy()
        ax_fit.scatter(keys, values, s=10, color=GREY, label="(key, value)")
        ax_fit.plot(GRID, true_function(GRID), color=GREEN, linestyle="--", lw=1,
                    label="true")
        (self.fit,) = ax_fit.plot(GRID, GRID * 0, color=BLUE, lw=1.8, animated=True,
                                  label="fitted")
        self.chosen = ax_fit.scatter(keys, values, s=0 * keys, color=RED, animated=True)
        # stops below the legend's band
        (self.qline,) = ax_fit.plot([0, 0], [-2.5, 4.3], color=RED, lw=1, animated=True)
        (self.out,) = ax_fit.plot([0], [0], marker="*", ms=11, color=PURPLE,
                                  linestyle="", animated=True)
        ax_fit.set(title="fitted at every x; red line: the query", ylabel="y (value)",
                   xlim=X_RANGE, ylim=(-2.5, 6.2), yticks=[-2, 0, 2, 4])
        # The data stay below y = 4; the legend has the band above to itself.
        ax_fit.legend(loc="upper center", ncol=3, frameon=False, borderaxespad=0.1,
                      handlelength=1.2, columnspacing=1.0)
        self.stems = ax_w.vlines(keys, 0, 0 * keys, color=RED, lw=2, animated=True)
        ax_w.axhline(1 / len(keys), color=INK, linestyle="--", lw=1)
        self.wq = ax_w.axvline(0, color=RED, lw=1, linestyle=":", animated=True)
        ax_w.set(title="the query's weights (dashed: uniform 1/m)", xlabel="x (query / key)",
                 ylabel="weight", xlim=X_RANGE, ylim=(0, 1.02), yticks=[0, 0.5, 1])

    def update(self, data):
        keys, w = KEYS.numpy(), data["weights"].numpy()
        self.fit.set_ydata(data["fitted"].numpy())
        self.chosen.set_sizes(300 * w)
        self.qline.set_xdata([data["query"], data["query"]])
        self.out.set_data([data["query"]], [data["output"]])
        self.stems.set_segments([[(x, 0), (x, wj)] for x, wj in zip(keys, w, strict=True)])
        self.wq.set_xdata([data["query"], data["query"]])


def pooling_explorer() -> Explorer:
    """Bandwidth h × query position → the weights over the keys and the fitted curve."""
    return Explorer(
        "Attention pooling: a soft lookup whose sharpness is the bandwidth",
        [
            Control("bandwidth", "bandwidth h", BANDWIDTHS, default=0.35),
            Control("query", "query x", QUERY_POSITIONS, default=2.5),
        ],
        pooling_frame,
        PoolingView(),
        caption=(
            f"{NUM_KEYS} noisy (key, value) points around the dashed curve. Each fitted y is "
            "a weighted average of the values, with Gaussian-kernel weights "
            "softmax(−(x − key)² / 2h²); red dots grow with the weight of the marked query. "
            "A small h gives a hard lookup of the nearest key, a large h the mean of all values."
        ),
    )
