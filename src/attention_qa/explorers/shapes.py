"""q02's explorer: the shapes in softmax(Q Kᵀ / √d_k) V (Vaswani et al., 2017, equation 1).

n queries of length d_k meet m keys of length d_k; the weights are (n, m), one softmax per
query row; the m values have length d_v, so the output is (n, d_v). Each matrix is drawn as
a heatmap whose size in cells is its shape, laid out as the two products (B above A·B).
"""

import numpy as np
import torch
from matplotlib import colormaps
from matplotlib.collections import PolyCollection

from attention_qa.attention import scaled_dot_product_attention
from attention_qa.panel import Control, Explorer, Frame, View
from attention_qa.panel.plots import KeptText

N_VALUES = (1, 2, 4, 6)
M_VALUES = (2, 4, 6)
D_K_VALUES = (2, 4, 8)
D_V_VALUES = (2, 3, 5)
# The layout of a matrix product A·B = C: A left of C, B above C, so that C's rows line up
# with A's and its columns with B's. Scores = Q·Kᵀ and output = weights·V share the weights:
#            Kᵀ     V
#      Q  weights output
# Each matrix gets a fixed slot as large as its largest shape, and hugs the slot's edges
# that face its partners in the products.
COLUMN_WIDTHS = (max(D_K_VALUES), max(M_VALUES), max(D_V_VALUES))  # Q | Kᵀ, weights | V, output
TOP_HEIGHT = max(max(D_K_VALUES), max(M_VALUES))  # Kᵀ has d_k rows, V has m
BOTTOM_HEIGHT = max(N_VALUES)
GAP = 1.0  # cells between slots
LABEL_ROOM = 2.4  # cells above the top row and below the bottom one, for the labels
SLOTS = {  # name → (column, row), row 0 on top
    "Q": (0, 1),
    "Kᵀ": (1, 0),
    "weights": (1, 1),
    "V": (2, 0),
    "output": (2, 1),
}
COLUMN_STARTS = tuple(sum(COLUMN_WIDTHS[:i]) + i * GAP for i in range(3))
TOTAL_WIDTH = sum(COLUMN_WIDTHS) + 2 * GAP


def matrix_origin(name: str, rows: int, cols: int) -> tuple[float, float]:
    """Top-left corner of a rows × cols matrix in its slot (y grows upwards, 0 = row gap)."""
    column, row = SLOTS[name]
    start, width = COLUMN_STARTS[column], COLUMN_WIDTHS[column]
    x = start + width - cols if name == "Q" else start  # Q hugs the weights on its right
    y = GAP / 2 + rows if row == 0 else -GAP / 2  # the top row sits on the gap, the bottom hangs
    return x, y


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
    for name in SLOTS
}
RECIPE = "scores = Q·Kᵀ\nweights = softmax\n of scores/√d_k,\n row by row\noutput = weights·V"


def cell_squares(matrix: torch.Tensor, name: str) -> tuple[np.ndarray, np.ndarray]:
    """One square per entry, placed in the matrix's slot: corners (rows·cols, 4, 2), colours."""
    rows, cols = matrix.shape
    x0, y0 = matrix_origin(name, rows, cols)
    i, j = np.meshgrid(np.arange(rows), np.arange(cols), indexing="ij")  # (rows, cols) each
    corners = np.array([[0, 0], [CELL, 0], [CELL, -CELL], [0, -CELL]])  # (4, 2)
    origins = np.stack([x0 + j.ravel(), y0 - i.ravel()], axis=1)  # (rows·cols, 2), top-left
    cmap, low, high = COLOURS[name]
    colours = colormaps[cmap]((matrix.numpy().ravel() - low) / (high - low))  # (rows·cols, 4)
    return origins[:, None, :] + corners[None], colours


class ShapesView(View):
    """The five matrices as squares, one per entry, laid out as the two products.

    Each label sits next to its matrix and says its shape in symbols; the figures under the
    plot give the numbers.
    """

    figsize = (5.0, 4.7)

    def setup(self, fig):
        ax = fig.subplots()
        ax.set_xlim(-0.3, TOTAL_WIDTH + 0.3)
        ax.set_ylim(-GAP / 2 - BOTTOM_HEIGHT - LABEL_ROOM, GAP / 2 + TOP_HEIGHT + LABEL_ROOM)
        ax.set_aspect("equal")
        ax.axis("off")
        self.cells = PolyCollection([], linewidths=0, animated=True)  # one collection draws fast
        ax.add_collection(self.cells)
        self.labels = {
            name: KeptText(0, 0, f"{name}\n{SYMBOLS[name]}", ha="center",
                           va="bottom" if SLOTS[name][1] == 0 else "top", animated=True,
                           transform=ax.transData, clip_on=False)
            for name in SLOTS
        }
        for label in self.labels.values():
            ax.add_artist(label)
        ax.text(0, GAP / 2 + TOP_HEIGHT + LABEL_ROOM, RECIPE, ha="left", va="top",
                linespacing=1.3)

    def update(self, data):
        squares = [cell_squares(matrix, name) for name, matrix in data.items()]
        self.cells.set_verts(np.concatenate([corners for corners, _ in squares]))
        self.cells.set_facecolor(np.concatenate([colours for _, colours in squares]))
        for name, matrix in data.items():
            rows, cols = matrix.shape
            x, y = matrix_origin(name, rows, cols)
            top = SLOTS[name][1] == 0
            self.labels[name].set_position((x + cols / 2, y + 0.3 if top else y - rows - 0.2))


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
