"""q21's explorer: FlashAttention's running max, running sum and partial output, block by block.

One query attends to m keys read in blocks of ``block_size`` (Dao et al., 2022, Algorithm 1;
the running normaliser of Milakov & Gimelshein, 2018). After each block the state is the
running max M, the running sum L = Σ exp(s_j − M) over the keys seen so far and the running
weighted sum of values O; O / L is the output the query would get if the keys stopped
there, and after the last block it equals exact attention.
"""

import math

import torch

from attention_qa.panel import Control, Explorer, Frame, View
from attention_qa.panel.palette import BLUE, GREY, INK, RED

BLOCK_SIZES = (2, 4, 8)
KEY_COUNTS = (32, 64)
# The share of the row read so far: every block size divides every quarter of every row.
READ = (0.25, 0.5, 0.75, 1.0)
READ_LABELS = ("¼", "½", "¾", "all")
D_V = 8


def query_scores_and_values(m: int, seed: int = 0):
    """Scores (m,) of one query, with its largest score late in the row, and values (m, d_v)."""
    g = torch.Generator().manual_seed(seed)
    scores = 1.5 * torch.randn(m, generator=g, dtype=torch.float64)  # (m,)
    scores[(7 * m) // 10] += 4.0  # so the running max has to move on a later block
    values = torch.randn(m, D_V, generator=g, dtype=torch.float64)  # (m, d_v)
    return scores, values


def online_trace(scores: torch.Tensor, values: torch.Tensor, block_size: int) -> list[dict]:
    """The state after each block: running max, running sum, partial output O / L."""
    run_max, run_sum = -math.inf, 0.0
    run_out = torch.zeros(values.shape[-1], dtype=values.dtype)  # (d_v,)
    trace = []
    for start in range(0, scores.shape[0], block_size):
        block = scores[start : start + block_size]  # (b,)
        new_max = max(run_max, block.max().item())
        correction = math.exp(run_max - new_max)  # rescales what earlier blocks added
        p = torch.exp(block - new_max)  # (b,)
        run_sum = run_sum * correction + p.sum().item()
        run_out = run_out * correction + p @ values[start : start + block_size]  # (d_v,)
        run_max = new_max
        trace.append(
            {"max": run_max, "sum": run_sum, "out": run_out / run_sum, "end": start + len(block)}
        )
    return trace


def block_frame(block_size: int, m: int, read: float) -> Frame:
    """The state after the blocks that cover the share ``read`` of the m keys."""
    num_blocks = math.ceil(m / block_size)
    step = math.ceil(read * num_blocks)  # blocks read
    scores, values = query_scores_and_values(m)
    exact = torch.softmax(scores, dim=-1) @ values  # (d_v,)
    trace = online_trace(scores, values, block_size)
    errors = [(t["out"] - exact).abs().max().item() for t in trace]
    state = trace[step - 1]
    data = {
        "scores": scores,
        "seen": state["end"],
        "max": state["max"],
        "true_max": scores.max().item(),
        "partial": state["out"],
        "exact": exact,
        "errors": errors[:step],
        "ends": [t["end"] / m for t in trace[:step]],
        "m": m,
    }
    figures = {
        "blocks read": f"{step} of {num_blocks}",
        "keys read": f"{state['end']} of {m}",
        "running max": f"{state['max']:.2f} (row max {scores.max().item():.2f})",
        "running sum": f"{state['sum']:.3f}",
        "max error vs exact after this block": f"{errors[step - 1]:.1e}",
    }
    return Frame(data=data, figures=figures)


class OnlineView(View):
    figsize = (6.4, 4.4)

    def setup(self, fig):
        grid = fig.add_gridspec(2, 2)
        self.ax_s = fig.add_subplot(grid[0, :])
        self.ax_o = fig.add_subplot(grid[1, 0])
        self.ax_e = fig.add_subplot(grid[1, 1])
        empty = torch.zeros(1).numpy()
        self.seen = self.ax_s.stairs(empty, [0, 1], fill=True, color=BLUE, animated=True)
        self.unseen = self.ax_s.stairs(empty, [0, 1], fill=True, color=GREY, animated=True)
        (self.max_line,) = self.ax_s.plot([], [], color=RED, linewidth=2, animated=True)
        self.ax_s.set(title="scores s_j; grey: not read yet; red: running max M",
                      xlabel="key j", ylim=(-5, 8))
        self.partial = self.ax_o.bar(range(D_V), [0.0] * D_V, color=BLUE, animated=True)
        (self.exact,) = self.ax_o.plot(range(D_V), [0.0] * D_V, "o", color=INK,
                                       markersize=5, animated=True)
        self.ax_o.set(title="O / L; dots: exact", xlabel="output component",
                      xticks=(0, 4), ylim=(-2, 2))
        (self.err_line,) = self.ax_e.semilogy([], [], "o-", color=RED, markersize=4,
                                              animated=True)
        self.ax_e.set(title="max error vs exact", xlabel="share of keys read",
                      xlim=(0, 1.05), ylim=(1e-17, 10), xticks=(0, 0.5, 1),
                      yticks=(1e-16, 1e-8, 1))
        self.m = None

    def update(self, data):
        m, seen, scores = data["m"], data["seen"], data["scores"]
        edges = torch.arange(m + 1).numpy()
        self.seen.set_data(torch.where(torch.arange(m) < seen, scores, 0.0).numpy(), edges)
        self.unseen.set_data(torch.where(torch.arange(m) >= seen, scores, 0.0).numpy(), edges)
        self.max_line.set_data([0, seen], [data["max"], data["max"]])
        for bar, height in zip(self.partial, data["partial"].tolist(), strict=True):
            bar.set_height(height)
        self.exact.set_ydata(data["exact"].numpy())
        # An error of exactly 0 cannot sit on a log axis: show it at the floor.
        errors = [max(e, 1e-17) for e in data["errors"]]
        self.err_line.set_data(data["ends"], errors)
        if m == self.m:
            return False
        self.m = m
        self.ax_s.set_xlim(0, m)
        return True


def online_softmax_explorer() -> Explorer:
    """block size × number of keys × share of keys read → running max, sum, partial output."""
    return Explorer(
        "Online softmax, one block at a time",
        [
            Control("block_size", "block size", BLOCK_SIZES, default=8),
            Control("m", "keys m", KEY_COUNTS, default=32),
            Control("read", "keys read", READ, default=0.5, labels=READ_LABELS),
        ],
        block_frame,
        OnlineView(),
        caption=(
            f"One query, m keys, values with d_v = {D_V}. After each block the running max M, "
            "the running sum L = Σ exp(s_j − M) and O = Σ exp(s_j − M) v_j over the keys read "
            "so far are updated; O / L is exact attention once every block has been read."
        ),
    )
