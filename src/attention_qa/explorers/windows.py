"""q37's explorer: the patch grid, Swin's window size and shift → which patches one patch
attends to, and what window attention costs against global attention.

The grid is drawn with its windows as alternating greys (under a shift s, the windows
along every edge are smaller: s wide at the top and left, M − s at the bottom and right),
the chosen patch in red and the patches it
attends to in blue, from ``vision.window_mask`` (equal to the cyclic-shift computation,
``vision.window_attention``; tested). The bars are Swin's Eq. (1) and (2) at the width
C = 96 of Swin-T's first stage (Liu et al., 2021, §3.2 and §3.3), global attention = 1.
"""

import numpy as np

from attention_qa.panel import Control, Explorer, Frame, InvalidSetting, View
from attention_qa.panel.palette import BLUE, GREY
from attention_qa.vision import msa_flops, window_mask, window_msa_flops

GRIDS = (8, 12, 16)
WINDOWS = (2, 3, 4)
SHIFTS = ("off", "on")
PATCHES = ("top-left corner", "centre", "bottom-right corner")
WIDTH = 96
GREYS = (np.array([0.93, 0.93, 0.93]), np.array([0.78, 0.78, 0.78]))
SEEN = np.array([0.27, 0.47, 0.67])  # #4477aa
CHOSEN = np.array([0.93, 0.40, 0.47])  # #ee6677


def patch_index(grid: int, patch: str) -> tuple[int, int]:
    if patch == "top-left corner":
        return 0, 0
    if patch == "centre":
        return grid // 2, grid // 2
    return grid - 1, grid - 1


def window_frame(grid: int, window: int, shift: str, patch: str) -> Frame:
    if grid % window:
        raise InvalidSetting(f"a {window} × {window} window does not tile a {grid} × {grid} grid")
    s = window // 2 if shift == "on" else 0
    mask = window_mask(grid, grid, window, s)  # (N, N)
    r, c = patch_index(grid, patch)
    seen = mask[r * grid + c].reshape(grid, grid).numpy()  # (grid, grid)
    groups = (np.arange(grid) - s) // window  # (grid,) window index along each axis
    parity = (groups[:, None] + groups[None, :]) % 2  # (grid, grid)
    image = np.where(parity[..., None] == 0, GREYS[0], GREYS[1])  # (grid, grid, 3)
    image[seen] = SEEN
    image[r, c] = CHOSEN
    glob, local = msa_flops(grid, grid, WIDTH), window_msa_flops(grid, grid, WIDTH, window)
    n = grid * grid
    figures = {
        "patches this patch attends to": f"{int(seen.sum())} of {n}",
        "score entries per head": f"{int(mask.sum()):,} of {n * n:,}",
        f"window / global attention cost (C = {WIDTH})": f"{local / glob:.2f}",
    }
    return Frame(data={"image": image, "grid": grid, "costs": (1.0, local / glob)},
                 figures=figures)


class WindowView(View):
    figsize = (6.4, 3.4)

    def setup(self, fig):
        self.ax, self.bars_ax = fig.subplots(1, 2, width_ratios=(1.6, 1))
        grid = GRIDS[0]
        self.img = self.ax.imshow(np.ones((grid, grid, 3)), animated=True,
                                  interpolation="nearest")
        self.ax.set(title="red attends to blue", xticks=[], yticks=[])
        self.bars = self.bars_ax.bar([0, 1], [1, 1], color=[GREY, BLUE],
                                     animated=True)
        self.bars_ax.set(xticks=[0, 1], xticklabels=["global", "window"], ylim=(0, 1.05),
                         title="cost, Eq. (1) = 1")
        self.grid = None

    def update(self, data):
        grid = data["grid"]
        self.img.set_data(data["image"])
        for bar, height in zip(self.bars, data["costs"], strict=True):
            bar.set_height(height)
        if grid == self.grid:
            return False
        self.grid = grid
        self.img.set_extent((-0.5, grid - 0.5, grid - 0.5, -0.5))
        self.ax.set(xlim=(-0.5, grid - 0.5), ylim=(grid - 0.5, -0.5))
        return True


def window_explorer() -> Explorer:
    """grid × window × shift × patch → the patches one patch attends to, and the cost."""
    return Explorer(
        "Swin's windows and shifted windows over the patch grid",
        [
            Control("grid", "grid (patches per side)", GRIDS, default=8),
            Control("window", "window M", WINDOWS, default=4),
            Control("shift", "shift by M // 2", SHIFTS),
            Control("patch", "patch", PATCHES),
        ],
        window_frame,
        WindowView(),
        caption=(
            "Each square is a patch; alternating greys mark the windows. Shifted, the windows' "
            "borders move s = ⌊M/2⌋ patches right and down, so the windows along all four "
            "edges are smaller (s wide at the top and left, M − s at the bottom and right; "
            "with an even M, four small corners and the edge strips between them), as Swin's "
            "cyclic shift and mask make them. "
            f"Bars: Swin's Eq. (1) and (2) at C = {WIDTH}, global attention = 1."
        ),
    )
