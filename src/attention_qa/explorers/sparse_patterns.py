"""q20's explorer: local, strided and global + local masks, and what each costs in accuracy.

Queries, keys and values (d_k = 16) are attended to twice: with every key (full attention,
Vaswani et al., 2017) and with only the keys a sparse pattern allows, the softmax
renormalised over them. The inputs are either purely random, so full attention has no
preferred distance, or "local": each query resembles its neighbours' keys, so most of full
attention's weight lies near the diagonal, as it often does in trained language models.
The panel shows the sparse weights, with the keys the mask drops in grey, and the error of
each query's output against full attention. The patterns follow Longformer
(Beltagy et al., 2020: sliding window, global + local) and the Sparse Transformer (Child et
al., 2019: strided).
"""

import matplotlib
import torch

from attention_qa.panel import Control, Explorer, Frame, View
from attention_qa.panel.palette import RED
from attention_qa.sparse import (
    SPARSE_INPUTS,
    SPARSE_PATTERNS,
    sparse_vs_full,
)

PATTERNS = SPARSE_PATTERNS
INPUTS = SPARSE_INPUTS
WINDOWS = (1, 2, 4, 8)
LENGTHS = (16, 32, 64)
D_K = 16
MAP = matplotlib.colormaps["viridis"].with_extremes(bad="#cccccc")  # grey: masked


def pattern_frame(pattern: str, window: int, n: int, inputs: str) -> Frame:
    data = sparse_vs_full(pattern, n, window, inputs)
    figures = {
        "entries kept": f"{data['kept']:.0%}",
        "full attention's weight on kept keys": f"{data['mass']:.2f}",
        "mean error": f"{data['error'].mean().item():.3f}",
        "max error": f"{data['error'].max().item():.3f}",
    }
    return Frame(data=data, figures=figures)


class PatternView(View):
    figsize = (6.4, 3.2)

    def setup(self, fig):
        self.ax_w, self.ax_err = fig.subplots(1, 2, width_ratios=(1, 1.15))
        n = LENGTHS[0]
        self.w_img = self.ax_w.imshow(
            MAP(torch.zeros(n, n).numpy(), bytes=True), animated=True, interpolation="nearest",
        )
        self.ax_w.set(title="weights; grey: dropped", xlabel="key j", ylabel="query i")
        (self.err_line,) = self.ax_err.plot([], [], color=RED, animated=True)
        self.ax_err.set(title="RMS error vs full", xlabel="query i", ylim=(0, 1.3))
        self.n = None

    def update(self, data):
        n = data["n"]
        kept = data["weights"].masked_fill(~data["mask"], float("nan"))  # (n, n)
        # colours as bytes (weights 0 … 0.5), drawn about twice as fast as floats
        self.w_img.set_data(MAP((kept / 0.5).numpy(), bytes=True))
        self.err_line.set_data(range(n), data["error"].numpy())
        if n == self.n:
            return n  # the still part's state: the panel keeps one picture of it per n
        self.n = n
        ticks = range(0, n, 16 if n > 32 else 8)
        self.w_img.set_extent((-0.5, n - 0.5, n - 0.5, -0.5))
        self.ax_w.set(xlim=(-0.5, n - 0.5), ylim=(n - 0.5, -0.5), xticks=ticks, yticks=ticks)
        self.ax_err.set(xlim=(0, n - 1), xticks=ticks)
        return n


def sparse_pattern_explorer() -> Explorer:
    """pattern × window × length × inputs → mask, sparse weights, error vs full attention."""
    return Explorer(
        "Sparse attention patterns against full attention",
        [
            Control("pattern", "pattern", PATTERNS),
            Control("window", "window w", WINDOWS, default=2),
            Control("n", "tokens n", LENGTHS, default=32),
            Control("inputs", "inputs", INPUTS),
        ],
        pattern_frame,
        PatternView(),
        caption=(
            f"d_k = {D_K}; local inputs: query i resembles keys i−1, i, i+1. Every pattern keeps "
            "the band |i − j| ≤ w; strided adds every (w + 1)-th key, global + local makes "
            "position 0 see and be seen by all. The error of query i is the RMS of "
            "(sparse output − full output) over its components; values have variance 1."
        ),
    )
