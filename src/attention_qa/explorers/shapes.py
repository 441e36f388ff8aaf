"""q02's explorer: the shapes in softmax(Q Kᵀ / √d_k) V (Vaswani et al., 2017, equation 1).

n queries of length d_k meet m keys of length d_k; the weights are (n, m), one softmax per
query row; the m values have length d_v, so the output is (n, d_v). Each matrix is drawn as
a heatmap whose size in cells is its shape, laid out in the order of the products.
"""

import numpy as np
import torch
from matplotlib import colormaps
from matplotlib.collections import PolyCollection

from attention_qa.attention import scaled_dot_product_attention
from attention_qa.panel import Control, Explorer, Frame, View

N_VALUES = (1, 2, 4, 6)
M_VALUES = (2, 4, 6)
D_K_VALUES = (2, 4, 8)
D_V_VALUES = (2, 3, 5)
GAPS = (2.5, 5.0, 2.5, 2.5)  # cells between neighbouring matrices, room for the operators
# Each matrix gets a fixed slot as wide as its largest possible width.
SLOT_WIDTHS = {
    "Q": max(D_K_VALUES),
    "Kᵀ": max(M_VALUES),
    "weights": max(M_VALUES),
    "V": max(D_V_VALUES),
    "output": max(D_V_VALUES),
}
TALLEST = max(max(N_VALUES), max(D_K_VALUES), max(M_VALUES))


def _slots() -> dict[str, float]:
    starts, x = {}, 0.0
    for (name, width), gap in zip(SLOT_WIDTHS.items(), (*GAPS, 0.0), strict=True):
        starts[name] = x
        x += width + gap
    return starts


SLOT_STARTS = _slots()
TOTAL_WIDTH = sum(SLOT_WIDTHS.values()) + sum(GAPS)


def random_qkv(n: int, m: int, d_k: int, d_v: int, seed: int = 0):
    """Slices of fixed random matrices, so a cell keeps its value as the sizes change."""
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(max(N_VALUES), max(D_K_VALUES), generator=g)
    k = torch.randn(max(M_VALUES), max(D_K_VALUES), generator=g)
    v = torch.randn(max(M_VALUES), max(D_V_VALUES), generator=g)
    return q[:n, :d_k], k[:m, :d_k], v[:m, :d_v]  # (n, d_k), (m, d_k), (m, d_v)


def shapes_frame(n: int, m: int, d_k: int, d_v: int) -> Frame:
    q, k, v = random_qkv(n, m, d_k, d_v)
    output, weights = scaled_dot_product_attention(q, k, v)  # (n, d_v), (n, m)
    matrices = {"Q": q, "Kᵀ": k.T, "weights": weights, "V": v, "output": output}
    sums = weights.sum(dim=-1)  # (n,)
    figures = {
        "Q": f"n × d_k = {n} × {d_k}",
        "Kᵀ": f"d_k × m = {d_k} × {m}",
        "weights": f"n × m = {n} × {m}",
        "V": f"m × d_v = {m} × {d_v}",
        "output": f"n × d_v = {n} × {d_v}",
        "weight rows sum to": f"{sums.min().item():.3f} … {sums.max().item():.3f}",
        "case": "n = m, as in self-attention" if n == m else "n ≠ m, as in cross-attention",
    }
    return Frame(data=matrices, figures=figures)


CELL = 0.88  # side of an entry's square; the rest of the unit is the gap to its neighbours
SYMBOLS = {"Q": "n × d_k", "Kᵀ": "d_k × m", "weights": "n × m", "V": "m × d_v", "output": "n × d_v"}
COLOURS = {  # colour map and value range of each matrix
    name: ("viridis", 0.0, 1.0) if name == "weights" else ("cividis", -2.0, 2.0)
    for name in SLOT_WIDTHS
}


def cell_squares(matrix: torch.Tensor, name: str) -> tuple[np.ndarray, np.ndarray]:
    """One square per entry, centred in the matrix's slot: corners (rows·cols, 4, 2), colours."""
    rows, cols = matrix.shape
    x0 = SLOT_STARTS[name] + (SLOT_WIDTHS[name] - cols) / 2
    i, j = np.meshgrid(np.arange(rows), np.arange(cols), indexing="ij")  # (rows, cols) each
    corners = np.array([[0, 0], [CELL, 0], [CELL, -CELL], [0, -CELL]])  # (4, 2)
    origins = np.stack([x0 + j.ravel(), -i.ravel()], axis=1)  # (rows·cols, 2), top-left
    cmap, low, high = COLOURS[name]
    colours = colormaps[cmap]((matrix.numpy().ravel() - low) / (high - low))  # (rows·cols, 4)
    return origins[:, None, :] + corners[None], colours


class ShapesView(View):
    """The five matrices as squares, one per entry, each matrix centred in its own slot.

    The labels say each shape in symbols; the figures under the plot give the numbers.
    """

    figsize = (7.6, 2.4)

    def setup(self, fig):
        ax = fig.subplots()
        ax.set_xlim(-0.5, TOTAL_WIDTH + 0.5)
        ax.set_ylim(-TALLEST - 0.5, 2.6)
        ax.set_aspect("equal")
        ax.axis("off")
        self.cells = PolyCollection([], linewidths=0, animated=True)  # one collection draws fast
        ax.add_collection(self.cells)
        for name, width in SLOT_WIDTHS.items():
            x = SLOT_STARTS[name] + width / 2
            ax.text(x, 0.3, f"{name}\n{SYMBOLS[name]}", ha="center", va="bottom")
        operators = ["·", "softmax\nof rows\nof ·/√d_k\n→", "·", "="]
        names = list(SLOT_WIDTHS)
        for op, left, gap in zip(operators, names[:-1], GAPS, strict=True):
            x = SLOT_STARTS[left] + SLOT_WIDTHS[left] + gap / 2
            ax.text(x, -1.5, op, ha="center", va="center", fontsize=7 if len(op) > 1 else 14)

    def update(self, data):
        squares = [cell_squares(matrix, name) for name, matrix in data.items()]
        self.cells.set_verts(np.concatenate([corners for corners, _ in squares]))
        self.cells.set_facecolor(np.concatenate([colours for _, colours in squares]))


def shapes_explorer() -> Explorer:
    """n × m × d_k × d_v → Q, Kᵀ, the weights, V and the output, drawn to scale."""
    return Explorer(
        "The shapes of scaled dot-product attention",
        [
            Control("n", "queries n", N_VALUES, default=2),
            Control("m", "keys m", M_VALUES, default=4),
            Control("d_k", "d_k", D_K_VALUES, default=4),
            Control("d_v", "d_v", D_V_VALUES, default=3),
        ],
        shapes_frame,
        ShapesView(),
        caption=(
            "Each matrix is drawn one square per entry, so its size is its shape (its label "
            "gives the shape in symbols, the list below in numbers): Q (n × d_k) "
            "times Kᵀ (d_k × m) gives the scores, softmax over each row gives the weights "
            "(n × m, brighter is heavier), and the weights times V (m × d_v) give the output "
            "(n × d_v). Q, K and V hold random numbers."
        ),
    )
