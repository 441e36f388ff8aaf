"""q21's explorer: FlashAttention's running max, running sum and partial output, block by block.

One query attends to m keys read in blocks of ``block_size`` (Dao et al., 2022, Algorithm 1;
the running normaliser of Milakov & Gimelshein, 2018). After each block the state is the
running max M, the running sum L = Σ exp(s_j − M) over the keys seen so far and the running
weighted sum of values O; O / L is the output the query would get if the keys stopped
there, and after the last block it equals exact attention.
"""

import math

import torch

from attention_qa.panel import Control, Explorer, Frame, InvalidSetting, View

BLOCK_SIZES = (4, 8, 16)
KEY_COUNTS = (16, 32, 64)
STEPS = tuple(range(1, 17))
D_V = 8
MAX_BLOCKS = max(KEY_COUNTS) // min(BLOCK_SIZES)


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


def block_frame(block_size: int, m: int, step: int) -> Frame:
    num_blocks = math.ceil(m / block_size)
    if step > num_blocks:
        raise InvalidSetting(
            f"{m} keys in blocks of {block_size} make only {num_blocks} "
            f"block{'s' if num_blocks > 1 else ''}; "
            f"pick a block index from 1 to {num_blocks}"
        )
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
        "m": m,
    }
    figures = {
        "keys read": f"{state['end']} of {m}",
        "running max": f"{state['max']:.2f} (row max {scores.max().item():.2f})",
        "running sum": f"{state['sum']:.3f}",
        "max error vs exact after this block": f"{errors[step - 1]:.1e}",
    }
    return Frame(data=data, figures=figures)


class OnlineView(View):
    figsize = (7.0, 2.5)

    def setup(self, fig):
        self.ax_s, self.ax_o, self.ax_e = fig.subplots(1, 3)
        empty = torch.zeros(1).numpy()
        self.seen = self.ax_s.stairs(empty, [0, 1], fill=True, color="#4477aa", animated=True)
        self.unseen = self.ax_s.stairs(empty, [0, 1], fill=True, color="#bbbbbb", animated=True)
        (self.max_line,) = self.ax_s.plot([], [], color="#ee6677", animated=True)
        self.ax_s.set(title="scores; red: running max", xlabel="key j", ylim=(-5, 8))
        self.partial = self.ax_o.bar(range(D_V), [0.0] * D_V, color="#4477aa", animated=True)
        (self.exact,) = self.ax_o.plot(range(D_V), [0.0] * D_V, "o", color="#222222",
                                       markersize=4, animated=True)
        self.ax_o.set(title="O / L (bars) vs exact (dots)", xlabel="output component",
                      ylim=(-2, 2))
        (self.err_line,) = self.ax_e.semilogy([], [], "o-", color="#ee6677", markersize=3,
                                              animated=True)
        self.ax_e.set(title="max error vs exact", xlabel="blocks read",
                      xlim=(0.5, MAX_BLOCKS + 0.5), ylim=(1e-17, 10))
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
        self.err_line.set_data(range(1, len(errors) + 1), errors)
        if m == self.m:
            return False
        self.m = m
        self.ax_s.set_xlim(0, m)
        return True


def online_softmax_explorer() -> Explorer:
    """block size × number of keys × block index → running max, running sum, partial output."""
    return Explorer(
        "Online softmax, one block at a time",
        [
            Control("block_size", "block size", BLOCK_SIZES, default=8),
            Control("m", "keys m", KEY_COUNTS, default=32),
            Control("step", "blocks read", STEPS, default=2),
        ],
        block_frame,
        OnlineView(),
        caption=(
            f"One query, m keys, values with d_v = {D_V}. After each block the running max M, "
            "the running sum L = Σ exp(s_j − M) and O = Σ exp(s_j − M) v_j over the keys read "
            "so far are updated; O / L is exact attention once every block has been read."
        ),
    )
