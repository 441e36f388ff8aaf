"""Drawing helpers that several explorers' views share (matplotlib only, no engine state)."""

import numpy as np
import torch
from matplotlib.collections import PolyCollection
from matplotlib.text import Text

from attention_qa.panel.palette import INK


def boxes(x0, x1, y0, y1) -> list:
    """The corners of the rectangles [x0, x1] × [y0, y1] (each argument a number or a
    sequence of them, matched element by element), in the order given."""
    x0, x1, y0, y1 = np.broadcast_arrays(*map(np.atleast_1d, (x0, x1, y0, y1)))
    return [[(a, c), (b, c), (b, d), (a, d)] for a, b, c, d in zip(x0, x1, y0, y1, strict=True)]


def cell_patches(ax, corners: list) -> PolyCollection:
    """One polygon per cell, coloured on each frame by ``set_facecolor``, added to ``ax``
    without moving its limits. One collection is drawn in one call: several times faster
    than an image (resampled on every draw) or one patch per cell (q13's weights, q31's
    bars). Without antialiasing, a grid of cells fills the pixels an image of the same
    colours fills (tested), and neighbouring cells meet without a seam."""
    cells = PolyCollection(corners, edgecolors="none", antialiased=False, animated=True)
    return ax.add_collection(cells, autolim=False)


def sorted_weights_axes(ax):
    """Axes for one query's m weights, largest first, over [0, 1]; returns the 1/m line."""
    (uniform,) = ax.plot([0, 1], [0, 0], color=INK, linestyle="--", linewidth=1,
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


class KeptText(Text):
    """A text that keeps its picture per place: drawn once at each place it goes, then pasted.

    Drawing a text costs about a millisecond, pasting its box a few microseconds: a label
    that moves among a few places (q02's matrix labels) or a word that comes back to its
    row (q32's), is pasted in most frames. The box is kept with what lay under it before the
    text was drawn (a neighbouring label may reach into it), and pasted only over the same
    pixels: the same picture as a fresh draw, whatever was shown before.
    """

    PAD = 2  # pixels around the text's box, for the antialiased edges of its glyphs

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._kept = {}  # (words, colour, place in pixels, pixels under the box) → the box

    def draw(self, renderer):
        if not (self.get_visible() and self.get_text() and hasattr(renderer, "copy_from_bbox")):
            return super().draw(renderer)
        box = self.get_window_extent(renderer).padded(self.PAD)
        under = np.asarray(renderer.copy_from_bbox(box)).tobytes()
        place = tuple(self.get_transform().transform(self.get_position()))
        key = (self.get_text(), str(self.get_color()), place, under)
        if key in self._kept:
            renderer.restore_region(self._kept[key])
            return
        super().draw(renderer)
        self._kept[key] = renderer.copy_from_bbox(box)
