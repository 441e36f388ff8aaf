"""q35's explorer: sequence length, state size and the number of key–value pairs → what each
kind of layer keeps to decode, and how many pairs it recalls.

Three kinds of one head of one layer (``attention_qa.recurrent``): softmax attention over its
K/V cache, which grows with the sequence; linear attention's fixed (d, d) state written by
adding k vᵀ; the same state written by DeltaNet's delta rule. Memory is
``decode_memory_elements``; recall is ``mean_recall_accuracy``, a computed toy (random unit
keys and values, every pair written once, then each key queried; the mean over five random
sets), not a trained model. The toy's recall does not depend on the sequence length: only
memory does.
"""

from functools import lru_cache

from attention_qa.panel import Control, Explorer, Frame, View
from attention_qa.panel.palette import BLUE, GREEN, RED
from attention_qa.recurrent import RECALL_KINDS, decode_memory_elements, mean_recall_accuracy

LENGTHS = (1024, 4096, 16384, 65536)
STATE_SIZES = (8, 16, 32, 64)
PAIRS = (4, 8, 16, 32, 64, 128)
COLOURS = (BLUE, RED, GREEN)
SHORT = ("softmax", "linear", "delta")
MEMORY_RANGE = (10, 3e7)


@lru_cache(maxsize=None)
def recall_curves(d: int) -> tuple[tuple[float, ...], ...]:
    """Mean recall accuracy (five random sets) of each kind at every number of pairs, for
    state size d."""
    return tuple(tuple(mean_recall_accuracy(kind, p, d) for p in PAIRS) for kind in RECALL_KINDS)


def recurrence_frame(n: int, d: int, pairs: int) -> Frame:
    curves = recall_curves(d)
    at = PAIRS.index(pairs)
    memory = [decode_memory_elements(kind, n, d) for kind in RECALL_KINDS]
    figures = {}
    for short, curve in zip(SHORT, curves, strict=True):
        figures[f"recall, {short}"] = f"{curve[at]:.0%}"
    figures["K/V cache (numbers)"] = f"{memory[0]:,}"
    figures["fixed state (numbers)"] = f"{memory[1]:,} (linear), {memory[2]:,} (delta)"
    figures["cache / state"] = f"{memory[0] / memory[1]:,.0f}×"
    data = {"curves": curves, "at": at, "memory": memory,
            "title": f"head size d = {d}: {pairs} pairs, {n:,} tokens"}
    return Frame(data=data, figures=figures)


class RecurrenceView(View):
    figsize = (6.4, 4.6)

    def setup(self, fig):
        ax_recall, ax_memory = fig.subplots(2, 1, height_ratios=(2.2, 1))
        self.lines, self.marks = [], []
        for colour, short in zip(COLOURS, SHORT, strict=True):
            (line,) = ax_recall.plot(PAIRS, [0] * len(PAIRS), marker="o", ms=4, color=colour,
                                     animated=True, label=short)
            (mark,) = ax_recall.plot([PAIRS[0]], [0], marker="o", ms=11, color=colour,
                                     linestyle="", animated=True)
            self.lines.append(line)
            self.marks.append(mark)
        ax_recall.set(xscale="log", xticks=PAIRS, xticklabels=[str(p) for p in PAIRS],
                      ylim=(-0.05, 1.05), xlabel="key–value pairs written",
                      ylabel="recall")
        ax_recall.minorticks_off()
        ax_recall.legend(loc="lower left", frameon=False)
        rows = range(len(SHORT))
        self.bars = ax_memory.barh(rows, [MEMORY_RANGE[0]] * 3, color=COLOURS, animated=True)
        ax_memory.set(xscale="log", xlim=MEMORY_RANGE, yticks=rows, yticklabels=SHORT,
                      xlabel="numbers kept to decode (one head, one layer)")
        ax_memory.invert_yaxis()
        self.title = fig.suptitle("head size", animated=True)  # text: keeps the title's line

    def update(self, data):
        for line, mark, curve in zip(self.lines, self.marks, data["curves"], strict=True):
            line.set_ydata(curve)
            mark.set_data([PAIRS[data["at"]]], [curve[data["at"]]])
        for bar, value in zip(self.bars, data["memory"], strict=True):
            bar.set_width(value)
        self.title.set_text(data["title"])


def recurrence_explorer() -> Explorer:
    """Sequence length × state size × pairs → decode memory and toy recall of each kind; the
    sequence length moves only the memory."""
    return Explorer(
        "Attention, linear attention and the delta rule: memory and recall",
        [
            Control("n", "sequence length", LENGTHS, default=4096,
                    labels=("1K", "4K", "16K", "64K")),
            Control("d", "head size d (state d × d)", STATE_SIZES, default=16),
            Control("pairs", "key–value pairs", PAIRS, default=32),
        ],
        recurrence_frame,
        RecurrenceView(),
        caption=(
            "Top: the fraction of stored pairs each kind recalls in a computed toy (random "
            "unit keys and values, each pair written once, then every key queried; the mean "
            "over five random sets): softmax attention, with sharp logits (×50), reads the "
            "whole cache; linear attention and the delta rule read a d × d state. The toy's "
            "recall does not depend on the sequence length. Bottom: the numbers each keeps "
            "to decode the next token; only the K/V cache grows with the sequence."
        ),
    )
