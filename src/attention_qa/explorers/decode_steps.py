"""q09's explorer: which attention scores one decoding step computes, with and without a cache.

At step t the sequence holds t tokens. Without a cache the model runs again over all t
positions, and the package's attention computes the whole (t, t) score matrix before masking
its upper triangle. With a K/V cache (Pope et al., 2022, "Efficiently Scaling Transformer
Inference") the keys and values of the first t − 1 positions are kept, and only the new
token's query meets the t keys: one row of t scores. Summed over N steps, that is about
N³/3 score entries against N²/2.
"""

import numpy as np
from matplotlib.patches import Patch

from attention_qa.costs import cumulative_scores, scores_per_step
from attention_qa.panel import Control, Explorer, Frame, View
from attention_qa.panel.palette import BLUE, INK, RED

MAX_STEPS = 16
STEPS = tuple(range(1, MAX_STEPS + 1))
CACHE_MODES = ("off", "on")

# cell colours (Tol palette)
NEW = (0.267, 0.467, 0.667, 1.0)  # #4477aa: computed at this step and used
WASTED = (0.8, 0.733, 0.267, 1.0)  # #ccbb44: computed at this step, then masked
EARLIER = (0.733, 0.733, 0.733, 1.0)  # #bbbbbb: computed at an earlier step, not redone
EMPTY = (1.0, 1.0, 1.0, 1.0)


def step_grid(t: int, use_cache: bool) -> np.ndarray:
    """(MAX_STEPS, MAX_STEPS) codes: 0 empty, 1 new and used, 2 new but masked, 3 earlier."""
    grid = np.zeros((MAX_STEPS, MAX_STEPS), dtype=int)
    i, j = np.indices((t, t))
    if use_cache:
        grid[:t, :t][j <= i] = 3
        grid[t - 1, :t] = 1
    else:
        grid[:t, :t] = np.where(j <= i, 1, 2)
    return grid


def decode_step_frame(t: int, cache: str) -> Frame:
    use_cache = cache == "on"
    figures = {
        "scores at this step": f"{scores_per_step(t, use_cache)}",
        "scores over steps 1..t": f"{cumulative_scores(t, use_cache)}",
        "the other mode over steps 1..t": f"{cumulative_scores(t, not use_cache)}",
    }
    data = {
        "grid": step_grid(t, use_cache),
        "t": t,
        "cumulative": [cumulative_scores(s, use_cache) for s in range(1, t + 1)],
    }
    return Frame(data=data, figures=figures)


class DecodeStepView(View):
    """The score entries of this step above, beside one legend; the work so far below."""

    figsize = (6.0, 4.8)

    def setup(self, fig):
        grid = fig.add_gridspec(2, 2, height_ratios=(1.25, 1), width_ratios=(1, 1.1))
        ax_grid, ax_key = fig.add_subplot(grid[0, 0]), fig.add_subplot(grid[0, 1])
        ax_work = fig.add_subplot(grid[1, :])
        self.palette = np.array([EMPTY, NEW, WASTED, EARLIER])
        self.image = ax_grid.imshow(self.palette[np.zeros((MAX_STEPS, MAX_STEPS), int)],
                                    animated=True)
        ax_grid.set(title="scores at step t", xlabel="key j", ylabel="query i",
                    xticks=range(0, MAX_STEPS, 5), yticks=range(0, MAX_STEPS, 5))
        cells = [Patch(color=c) for c in (NEW, WASTED, EARLIER)]
        cell_labels = ["computed now", "computed, masked", "from earlier steps"]
        steps = np.arange(1, MAX_STEPS + 1)
        lines = []
        for use_cache, colour, label in ((False, RED, "no cache: total"),
                                         (True, BLUE, "K/V cache: total")):
            total = [cumulative_scores(int(s), use_cache) for s in steps]
            lines += ax_work.plot(steps, total, color=colour, linewidth=1.5, alpha=0.5,
                                  label=label)
        (self.current,) = ax_work.plot([], [], color=INK, marker="o", markersize=3,
                                       animated=True, label="this setting")
        top = 2 * cumulative_scores(MAX_STEPS, False)
        ax_work.set(xlabel="step t", ylabel="entries so far", yscale="log",
                    xlim=(0.5, MAX_STEPS + 0.5), ylim=(0.8, top), yticks=[1, 10, 100, 1000])
        # One legend for both panels, in the space beside the grid: off the data.
        ax_key.axis("off")
        ax_key.legend([*cells, *lines, self.current], [*cell_labels, *(ln.get_label()
                      for ln in lines), "this setting"], loc="center left", frameon=False,
                      handlelength=1.2, borderaxespad=0)

    def update(self, data):
        self.image.set_data(self.palette[data["grid"]])
        t = data["t"]
        self.current.set_data(np.arange(1, t + 1), data["cumulative"])


def decode_step_explorer() -> Explorer:
    """Decoding step × cache on/off → the score entries computed, and the work so far."""
    return Explorer(
        "The work of one decoding step, with and without a K/V cache",
        [
            Control("t", "step t (tokens so far)", STEPS, default=8),
            Control("cache", "K/V cache", CACHE_MODES, default="off"),
        ],
        decode_step_frame,
        DecodeStepView(),
        caption=(
            "Counts are score entries q·k per head and layer. Without a cache, step t "
            "recomputes the whole t × t matrix (its upper triangle is then masked); with "
            "a cache, it computes one row of t entries for the new token."
        ),
    )
