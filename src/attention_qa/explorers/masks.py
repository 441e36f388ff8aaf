"""q07's explorer: what a padding mask, a causal mask and both together do to the weights.

Boolean masks follow the package's convention, True = may attend (PyTorch's
``scaled_dot_product_attention``). A padding mask hides the keys past a sequence's valid
length; a causal mask hides the keys after each query (Vaswani et al., 2017, section 3.2.3).
Blocked scores are set to the dtype's most negative finite value before the softmax.
"""

import numpy as np
import torch
from matplotlib import colormaps
from matplotlib.colors import ListedColormap

from attention_qa.masks import causal_mask, combine_masks, padding_mask
from attention_qa.panel import Control, Explorer, Frame, InvalidSetting, View
from attention_qa.panel.palette import BLUE, RED

MASK_TYPES = ("none", "padding", "causal", "padding + causal")
PADDINGS = (0, 1, 2, 3)  # padded positions at the end; every sequence keeps a real token
SEQ_LENGTHS = (4, 6, 8)
MAX_LEN = max(SEQ_LENGTHS)
SCORE_LIMIT = 3.0  # colour range of the scores panel

BLOCKED = (0.733, 0.733, 0.733, 1.0)  # Tol grey #bbbbbb: a blocked entry
OUTSIDE = (1.0, 1.0, 1.0, 1.0)  # beyond the sequence length


def base_scores(n: int, seed: int = 0) -> torch.Tensor:
    """Fixed scaled scores of n queries against n keys (standard normal)."""
    g = torch.Generator().manual_seed(seed)
    return torch.randn(MAX_LEN, MAX_LEN, generator=g)[:n, :n]  # (n, n)


def build_mask(mask_type: str, valid_len: int, n: int) -> torch.Tensor:
    """Bool (n, n), True = may attend, for one sequence of n positions, valid_len real."""
    if mask_type not in MASK_TYPES:
        raise ValueError(f"mask_type must be one of {list(MASK_TYPES)}, got {mask_type!r}")
    if valid_len > n:
        raise InvalidSetting(
            f"the valid length {valid_len} is longer than the sequence ({n} positions); "
            f"pick a valid length of at most {n}"
        )
    keys = padding_mask([valid_len], n)[0]  # (n,) True on the real tokens
    if mask_type == "none":
        return torch.ones(n, n, dtype=torch.bool)
    if mask_type == "padding":
        return keys.expand(n, n).clone()  # every query row hides the padded keys
    if mask_type == "causal":
        return causal_mask(n)
    return combine_masks(causal_mask(n), keys.unsqueeze(0))  # (n, n)


def mask_frame(mask_type: str, padding: int, n: int) -> Frame:
    """The mask, masked scores and weights of n positions whose last ``padding`` are padding."""
    valid_len = n - padding
    mask = build_mask(mask_type, valid_len, n)  # (n, n)
    scores = base_scores(n)  # (n, n)
    masked = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)  # (n, n)
    weights = torch.softmax(masked, dim=-1)  # (n, n)
    leaked = weights.masked_fill(mask, 0.0).sum(-1).max().item()
    on_padding = weights[:, valid_len:].sum(-1).max().item()  # the most any query puts there
    figures = {
        "allowed entries": f"{int(mask.sum())} of {n * n}",
        "keys seen by the first query": f"{int(mask[0].sum())}",
        "keys seen by the last query": f"{int(mask[-1].sum())}",
        "largest weight on a blocked key": f"{leaked:.1g}",
        "most weight a query puts on padding": f"{on_padding:.2f}" if padding else "no padding",
    }
    data = {"mask": mask, "scores": scores, "weights": weights, "valid_len": valid_len}
    return Frame(data=data, figures=figures)


def _rgba(values: np.ndarray, allowed: np.ndarray, lo: float, hi: float, cmap) -> np.ndarray:
    """An (MAX_LEN, MAX_LEN, 4) image: colour where allowed, grey where blocked."""
    n = values.shape[0]
    image = np.empty((MAX_LEN, MAX_LEN, 4))
    image[:] = OUTSIDE
    image[:n, :n] = cmap(np.clip((values - lo) / (hi - lo), 0, 1))
    image[:n, :n][~allowed] = BLOCKED
    return image


class MaskView(View):
    """Mask, masked scores and weights side by side; a red line marks where padding starts."""

    figsize = (6.4, 2.75)

    def setup(self, fig):
        axes = fig.subplots(1, 3, sharey=True)
        titles = ("mask", "masked scores", "weights")
        self.images, self.bounds = [], []
        for ax, title in zip(axes, titles, strict=True):
            image = ax.imshow(np.ones((MAX_LEN, MAX_LEN, 4)), animated=True)
            (bound,) = ax.plot([0, 0], [-0.5, MAX_LEN - 0.5], color=RED, linewidth=2,
                               animated=True)
            ax.set(title=title, xticks=range(0, MAX_LEN, 2), yticks=range(0, MAX_LEN, 2),
                   xlim=(-0.5, MAX_LEN - 0.5), ylim=(MAX_LEN - 0.5, -0.5))
            self.images.append(image)
            self.bounds.append(bound)
        axes[0].set_ylabel("query i")
        fig.supxlabel("key j (right of the red line: padding)", fontsize="medium")
        self.cmap = colormaps["viridis"]
        # One colour for every allowed cell: Tol blue #4477aa.
        self.mask_cmap = ListedColormap([BLUE])

    def update(self, data):
        mask = data["mask"].numpy()
        self.images[0].set_data(_rgba(mask.astype(float), mask, 0.0, 1.0, self.mask_cmap))
        self.images[1].set_data(
            _rgba(data["scores"].numpy(), mask, -SCORE_LIMIT, SCORE_LIMIT, self.cmap)
        )
        self.images[2].set_data(_rgba(data["weights"].numpy(), mask, 0.0, 1.0, self.cmap))
        n, x = len(mask), data["valid_len"] - 0.5
        for bound in self.bounds:
            bound.set_data([x, x], [-0.5, n - 0.5])
            bound.set_visible(data["valid_len"] < n)  # no line without padding


def mask_explorer() -> Explorer:
    """Mask type × padding × sequence length → the mask, the masked scores, the weights."""
    return Explorer(
        "Padding and causal masks",
        [
            Control("mask_type", "mask", MASK_TYPES, default="padding + causal"),
            Control("padding", "padding tokens", PADDINGS, default=2),
            Control("n", "sequence length", SEQ_LENGTHS, default=6),
        ],
        mask_frame,
        MaskView(),
        caption=(
            "Blue cells of the mask may attend; grey cells are blocked: their score is "
            "replaced by the most negative float32 before the softmax, so their weight is 0. "
            "Scores run from −3 (dark) to 3 (yellow), weights from 0 to 1. The last positions "
            "are padding (right of the red line): only a padding mask hides them as keys; the "
            "padded queries still get a row of weights, which a loss mask discards."
        ),
    )
