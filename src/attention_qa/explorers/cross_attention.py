"""q13's explorer: the three uses of multi-head attention in the encoder–decoder Transformer.

Follows Vaswani et al. (2017), "Attention Is All You Need", section 3.2.3: encoder
self-attention (queries, keys and values all from the source), masked decoder self-attention
(all from the target, each position seeing only earlier ones) and encoder–decoder
("cross") attention, whose queries come from the decoder and whose keys and values come from
the encoder's output, the *memory*. The panel draws the weight map of one head on a fixed
grid, so its shape (n × m, n × n or m × m) can be read off the picture.
"""

from functools import cache

import numpy as np
import torch
from matplotlib import colormaps
from matplotlib.cm import ScalarMappable
from matplotlib.colors import Normalize

from attention_qa.masks import causal_mask, padding_mask
from attention_qa.multihead import MultiHeadAttention
from attention_qa.panel import Control, Explorer, Frame, InvalidSetting, View
from attention_qa.panel.palette import PALE_GREY, RED
from attention_qa.panel.plots import boxes, cell_patches
from attention_qa.training import single_thread

KINDS = ("encoder self", "decoder self (causal)", "cross (decoder → encoder)")
SOURCE_LENGTHS = (4, 6, 8)
TARGET_LENGTHS = (3, 5, 8)
# Padding tokens at the end of the source: every count leaves at least one real token.
PADDING_COUNTS = (0, 1, 2, 3)
MAX_LEN = 8
D_MODEL = 16
CMAP = colormaps["viridis"]


@cache
def _setup(seed: int = 0):
    """Seeded source and target token vectors and two attention layers (one head each).

    Made once per seed (every setting reads the same layers; nothing writes to them)."""
    torch.manual_seed(seed)
    source = 3 * torch.randn(1, MAX_LEN, D_MODEL)  # (B, m_max, d_model)
    target = 3 * torch.randn(1, MAX_LEN, D_MODEL)  # (B, n_max, d_model)
    encoder_self = MultiHeadAttention(D_MODEL, 1)
    cross = MultiHeadAttention(D_MODEL, 1)
    return source, target, encoder_self, cross


def three_attentions(kind: str, m: int, n: int, valid: int, seed: int = 0):
    """Return ``(weights, where_from)`` of one use of attention: weights (rows, cols).

    ``valid`` of the ``m`` source tokens are real; the rest are padding, masked as keys.
    The memory is the source after one layer of encoder self-attention (with a residual).
    """
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    if valid > m:
        raise InvalidSetting(
            f"the valid source length ({valid}) cannot exceed the source length m = {m}"
        )
    source, target, encoder_self, cross = _setup(seed)
    src = source[:, :m]  # (B, m, d_model)
    tgt = target[:, :n]  # (B, n, d_model)
    pad = padding_mask([valid], m)[:, None, None, :]  # (B, 1, 1, m): keys only
    with torch.no_grad():
        encoded, enc_weights = encoder_self(src, src, src, pad)  # (B, m, d), (B, 1, m, m)
        memory = src + encoded  # (B, m, d_model): the encoder's output
        if kind == KINDS[0]:
            return enc_weights[0, 0], ("source", "source")
        if kind == KINDS[1]:
            _, weights = cross(tgt, tgt, tgt, causal_mask(n))  # (B, 1, n, n)
            return weights[0, 0], ("target", "target")
        _, weights = cross(tgt, memory, memory, pad)  # (B, 1, n, m)
        return weights[0, 0], ("target (decoder)", "memory (encoder output)")


def cross_attention_frame(kind: str, m: int, n: int, padding: int) -> Frame:
    valid = m - padding  # real source tokens
    with single_thread():  # 8 × 8: a second thread costs more than the work
        weights, (q_from, kv_from) = three_attentions(kind, m, n, valid)  # (rows, cols)
    rows, cols = weights.shape
    padded_keys = kind != KINDS[1] and valid < m
    on_padding = weights[:, valid:].sum(-1).max().item() if padded_keys else 0.0
    data = {"weights": weights, "padded_from": valid if padded_keys else None, "kind": kind}
    figures = {
        "weights": f"{rows} × {cols}",
        "queries from": q_from,
        "keys and values from": kv_from,
        "real source tokens": f"{valid} of {m}" if kind != KINDS[1] else "not used",
        "largest weight on padding": f"{on_padding:.3f}",
        "row sums": f"{weights.sum(-1).min().item():.3f} to {weights.sum(-1).max().item():.3f}",
    }
    return Frame(data=data, figures=figures)


class CrossAttentionView(View):
    figsize = (4.8, 3.2)

    def setup(self, fig):
        from matplotlib.patches import Rectangle

        ax = fig.subplots()
        # one square per weight, row by row, coloured in ``update`` (the same pixels as an
        # image of the weights)
        rows, columns = np.divmod(np.arange(MAX_LEN * MAX_LEN), MAX_LEN)
        self.cells = cell_patches(ax, boxes(columns - 0.5, columns + 0.5, rows - 0.5, rows + 0.5))
        self.padding = Rectangle(
            (0, -0.5), 0, 0, fill=False, hatch="//", edgecolor=RED, linewidth=1.5,
            animated=True,
        )
        ax.add_patch(self.padding)
        ax.set(
            xlim=(-0.5, MAX_LEN - 0.5), ylim=(MAX_LEN - 0.5, -0.5),
            xticks=range(MAX_LEN), yticks=range(MAX_LEN),
            xlabel="key position j (hatched: padding)", ylabel="query position i",
            aspect="equal",
        )
        ax.set_facecolor(PALE_GREY)
        self.title = ax.set_title("weights", animated=True)  # text: keeps the title's line
        fig.colorbar(ScalarMappable(Normalize(0, 1), CMAP), ax=ax, label="weight")

    def update(self, data):
        weights = data["weights"]
        colours = np.zeros((MAX_LEN, MAX_LEN, 4))  # transparent outside the matrix
        # as bytes first: the very colours an image of the weights shows, so the picture
        # (and the book's saved copy of it) stays the same to the bit
        colours[: weights.shape[0], : weights.shape[1]] = CMAP(weights.numpy(), bytes=True) / 255
        self.cells.set_facecolor(colours.reshape(-1, 4))
        start = data["padded_from"]
        if start is None:
            self.padding.set_visible(False)
        else:
            self.padding.set_visible(True)
            self.padding.set_bounds(start - 0.5, -0.5, weights.shape[1] - start, weights.shape[0])
        rows, cols = weights.shape
        self.title.set_text(f"{data['kind']}: weights {rows} × {cols}")


def cross_attention_explorer() -> Explorer:
    """Kind of attention × source length m × target length n × padding tokens in the source."""
    return Explorer(
        "Self- and cross-attention: where Q, K and V come from",
        [
            Control("kind", "attention", KINDS, default=KINDS[2]),
            Control("m", "source length m", SOURCE_LENGTHS, default=6),
            Control("n", "target length n", TARGET_LENGTHS, default=5),
            Control("padding", "source padding", PADDING_COUNTS, default=2),
        ],
        cross_attention_frame,
        CrossAttentionView(),
        caption=(
            "One head of a seeded, untrained layer. Rows are queries, columns keys; the grey "
            "area lies outside the weight matrix. The last source tokens are padding: their "
            "columns (hatched) get weight 0. Decoder self-attention ignores "
            "the source controls: its map is n × n and causal."
        ),
    )
