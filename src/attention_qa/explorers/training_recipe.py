"""q40's explorers: the learning-rate schedule and what warm-up does to a small model, and the
memory of training a named model size.

``warmup_explorer``: a schedule (constant, linear decay as BERT, cosine decay), its warm-up
and its peak → the learning rate of each step, and a four-layer language model
(``recipe.train_tiny_lm``) trained under it, Post-LN and Pre-LN, beside the same runs without
warm-up: loss and global gradient norm per step. A toy: it shows what warm-up does to this
model at these learning rates, not what it does at scale (Xiong et al., 2020; Liu et al.,
2020, report that).

``training_memory_explorer``: parameters × optimizer × precision → bytes of weights,
gradients and optimizer state (``recipe.training_memory_bytes``; ZeRO §3.1), activations
excluded, against one 80 GB GPU.
"""

import json
from functools import cache
from pathlib import Path

from attention_qa.panel import Control, Explorer, Frame, View
from attention_qa.recipe import schedule_lr, train_tiny_lm, training_memory_bytes

STEPS, LAYERS = 40, 4
SCHEDULES = ("constant", "linear", "cosine")
SCHEDULE_LABELS = ("constant", "linear decay", "cosine decay")
WARMUPS = (0, 5, 10)
PEAKS = (0.01, 0.03, 0.1)
NORMS = {"Post-LN": (False, "#ee6677"), "Pre-LN": (True, "#4477aa")}
LOSS_TOP = 4.5
# The gradient norm on a log axis: 0.01 to 30 holds every run of the grid unclipped (the
# largest, Post-LN with a cosine, warm-up 5 and peak 0.1, is 25.4 at step 29).
NORM_BOTTOM, NORM_TOP = 0.01, 30.0


# Every run the panel shows, trained once by ``write_runs`` (scripts/precompute_runs.py) and
# stored: 54 runs take about 15 s, far more than a frame may (tests/test_explorers_training_
# recipe.py trains some again and compares).
RUNS_FILE = Path(__file__).resolve().parents[1] / "data" / "warmup_runs.json"
DIGITS = 8  # significant digits stored: the panel prints at most three


def run_key(norm_first: bool, schedule: str, warmup_steps: int, peak_lr: float) -> str:
    return f"{'pre' if norm_first else 'post'}/{schedule}/{warmup_steps}/{peak_lr}"


def train_run(norm_first: bool, schedule: str, warmup_steps: int, peak_lr: float) -> dict:
    """One run of the grid, trained now: loss and gradient norm per step."""
    run = train_tiny_lm(norm_first=norm_first, schedule=schedule, warmup_steps=warmup_steps,
                        peak_lr=peak_lr, steps=STEPS, num_layers=LAYERS)
    return {key: [float(f"{v:.{DIGITS}g}") for v in run[key]] for key in ("loss", "grad_norm")}


def grid() -> list[tuple]:
    """Every (norm_first, schedule, warm-up, peak) a frame needs (with and without warm-up)."""
    return [(first, schedule, warmup, peak) for first in (False, True) for schedule in SCHEDULES
            for warmup in WARMUPS for peak in PEAKS]


def write_runs(path: Path = RUNS_FILE) -> None:
    runs = {run_key(*setting): train_run(*setting) for setting in grid()}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(runs, separators=(",", ":"), sort_keys=True) + "\n")


@cache
def stored_runs() -> dict:
    return json.loads(RUNS_FILE.read_text())


def _run(norm_first: bool, schedule: str, warmup_steps: int, peak_lr: float) -> dict:
    return stored_runs()[run_key(norm_first, schedule, warmup_steps, peak_lr)]


def warmup_frame(schedule: str, warmup: int, peak_lr: float) -> Frame:
    lr = [schedule_lr(schedule, s, peak_lr, warmup, STEPS) for s in range(STEPS)]
    runs = {name: (_run(first, schedule, warmup, peak_lr), _run(first, schedule, 0, peak_lr))
            for name, (first, _) in NORMS.items()}
    figures = {"learning rate at steps 0, 5, 20": ", ".join(f"{lr[s]:.3g}" for s in (0, 5, 20))}
    for name, (run, bare) in runs.items():
        figures[f"{name} loss after {STEPS} steps (without warm-up)"] = (
            f"{run['loss'][-1]:.2f} ({bare['loss'][-1]:.2f})")
        figures[f"{name} largest gradient norm"] = f"{max(run['grad_norm']):.1f}"
    return Frame(data={"lr": lr, "peak": peak_lr, "runs": runs}, figures=figures)


class WarmupView(View):
    figsize = (6.4, 6.0)

    def setup(self, fig):
        ax_lr, ax_loss, ax_norm = fig.subplots(3, 1, sharex=True)
        steps = list(range(STEPS))
        (self.lr,) = ax_lr.plot(steps, [0.0] * STEPS, color="#228833", animated=True)
        ax_lr.set(ylim=(0, 1.05), ylabel="lr / peak", title="Learning rate, loss and gradient norm")
        self.lines = {}
        for name, (_, colour) in NORMS.items():
            for ax, key, start in ((ax_loss, "loss", 0.0), (ax_norm, "grad_norm", 1.0)):
                (main,) = ax.plot(steps, [start] * STEPS, color=colour, animated=True,
                                  label=name)
                (bare,) = ax.plot(steps, [start] * STEPS, color=colour, linestyle=":",
                                  animated=True, label=f"{name}, no warm-up")
                self.lines[name, key] = (main, bare)
        ax_loss.set(ylim=(0, LOSS_TOP), ylabel="loss")
        ax_loss.legend(loc="upper right", frameon=False, ncol=2)
        ax_norm.set(yscale="log", ylim=(NORM_BOTTOM, NORM_TOP),
                    ylabel="gradient norm (log scale)", xlabel="step")

    def update(self, data):
        self.lr.set_ydata([v / data["peak"] for v in data["lr"]])
        for name, (run, bare) in data["runs"].items():
            for key, (bottom, top) in (("loss", (0.0, LOSS_TOP)),
                                       ("grad_norm", (NORM_BOTTOM, NORM_TOP))):
                main, dotted = self.lines[name, key]
                main.set_ydata([min(max(v, bottom), top) for v in run[key]])
                dotted.set_ydata([min(max(v, bottom), top) for v in bare[key]])


def warmup_explorer() -> Explorer:
    """schedule × warm-up × peak learning rate → the schedule, and a small model's loss and
    gradient norm, Post-LN and Pre-LN, with and without warm-up."""
    return Explorer(
        "Warm-up and the schedule: a four-layer model, Post-LN and Pre-LN",
        [
            Control("schedule", "schedule", SCHEDULES, default="cosine", labels=SCHEDULE_LABELS),
            Control("warmup", "warm-up steps", WARMUPS, default=10),
            Control("peak_lr", "peak learning rate", PEAKS, default=0.03),
        ],
        warmup_frame,
        WarmupView(),
        caption=(
            "A four-layer model (width 16) trained with Adam for 40 steps on sequences that "
            "follow a fixed rule. Solid: with the chosen warm-up; dotted: the same schedule "
            "without warm-up. Red Post-LN, blue Pre-LN. A toy: it shows what this model does."
        ),
    )


MODELS = {"GPT-2 1.5B": 1_500_000_000, "7B": 7_000_000_000, "13B": 13_000_000_000,
          "70B": 70_000_000_000}
OPTIMIZER_LABELS = {"adamw": "AdamW", "sgd_momentum": "SGD with momentum", "sgd": "SGD"}
PRECISION_LABELS = {"mixed": "mixed (16-bit + fp32 copy)", "fp32": "fp32"}
PARTS = ("weights", "gradients", "optimizer")
PART_COLOURS = ("#4477aa", "#ee6677", "#ccbb44")
GPU_GB = 80


def memory_frame(model: str, optimizer: str, precision: str) -> Frame:
    params = MODELS[model]
    memory = training_memory_bytes(params, optimizer, precision)
    gb = {part: memory[part] / 1e9 for part in (*PARTS, "total")}
    figures = {part: f"{gb[part]:,.0f} GB" for part in PARTS}
    figures["total"] = f"{gb['total']:,.0f} GB ({memory['total'] / params:.0f} bytes per "\
                       "parameter)"
    figures[f"{GPU_GB} GB GPUs just to hold it"] = f"{-(-gb['total'] // GPU_GB):.0f}"
    return Frame(data={"share": [gb[p] / gb["total"] for p in PARTS],
                       "bytes": memory["total"] / params, "gb": gb["total"]}, figures=figures)


class MemoryView(View):
    figsize = (6.4, 2.6)

    def setup(self, fig):
        ax = fig.subplots()
        self.bars = [ax.barh(0, 0.0, left=0.0, color=c, animated=True, label=p)[0]
                     for p, c in zip(PARTS, PART_COLOURS, strict=True)]
        self.total = ax.text(0.0, 0.5, "", va="center", animated=True)
        ax.set(xlim=(0, 20), ylim=(-0.6, 0.9), yticks=[], xlabel="bytes per parameter",
               title="Memory of training, activations excluded")
        ax.legend(loc="upper right", frameon=False, ncol=3)

    def update(self, data):
        left = 0.0
        for bar, share in zip(self.bars, data["share"], strict=True):
            width = share * data["bytes"]
            bar.set_x(left)
            bar.set_width(width)
            left += width
        self.total.set_position((0.1, -0.5))
        self.total.set_text(f"{data['gb']:,.0f} GB in all")


def training_memory_explorer() -> Explorer:
    """model size × optimizer × precision → bytes per parameter and GB of training state."""
    return Explorer(
        "Memory of training: weights, gradients and optimizer state",
        [
            Control("model", "model size", tuple(MODELS), default="7B"),
            Control("optimizer", "optimizer", tuple(OPTIMIZER_LABELS), default="adamw",
                    labels=tuple(OPTIMIZER_LABELS.values())),
            Control("precision", "precision", tuple(PRECISION_LABELS), default="mixed",
                    labels=tuple(PRECISION_LABELS.values())),
        ],
        memory_frame,
        MemoryView(),
        caption=(
            "Mixed precision: 2-byte weights and gradients, a 4-byte master copy of the "
            "weights with the optimizer; AdamW keeps two 4-byte moments, SGD with momentum "
            "one. Activations, buffers and fragmentation come on top."
        ),
    )
