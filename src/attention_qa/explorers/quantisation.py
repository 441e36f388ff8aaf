"""q43's explorer: round-to-nearest quantisation of a weight matrix and of the K/V cache.

Symmetric absmax quantisation (``attention_qa.quant``) at 8, 4 or 3 bits, with one scale per
tensor, per row, per column or per group of 8 along the rows. Rows are tokens of K and V and
output channels of W (W stored as (d_out, d_in), as ``nn.Linear`` stores it); columns are
channels. The planted outlier multiplies one channel of K by 20, the pattern KIVI (Liu et al.,
2024, §3) found in real key caches; the weights and the values have none. The bars are
relative errors ‖x̂ − x‖ / ‖x‖, and that of attention's output softmax(q K̂ᵀ/√d) V̂.
"""


import numpy as np

from attention_qa.panel import Control, Explorer, Frame, View
from attention_qa.panel.palette import BLUE, GREEN, INK_LIGHT, PURPLE, RED
from attention_qa.quant import (
    GRANULARITIES,
    TOY_CHANNELS,
    TOY_OUTLIER_CHANNEL,
    TOY_TOKENS,
    granularity_errors,
    relative_error,
    toy_tensors,
)

BITS = (8, 4, 3)
OUTLIERS = {"none": 1.0, "×20 in one K channel": 20.0}
PARTS = ("W", "K", "V", "output")
COLOURS = (GREEN, BLUE, PURPLE, RED)
ERROR_MAX = 0.6


def quantisation_frame(bits: int, granularity: str, outlier: str) -> Frame:
    factor = OUTLIERS[outlier]
    r = granularity_errors(bits, granularity, factor)
    _, k, _, _ = toy_tensors(factor)
    rest = [c for c in range(TOY_CHANNELS) if c != TOY_OUTLIER_CHANNEL]
    ordinary = relative_error(k[:, rest] + r["K error"][:, rest], k[:, rest])
    # each entry's error in units of the ordinary channels' standard deviation
    error_map = (r["K error"].abs() / k[:, rest].std()).numpy()
    figures = {
        "relative error of W": f"{r['W']:.1%}",
        "of K": f"{r['K']:.1%}",
        "of K's ordinary channels": f"{ordinary:.1%}",
        "of V": f"{r['V']:.1%}",
        "of attention's output": f"{r['output']:.1%}",
    }
    return Frame(data={"errors": {p: r[p] for p in PARTS}, "map": error_map}, figures=figures)


class QuantisationView(View):
    figsize = (6.4, 2.6)

    def setup(self, fig):
        left, right = fig.subplots(1, 2, gridspec_kw={"width_ratios": (1.3, 1)})
        self.bars = left.bar(range(len(PARTS)), [0.0] * len(PARTS), color=COLOURS,
                             animated=True)
        left.set(xticks=range(len(PARTS)), xticklabels=PARTS, ylim=(0, ERROR_MAX),
                 ylabel="relative error", title="error after rounding")
        self.image = right.imshow(np.zeros((TOY_TOKENS, TOY_CHANNELS)), cmap="viridis", vmin=0,
                                  vmax=1.0, aspect="auto", animated=True)
        right.set(xlabel="channel", ylabel="token", title="|K̂ − K| / spread",
                  xticks=(0, TOY_OUTLIER_CHANNEL, TOY_CHANNELS - 1),
                  yticks=(0, TOY_TOKENS - 1))
        right.axvline(TOY_OUTLIER_CHANNEL, color=INK_LIGHT, linewidth=0.5, linestyle=":")
        fig.colorbar(self.image, ax=right, fraction=0.08, ticks=(0, 0.5, 1))

    def update(self, data):
        # the percentages are printed under the figure (Frame.figures): no labels to redraw
        for bar, part in zip(self.bars, PARTS, strict=True):
            bar.set_height(min(data["errors"][part], ERROR_MAX))
        self.image.set_data(np.minimum(data["map"], 1.0))


def quantisation_explorer() -> Explorer:
    """bits × granularity × planted outlier → relative errors of W, K, V and attention's
    output, and where K's error lands. Each frame is computed on its first visit (about
    2 ms) and cached."""
    return Explorer(
        "Quantising weights and the K/V cache",
        [
            Control("bits", "bits", BITS, default=4),
            Control("granularity", "one scale", tuple(GRANULARITIES), default="per row"),
            Control("outlier", "outlier channel", tuple(OUTLIERS),
                    default="×20 in one K channel"),
        ],
        quantisation_frame,
        QuantisationView(),
        caption=(
            "Symmetric absmax quantisation, round to nearest. Rows are tokens of K and V "
            "(32 tokens, 16 channels) and output channels of W (16 × 64); the outlier "
            "multiplies channel 3 of K by 20. The right map shows each entry's rounding "
            "error in K, in units of the ordinary channels' standard deviation."
        ),
    )
