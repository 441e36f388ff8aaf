"""q08's explorer: perturb one token and see which output positions of self-attention change.

A causal mask (Vaswani et al., 2017, section 3.2.3) lets position i attend to keys 0..i. If
it is right, changing the token at position p can change the outputs at p, p+1, … only;
a change at an earlier position is a leak of the future into the past. Masks are boolean,
True = may attend, as everywhere in the package.
"""

import numpy as np

from attention_qa.causality import (
    LEAK_CHANGE_TOL,
    LEAK_MASK_NAMES,
    LEAK_SEQ_LEN,
    output_change,
)
from attention_qa.panel import Control, Explorer, Frame, View
from attention_qa.panel.palette import BLUE, INK, RED

SEQ_LEN, MASK_NAMES, CHANGE_TOL = LEAK_SEQ_LEN, LEAK_MASK_NAMES, LEAK_CHANGE_TOL


def leak_frame(position: int, mask_name: str) -> Frame:
    delta = output_change(position, mask_name)  # (n,)
    changed = delta > CHANGE_TOL
    leaked = [i for i in range(position) if changed[i]]
    figures = {
        "positions that change": ", ".join(str(i) for i in range(SEQ_LEN) if changed[i]) or "none",
        "earlier positions that change (leaks)": ", ".join(map(str, leaked)) or "none",
    }
    return Frame(data={"delta": delta, "position": position, "leaked": leaked},
                 figures=figures)


class LeakView(View):
    figsize = (6.0, 3.2)

    def setup(self, fig):
        ax = fig.subplots()
        self.bars = ax.bar(range(SEQ_LEN), np.zeros(SEQ_LEN), color=BLUE, animated=True)
        self.marker = ax.axvline(0, color=INK, linestyle="--", linewidth=1, animated=True)
        ax.set(
            xlabel="output position",
            ylabel="max |Δ output|",
            xticks=range(SEQ_LEN),
            xlim=(-0.6, SEQ_LEN - 0.4),
            ylim=(0, 0.5),
        )
        # The count of leaks goes in the title: a clipped bar may reach any corner.
        self.note = ax.set_title("change of each output", animated=True)
        fig.legend(
            [self.bars[0], ax.bar([0], [0], color=RED)[0], self.marker],
            ["changed", "leak: changed earlier", "perturbed token"],
            loc="outside lower center", ncol=3, frameon=False, handlelength=1.2,
            columnspacing=1.0, handletextpad=0.4,
        )

    def update(self, data):
        delta = data["delta"].clamp(max=0.49).numpy()
        for i, bar in enumerate(self.bars):
            bar.set_height(delta[i])
            bar.set_color(RED if i in data["leaked"] else BLUE)
        self.marker.set_xdata([data["position"], data["position"]])
        leaks = len(data["leaked"])
        self.note.set_text(f"change of each output: {leaks} leak{'s' if leaks != 1 else ''}")


def causal_leak_explorer() -> Explorer:
    """Perturbed position × mask variant → |Δ output| at every position."""
    return Explorer(
        "Leak test: perturb one token, watch the outputs",
        [
            Control("position", "perturbed position", tuple(range(SEQ_LEN)), default=4),
            Control("mask_name", "mask", MASK_NAMES, default="correct"),
        ],
        leak_frame,
        LeakView(),
        caption=(
            "One self-attention layer (2 heads, d_model = 16) over 8 token embeddings; the "
            "token at the dashed line is swapped for another. A red bar is an output before "
            "the perturbed position that changed: the future leaked into the past. Bars are "
            "clipped at 0.5."
        ),
    )
