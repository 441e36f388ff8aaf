"""q12's explorer: where each head's numbers live in memory after view, transpose, contiguous.

A projection's output (B, n, d_model) is one block of memory, token after token. Splitting
it with ``view(B, n, h, d_k)`` and moving the heads forward with ``transpose(1, 2)`` only
changes the shape and the strides: head i still reads d_k numbers out of every token's row,
scattered through memory, so the tensor is no longer contiguous. ``contiguous()`` copies it
so that each head's (n, d_k) block is one run of memory.
"""

import torch
from matplotlib.colors import ListedColormap

from attention_qa.panel import Control, Explorer, Frame, View
from attention_qa.panel.palette import BLUE, CYAN, GREEN, GREY, PURPLE, RED, YELLOW

D_MODEL = 8
HEAD_COUNTS = (1, 2, 4, 8)
LENGTHS = (2, 3, 4, 5, 6)
LAYOUTS = ("view (B, n, h, d_k)", "transpose → (B, h, n, d_k)", "contiguous()")
MAX_CELLS = max(LENGTHS) * D_MODEL
HEAD_COLOURS = (BLUE, RED, GREEN, YELLOW,
                CYAN, PURPLE, GREY, "#222255")


def head_layout(num_heads: int, n: int, layout: str) -> dict:
    """The tensor after each step (B = 1), with each memory cell's head and the read order.

    ``address`` lists, in the tensor's logical (row-major) order, the storage index of each
    element; ``memory_head`` gives, for each storage index, the head that reads it.
    """
    if layout not in LAYOUTS:
        raise ValueError(f"layout must be one of {list(LAYOUTS)}, got {layout!r}")
    d_k = D_MODEL // num_heads
    x = torch.arange(n * D_MODEL).view(1, n, D_MODEL)  # (B, n, d_model), value = address
    split = x.view(1, n, num_heads, d_k)  # (B, n, h, d_k)
    if layout == LAYOUTS[0]:
        t = split
    else:
        t = split.transpose(1, 2)  # (B, h, n, d_k)
        if layout == LAYOUTS[2]:
            t = t.contiguous()
    if layout == LAYOUTS[2]:
        address = torch.arange(t.numel())  # a fresh block, read in order
        memory_head = address // (n * d_k)  # head i owns one run of n·d_k numbers
        heads_in_order = memory_head
    else:
        address = t.flatten()  # the original storage index of each element, logical order
        memory_head = (torch.arange(n * D_MODEL) % D_MODEL) // d_k
        heads_in_order = memory_head[address]
    return {
        "tensor": t,
        "address": address,
        "memory_head": memory_head,
        "heads_in_order": heads_in_order,
    }


def _runs(indices: torch.Tensor) -> str:
    """'0–1, 8–9' for the sorted storage indices [0, 1, 8, 9]."""
    runs, start = [], indices[0].item()
    prev = start
    for i in indices[1:].tolist() + [None]:
        if i is None or i != prev + 1:
            runs.append(f"{start}" if start == prev else f"{start}–{prev}")
            start = i
        prev = i
    return ", ".join(runs)


def head_layout_frame(num_heads: int, n: int, layout: str) -> Frame:
    info = head_layout(num_heads, n, layout)
    t = info["tensor"]
    head0 = (info["memory_head"] == 0).nonzero().flatten()
    figures = {
        "shape": str(tuple(t.shape)),
        "stride": str(t.stride()),
        "is_contiguous()": str(t.is_contiguous()),
        "head 0 reads memory cells": _runs(head0),
    }
    return Frame(data={**info, "n": n}, figures=figures)


class HeadLayoutView(View):
    figsize = (6.4, 3.6)

    def setup(self, fig):
        self.ax_mem, self.ax_order = fig.subplots(
            2, 1, gridspec_kw={"height_ratios": [1, 3]}
        )
        cmap = ListedColormap(list(HEAD_COLOURS))
        self.strip = self.ax_mem.imshow(
            torch.zeros(1, MAX_CELLS).numpy(), cmap=cmap, vmin=-0.5,
            vmax=len(HEAD_COLOURS) - 0.5, aspect="auto", animated=True,
        )
        self.ax_mem.set(title="memory cells, coloured by the head reading each", yticks=[])
        self.path = self.ax_order.plot([0], [0], color="#888888", linewidth=0.8,
                                       animated=True)[0]
        self.points = self.ax_order.scatter([0], [0], s=14, animated=True, clip_on=False)
        self.ax_order.set(xlabel="element, in logical order", ylabel="cell read")
        # above the plot, not on it: the title line holds the note
        self.note = self.ax_order.set_title("is_contiguous(): False (jumps: strided reads)",
                                            animated=True)
        self.n = None

    def update(self, data):
        cells = data["n"] * D_MODEL
        self.strip.set_data(data["memory_head"][None, :].numpy())  # (1, cells)
        address = data["address"]
        steps = torch.arange(len(address))
        self.path.set_data(steps.numpy(), address.numpy())
        self.points.set_offsets(torch.stack([steps, address], dim=1).numpy())
        self.points.set_facecolor([HEAD_COLOURS[i] for i in data["heads_in_order"].tolist()])
        contiguous = data["tensor"].is_contiguous()
        self.note.set_text("is_contiguous(): " + str(contiguous)
                           + (" (a straight line)" if contiguous else " (jumps: strided reads)"))
        # The axes hold this sequence's n · d_model cells, no more: the still part's state
        # is n, and the panel keeps one picture of it per n.
        if data["n"] != self.n:
            self.n = data["n"]
            ticks = range(0, cells, D_MODEL)  # one tick per token's row
            self.strip.set_extent((-0.5, cells - 0.5, 0.5, -0.5))
            self.ax_mem.set(xlim=(-0.5, cells - 0.5), xticks=ticks)
            self.ax_order.set(xlim=(-0.5, cells - 0.5), ylim=(-1, cells), xticks=ticks,
                              yticks=range(0, cells, 2 * D_MODEL if cells > 24 else D_MODEL))
        return self.n


def head_layout_explorer() -> Explorer:
    """Heads (d_model = 8) × tokens n × step → memory cells each head reads, and in what order."""
    return Explorer(
        "Memory layout of the head split",
        [
            Control("num_heads", "heads h", HEAD_COUNTS, default=2),
            Control("n", "tokens n", LENGTHS, default=4),
            Control("layout", "step", LAYOUTS, default=LAYOUTS[1]),
        ],
        head_layout_frame,
        HeadLayoutView(),
        caption=(
            f"One sequence (B = 1) of n tokens with d_model = {D_MODEL}. Top: memory cells, "
            "coloured by the head that reads them. Bottom: reading the tensor in its logical "
            "order, which memory cell each element comes from; a straight line means "
            "contiguous."
        ),
    )
