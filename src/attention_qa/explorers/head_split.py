"""q11's explorer: splitting a fixed d_model into more, narrower heads.

Parameters (4·d² + 4·d) and matrix-product FLOPs (4·B·n·d·(2d + n)) do not depend on the
number of heads h (Vaswani et al., 2017, section 3.2.2: "the total computational cost is
similar to that of single-head attention with full dimensionality"). What changes is each
head's width d_k = d/h, and with it the rank of a head's score matrix, at most d_k
(Bhojanapalli et al., 2020, "Low-Rank Bottleneck in Multi-head Attention Models").
"""

import torch

from attention_qa.costs import attention_flops
from attention_qa.multihead import head_scores
from attention_qa.panel import Control, Explorer, Frame, View
from attention_qa.panel.palette import BLUE, GREEN, INK, RED

D_MODEL = 64
HEAD_COUNTS = (1, 2, 4, 8, 16, 32, 64)
LENGTHS = (16, 32, 64, 128)
SV_FLOOR = 1e-12  # relative singular values below this are drawn at the floor


def head_split_frame(num_heads: int, n: int) -> Frame:
    d_k = D_MODEL // num_heads
    scores = head_scores(num_heads, n)  # (h, n, n)
    weights = torch.softmax(scores / d_k**0.5, dim=-1)  # (h, n, n)
    max_weight = weights.amax(-1).mean(-1)  # (h,) mean over queries
    singular = torch.linalg.svdvals(scores[0])  # (n,) descending
    relative = (singular / singular[0]).clamp_min(SV_FLOOR)
    rank = int(torch.linalg.matrix_rank(scores[0]))
    params = 4 * D_MODEL * D_MODEL + 4 * D_MODEL
    figures = {
        "parameters": f"{params:,}",
        "FLOPs (B = 1)": f"{attention_flops(1, n, n, D_MODEL):,}",
        "d_k": str(d_k),
        "rank of head 0's Q Kᵀ": f"{rank} of n = {n}",
        "mean max weight per query": f"{max_weight.mean().item():.3f} (uniform 1/n = {1 / n:.3f})",
    }
    data = {"relative": relative, "d_k": d_k, "n": n, "max_weight": max_weight}
    return Frame(data=data, figures=figures)


class HeadSplitView(View):
    """Head 0's singular values above, every head's mean max weight below."""

    figsize = (6.0, 4.6)

    def setup(self, fig):
        ax_sv, ax_heads = fig.subplots(2, 1)
        (self.sv,) = ax_sv.plot([1], [1], marker=".", color=BLUE, animated=True)
        self.d_k_line = ax_sv.axvline(1, color=RED, linestyle="--", animated=True)
        ax_sv.set(
            xlabel="index", yscale="log",
            ylabel="÷ largest", xlim=(0.5, max(LENGTHS) + 0.5),
            ylim=(SV_FLOOR / 3, 3), xscale="log", yticks=[1e-12, 1e-6, 1],
        )
        # the title names d_k: no corner of the axes is free of points for every setting
        self.d_k_text = ax_sv.set_title("singular values", animated=True)
        self.bars = ax_heads.stairs([0.0], [0.0, 1.0], fill=True, color=GREEN, animated=True)
        (self.uniform,) = ax_heads.plot(
            [0, 1], [0, 0], color=INK, linestyle="--", linewidth=1, animated=True
        )
        ax_heads.set(
            title="each head's mean max weight (dashed: 1/n)", xlabel="heads, left to right",
            ylabel="max weight", xlim=(0, 1), ylim=(0, 0.6), xticks=[], yticks=[0, 0.2, 0.4, 0.6],
        )

    def update(self, data):
        relative = data["relative"]
        self.sv.set_data(torch.arange(1, len(relative) + 1).numpy(), relative.numpy())
        d_k = data["d_k"]
        self.d_k_line.set_xdata([d_k, d_k])
        self.d_k_text.set_text(f"singular values of head 0's Q Kᵀ (dashed: d_k = {d_k})")
        h = len(data["max_weight"])
        self.bars.set_data(data["max_weight"].numpy(), torch.linspace(0, 1, h + 1).numpy())
        self.uniform.set_ydata([1 / data["n"], 1 / data["n"]])


def head_split_explorer() -> Explorer:
    """Heads h (1 … 64 at d_model = 64) × tokens n → flat cost, d_k, rank, saturation."""
    return Explorer(
        "Splitting d_model = 64 into h heads",
        [
            Control("num_heads", "heads h", HEAD_COUNTS, default=8),
            Control("n", "tokens n", LENGTHS, default=32),
        ],
        head_split_frame,
        HeadSplitView(),
        caption=(
            "Standard-normal tokens; W_Q and W_K drawn so that q and k have unit-variance "
            "components. "
            "Parameters and FLOPs stay the same for every h; a head's score matrix has at "
            "most d_k non-zero singular values (the rest fall to rounding error, drawn at "
            f"{SV_FLOOR:g})."
        ),
    )
