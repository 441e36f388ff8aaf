"""q36's explorer: devices, causal or not, and the order blocks are assigned → which
device computes which tiles of the attention matrix at each step, and the work per device.

The sequence is cut into 2P chunks; each device holds two (``parallel.ring_schedule``):
chunks 2r and 2r + 1 ("contiguous") or chunks r and 2P − 1 − r ("zigzag", as Megatron-LM's
context parallelism assigns them). A device computes the rows of the attention matrix of
its own query chunks; each step it holds another device's K/V chunks. The left panel
colours each (query chunk, key chunk) tile by the step at which it is computed (white:
hidden by the causal mask, never computed); the right panel gives each device's total work
and, in grey, the time of the ring, which waits at each step for the busiest device.
"""

import numpy as np
from matplotlib.colors import ListedColormap

from attention_qa.panel import Control, Explorer, Frame, View
from attention_qa.panel.palette import BLUE, CYAN, GREEN, GREY, PURPLE, RED, WHITE, YELLOW
from attention_qa.parallel import ring_schedule

DEVICES = (2, 4, 8)
MAX_P = max(DEVICES)
STEP_COLOURS = [WHITE, BLUE, CYAN, GREEN, YELLOW, RED,
                PURPLE, GREY, "#332288"]  # white, then step 1 … 8
CHUNK_TOKENS = 64


def tile_steps(schedule, num_devices: int) -> np.ndarray:
    """(2P, 2P) step (1-based) at which each (query chunk, key chunk) tile is computed;
    0 where it never is."""
    grid = np.zeros((2 * num_devices, 2 * num_devices), dtype=np.int64)
    for s, row in enumerate(schedule):
        for entry in row:
            for a, b in entry["pairs"]:
                grid[a, b] = s + 1
    return grid


def context_parallel_frame(devices: int, causal: bool, order: str) -> Frame:
    schedule = ring_schedule(devices, causal, order, CHUNK_TOKENS)
    work = [sum(step[r]["work"] for step in schedule) for r in range(devices)]
    per_step_max = [max(entry["work"] for entry in step) for step in schedule]
    ring_time = sum(per_step_max)  # every step waits for its busiest device
    ideal = sum(work) / devices
    chunks = [(2 * r, 2 * r + 1) if order == "contiguous" else (r, 2 * devices - 1 - r)
              for r in range(devices)]
    figures = {
        "chunks on each device": ", ".join(f"{r}: {a},{b}" for r, (a, b) in enumerate(chunks)),
        "work per device (tiles)": ", ".join(f"{w:.1f}" for w in work),
        "busiest device / average": f"{max(work) / ideal:.2f}",
        "ring time (sum over steps of the busiest device)": f"{ring_time:.1f} tiles",
        "balanced time (total work / P)": f"{ideal:.1f} tiles",
        "step 2: each device holds the K/V of device":
            ", ".join(str(entry["source"]) for entry in schedule[1]) if devices > 1 else "-",
    }
    return Frame(data={"grid": tile_steps(schedule, devices), "work": work,
                       "time": ring_time, "devices": devices},
                 figures=figures)


class ScheduleView(View):
    figsize = (6.4, 3.6)

    def setup(self, fig):
        tiles, bars = fig.subplots(1, 2, width_ratios=(1.1, 1))
        cmap = ListedColormap(STEP_COLOURS)
        self.image = tiles.imshow(np.zeros((2 * MAX_P, 2 * MAX_P)), cmap=cmap, vmin=-0.5,
                                  vmax=MAX_P + 0.5, interpolation="nearest", animated=True)
        tiles.set(xticks=[], yticks=[], xlabel="key chunk", ylabel="query chunk")
        self.bars = bars.bar(range(MAX_P), [0] * MAX_P, color=BLUE, animated=True)
        self.time = bars.axhline(0, color="#777777", lw=2, animated=True)
        bars.set(xticks=range(MAX_P), ylim=(0, 34), xlabel="device", ylabel="work (tiles)")
        self.label = bars.set_title("ring time", fontsize=12, animated=True)

    def update(self, data):
        p = data["devices"]
        self.image.set_data(data["grid"])  # (2P, 2P), stretched over the fixed square
        for r, bar in enumerate(self.bars):
            bar.set_height(data["work"][r] if r < p else 0)
        self.time.set_ydata([data["time"]] * 2)
        self.label.set_text(f"grey line: ring time {data['time']:.1f}")


def context_parallel_explorer() -> Explorer:
    """Devices × causal × assignment order → the ring's schedule and each device's work."""
    return Explorer(
        "Ring attention: who computes which tiles, and when",
        [
            Control("devices", "devices P", DEVICES, default=4),
            Control("causal", "mask", (False, True), default=True,
                    labels=("bidirectional", "causal")),
            Control("order", "chunk assignment", ("contiguous", "zigzag"),
                    default="contiguous", labels=("contiguous", "zig-zag")),
        ],
        context_parallel_frame,
        ScheduleView(),
        caption=(
            "Left: the attention matrix in 2P × 2P tiles, each coloured by the step at which "
            "it is computed (step 1 dark blue, then light blue, green, yellow, red, purple, "
            "grey, indigo); white tiles are hidden by the causal mask and skipped. The device "
            "that computes a row of tiles is the one holding that query chunk. Right: each "
            "device's work in tiles (a causal diagonal tile counts about half) and, in grey, "
            "the time of the ring, which waits at every step for its busiest device."
        ),
    )
