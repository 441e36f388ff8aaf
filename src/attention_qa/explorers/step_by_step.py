"""q03's explorer: one query of a 3-token example walked through the steps of attention.

Scores q·k_j, scaled by 1/√d_k (or not), softmax into weights, and the weighted sum
Σ_j p_j v_j (Vaswani et al., 2017, equation 1). The example is small enough that every
number can be printed: 3 tokens with d_model = d_k = d_v = 4.
"""


import torch

from attention_qa.attention import (
    WORKED_SCALINGS,
    WORKED_TOKENS,
    worked_steps,
)
from attention_qa.panel import Control, Explorer, Frame, View
from attention_qa.panel.palette import BLUE, GREEN, INK, RED

TOKENS = WORKED_TOKENS
SCALINGS = WORKED_SCALINGS
steps = worked_steps  # the name used before
COLOURS = (BLUE, RED, GREEN)  # one per key token


def _ranges():
    """Fixed y-limits covering every frame, so the axes never move."""
    everything = [steps(t, s) for t in range(len(TOKENS)) for s in SCALINGS]
    score_values = torch.cat([torch.cat([e["scores"], e["scaled"]]) for e in everything])
    out_values = torch.cat([torch.cat([e["parts"].flatten(), e["output"]]) for e in everything])

    def padded(x):
        low, high = min(x.min().item(), 0.0), max(x.max().item(), 0.0)
        pad = 0.15 * (high - low)
        return low - pad, high + pad

    return padded(score_values), padded(out_values)


SCORE_LIMITS, OUTPUT_LIMITS = _ranges()


def step_frame(token: str, scaling: str) -> Frame:
    data = steps(TOKENS.index(token), scaling)

    def fmt(x):
        return "(" + ", ".join(f"{v:.2f}" for v in x.tolist()) + ")"

    figures = {
        "scores q·k_j": fmt(data["scores"]),
        "scaled": fmt(data["scaled"]),
        "weights": fmt(data["weights"]),
        "output Σ p_j v_j": fmt(data["output"]),
    }
    return Frame(data=data, figures=figures)


class StepView(View):
    """Scores and scaled scores on top, weights and the weighted sum below."""

    figsize = (6.2, 4.8)

    def setup(self, fig):
        grid = fig.subplots(2, 2, gridspec_kw={"width_ratios": [1, 1.35]})
        axes = [grid[0, 0], grid[0, 1], grid[1, 0], grid[1, 1]]
        x = range(len(TOKENS))
        titles = ("1. scores q·k_j", "2. scaled", "3. softmax weights", "4. Σ p_j v_j")
        self.bars = {}
        for ax, key, title in zip(axes[:3], ("scores", "scaled", "weights"), titles, strict=False):
            self.bars[key] = ax.bar(x, [0.0] * 3, color=COLOURS, animated=True)
            ax.set_title(title)
            ax.set_xticks(list(x), [f"k({t})" for t in TOKENS])
            ax.axhline(0, color=INK, lw=0.6)
        for ax in axes[:2]:
            ax.set_ylim(*SCORE_LIMITS)
        axes[2].set_ylim(0, 1.2)
        axes[2].set_yticks([0, 0.5, 1])
        self.weight_labels = [  # the numbers of step 1 and 2 are in the list under the plot
            axes[2].text(i, 0, "", ha="center", va="bottom", animated=True) for i in x
        ]
        self.note = axes[1].set_title(titles[1], animated=True)  # says the factor
        ax = axes[3]
        width = 0.25
        self.parts = []
        for j, colour in enumerate(COLOURS):
            positions = [i + (j - 1) * width for i in range(4)]
            self.parts.append(ax.bar(positions, [0.0] * 4, width=width, color=colour,
                                     animated=True, label=f"p·v ({TOKENS[j]})"))
        (self.total,) = ax.plot(range(4), [0.0] * 4, linestyle="", marker="_", ms=22, mew=2.5,
                                color=INK, animated=True, label="output")
        ax.set(title=titles[3], ylim=OUTPUT_LIMITS, xlim=(-0.6, 3.6), xlabel="dimension")
        ax.set_xticks(range(4))
        ax.axhline(0, color=INK, lw=0.6)
        fig.legend([self.total, *(bars[0] for bars in self.parts)],
                   ["output", *(f"p·v ({t})" for t in TOKENS)],
                   loc="outside lower center", ncol=4, frameon=False, markerscale=0.5,
                   handlelength=1.0, columnspacing=0.8, handletextpad=0.4)

    def update(self, data):
        for key in ("scores", "scaled", "weights"):
            for bar, value in zip(self.bars[key], data[key].tolist(), strict=True):
                bar.set_height(value)
        for label, value in zip(self.weight_labels, data["weights"].tolist(), strict=True):
            label.set_position((label.get_position()[0], value))
            label.set_text(f"{value:.2f}")
        same = torch.equal(data["scores"], data["scaled"])
        self.note.set_text("2. not scaled" if same else "2. scaled: ÷√4 = ÷2")
        for bars, row in zip(self.parts, data["parts"].tolist(), strict=True):
            for bar, value in zip(bars, row, strict=True):
                bar.set_height(value)
        self.total.set_ydata(data["output"].numpy())


def step_explorer() -> Explorer:
    """Query token × scaling → scores, scaled scores, weights and the weighted sum."""
    return Explorer(
        "Self-attention step by step, one query at a time",
        [
            Control("token", "query token", TOKENS, default="cat"),
            Control("scaling", "scaling", SCALINGS, default="÷√d_k"),
        ],
        step_frame,
        StepView(),
        caption=(
            "Three tokens, d_k = d_v = 4. The query of the chosen token is scored against "
            "the keys of all three tokens (colours); the scores are divided by √d_k = 2 (or "
            "not), softmax turns them into weights, and each value vector is multiplied by its "
            "weight; the black marks are the sums, the output."
        ),
    )
