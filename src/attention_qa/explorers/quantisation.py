"""q43's explorer: round-to-nearest quantisation of a weight matrix and of the K/V cache.

Symmetric absmax quantisation (``attention_qa.quant``) at 8, 4 or 3 bits, with one scale per
tensor, per row, per column or per group of 8 along the rows. Rows are tokens of K and V and
output channels of W (W stored as (d_out, d_in), as ``nn.Linear`` stores it); columns are
channels. The planted outlier multiplies one channel of K by 20, the pattern KIVI (Liu et al.,
2024, §3, Figure 2) found in real key caches; the weights and the values have none. The bars
are relative errors ‖x̂ − x‖ / ‖x‖, and that of attention's output softmax(q K̂ᵀ/√d) V̂.
"""

from functools import lru_cache

import numpy as np
import torch

from attention_qa.attention import scaled_dot_product_attention
from attention_qa.panel import Control, Explorer, Frame, View
from attention_qa.panel.palette import BLUE, GREEN, INK_LIGHT, PURPLE, RED
from attention_qa.quant import fake_quantize, relative_error

TOKENS, CHANNELS, D_IN = 32, 16, 64
OUTLIER_CHANNEL, OUTLIER_FACTOR = 3, 20.0
GROUP = 8
BITS = (8, 4, 3)
# (label, options for W, for K, for V): axis 0 = per row, 1 = per column
GRANULARITIES = {
    "per tensor": ({}, {}, {}),
    "per row": ({"axis": 0}, {"axis": 0}, {"axis": 0}),
    "per column": ({"axis": 1}, {"axis": 1}, {"axis": 1}),
    "per group of 8": ({"group_size": GROUP}, {"group_size": GROUP}, {"group_size": GROUP}),
    "K per column, V per row": ({"axis": 0}, {"axis": 1}, {"axis": 0}),
}
OUTLIERS = ("none", "×20 in one K channel")
PARTS = ("W", "K", "V", "output")
COLOURS = (GREEN, BLUE, PURPLE, RED)
ERROR_MAX = 0.6


@lru_cache(maxsize=2)
def tensors(outlier: bool) -> tuple:
    """q, K, V (TOKENS × CHANNELS) and W (CHANNELS × D_IN), float64, seeded."""
    g = torch.Generator().manual_seed(43)
    q, k, v = (torch.randn(TOKENS, CHANNELS, generator=g, dtype=torch.float64)
               for _ in range(3))
    w = torch.randn(CHANNELS, D_IN, generator=g, dtype=torch.float64) / D_IN**0.5
    if outlier:
        k[:, OUTLIER_CHANNEL] *= OUTLIER_FACTOR
    return q, k, v, w


def _errors(bits: int, options: dict, x: torch.Tensor) -> tuple:
    x_hat = fake_quantize(x, bits, **options)
    return x_hat, relative_error(x_hat, x)


@lru_cache(maxsize=None)
def quantisation_frame(bits: int, granularity: str, outlier: str) -> Frame:
    q, k, v, w = tensors(outlier != "none")
    w_opts, k_opts, v_opts = GRANULARITIES[granularity]
    _, w_err = _errors(bits, w_opts, w)
    k_hat, k_err = _errors(bits, k_opts, k)
    _, v_err = _errors(bits, v_opts, v)
    exact, _ = scaled_dot_product_attention(q, k, v)  # (TOKENS, CHANNELS)
    approx, _ = scaled_dot_product_attention(q, k_hat, fake_quantize(v, bits, **v_opts))
    out_err = relative_error(approx, exact)
    errors = dict(zip(PARTS, (w_err, k_err, v_err, out_err), strict=True))
    rest = [c for c in range(CHANNELS) if c != OUTLIER_CHANNEL]
    ordinary = relative_error(k_hat[:, rest], k[:, rest])
    # the error of each entry of K, in units of K's ordinary spread (std of the other channels)
    spread = k[:, rest].std().item()
    error_map = ((k_hat - k).abs() / spread).numpy()
    figures = {
        "relative error of W": f"{w_err:.1%}",
        "of K": f"{k_err:.1%}",
        "of K's ordinary channels": f"{ordinary:.1%}",
        "of V": f"{v_err:.1%}",
        "of attention's output": f"{out_err:.1%}",
    }
    return Frame(data={"errors": errors, "map": error_map}, figures=figures)


class QuantisationView(View):
    figsize = (6.4, 2.6)

    def setup(self, fig):
        left, right = fig.subplots(1, 2, gridspec_kw={"width_ratios": (1.3, 1)})
        self.bars = left.bar(range(len(PARTS)), [0.0] * len(PARTS), color=COLOURS,
                             animated=True)
        self.labels = [left.text(i, 0.0, "", ha="center", va="bottom",
                                 animated=True) for i in range(len(PARTS))]
        left.set(xticks=range(len(PARTS)), xticklabels=("W", "K", "V", "output"),
                 ylim=(0, ERROR_MAX), ylabel="relative error", title="error after rounding")
        self.image = right.imshow(np.zeros((TOKENS, CHANNELS)), cmap="viridis", vmin=0,
                                  vmax=1.0, aspect="auto", animated=True)
        right.set(xlabel="channel", ylabel="token", title="|K̂ − K| / spread",
                  xticks=(0, OUTLIER_CHANNEL, CHANNELS - 1), yticks=(0, TOKENS - 1))
        right.axvline(OUTLIER_CHANNEL, color=INK_LIGHT, linewidth=0.5, linestyle=":")
        fig.colorbar(self.image, ax=right, fraction=0.08, ticks=(0, 0.5, 1))

    def update(self, data):
        for bar, label, part in zip(self.bars, self.labels, PARTS, strict=True):
            height = data["errors"][part]
            bar.set_height(min(height, ERROR_MAX))
            label.set_position((bar.get_x() + bar.get_width() / 2, min(height, ERROR_MAX)))
            label.set_text(f"{height:.0%}" if height >= 0.01 else f"{height:.1%}")
        self.image.set_data(np.minimum(data["map"], 1.0))


def quantisation_explorer() -> Explorer:
    """bits × granularity × planted outlier → relative errors of W, K, V and attention's
    output, and where K's error lands."""
    return Explorer(
        "Quantising weights and the K/V cache",
        [
            Control("bits", "bits", BITS, default=4),
            Control("granularity", "one scale", tuple(GRANULARITIES), default="per row"),
            Control("outlier", "outlier channel", OUTLIERS, default=OUTLIERS[1]),
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
