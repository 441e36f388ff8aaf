"""q33's explorer: model, batch, context and weight precision → memory and the roofline.

Left, the memory a server needs (``inference.memory_bytes``: weights, K/V cache, one
layer's prefill activations, and their total, on a log scale) against one 80 GB H100.
Right, the roofline of an H100 SXM (989 dense BF16 TFLOP/s, 3.35 TB/s) with the prefill
of the whole context and one decode step at that context (``inference.step_costs``): a
point left of the ridge is limited by memory bandwidth, right of it by arithmetic. Times
are the roofline's lower bounds. A context longer than the model was trained at is
marked as a what-if.
"""

import numpy as np

from attention_qa.inference import (
    H100_BANDWIDTH,
    H100_FLOPS,
    H100_MEMORY,
    TRAINED_CONTEXT,
    memory_bytes,
    roofline_seconds,
    step_costs,
)
from attention_qa.panel import Control, Explorer, Frame, View
from attention_qa.panel.palette import BLUE, GREEN, GREY, INK_LIGHT, PURPLE, RED, YELLOW

MODELS = ("Llama-2-7B", "Llama-3-8B", "Llama-2-70B")
BATCHES = (1, 16, 64)
CONTEXTS = (4096, 32768)
WEIGHT_BYTES = (2, 0.5)  # bfloat16, 4-bit
PARTS = ("weights", "K/V cache", "activations (one layer, prefill)")  # memory_bytes's keys
PART_COLOURS = (BLUE, RED, YELLOW)
GB = 1e9


def budget_frame(model: str, batch: int, context: int, weight_bytes: float) -> Frame:
    memory = memory_bytes(model, batch, context, weight_bytes)
    prefill = step_costs(model, batch, context, context, weight_bytes)
    decode = step_costs(model, batch, 1, context, weight_bytes)
    total = sum(memory.values())
    gpus = int(np.ceil(total / H100_MEMORY))
    step = roofline_seconds(decode["flops"], decode["bytes"])
    trained = TRAINED_CONTEXT[model]
    figures = {
        "context": f"within the {trained:,} tokens it was trained at" if context <= trained
                   else f"a what-if: beyond the {trained:,} tokens it was trained at",
        "memory": f"{total / GB:,.0f} GB ({gpus} × 80 GB H100)" if gpus > 1 else
                  f"{total / GB:,.1f} GB (fits one 80 GB H100)",
        "prefill: FLOPs per byte": f"{prefill['intensity']:,.0f}",
        "decode: FLOPs per byte": f"{decode['intensity']:,.1f}",
        "time to first token ≥": f"{roofline_seconds(prefill['flops'], prefill['bytes']):.2f} s",
        "time per output token ≥": f"{step * 1e3:.1f} ms",
        "decode tokens per second ≤": f"{batch / step:,.0f}",
    }
    data = {"memory": [memory[p] / GB for p in PARTS],
            "points": [(prefill["intensity"], attainable(prefill["intensity"])),
                       (decode["intensity"], attainable(decode["intensity"]))]}
    return Frame(data=data, figures=figures)


def attainable(intensity: float) -> float:
    """The roofline: min(peak, bandwidth × intensity), in TFLOP/s."""
    return min(H100_FLOPS, H100_BANDWIDTH * intensity) / 1e12


class BudgetView(View):
    figsize = (6.4, 3.6)

    def setup(self, fig):
        ax_m, ax_r = fig.subplots(1, 2, width_ratios=(1, 1.9))
        self.bars = ax_m.bar(range(4), [1.0] * 4, color=[*PART_COLOURS, INK_LIGHT],
                             animated=True)
        ax_m.axhline(H100_MEMORY / GB, color="#000000", lw=1, linestyle="--")
        ax_m.set_xticks(range(4), labels=["weights", "cache", "activations", "total"],
                        rotation=60, ha="right", rotation_mode="anchor")
        ax_m.set(yscale="log", ylim=(0.1, 3000), ylabel="GB (log scale)",
                 title="dashed: 80 GB")
        x = np.logspace(-1, 6, 200)
        ax_r.plot(x, [attainable(i) for i in x], color=INK_LIGHT)
        ridge = H100_FLOPS / H100_BANDWIDTH
        ax_r.axvline(ridge, color=GREY, lw=1, linestyle=":")
        (self.prefill,) = ax_r.plot([1], [1], marker="o", ms=9, color=GREEN,
                                    linestyle="", animated=True, label="prefill")
        (self.decode,) = ax_r.plot([1], [1], marker="s", ms=9, color=PURPLE,
                                   linestyle="", animated=True, label="decode")
        ax_r.set(xscale="log", yscale="log", xlim=(0.1, 1e6), ylim=(0.1, 3000),
                 xlabel="FLOPs per byte", ylabel="TFLOP/s at most",
                 title=f"H100; ridge at {ridge:.0f}")
        ax_r.legend(loc="lower right", frameon=False)

    def update(self, data):
        heights = [*data["memory"], sum(data["memory"])]
        for bar, height in zip(self.bars, heights, strict=True):
            bar.set_height(height)
        (px, py), (dx, dy) = data["points"]
        self.prefill.set_data([px], [py])
        self.decode.set_data([dx], [dy])


def budget_explorer() -> Explorer:
    """model × batch × context × weight precision → memory and prefill/decode on the roofline."""
    return Explorer(
        "The inference budget: memory and the roofline",
        [
            Control("model", "model", MODELS, default="Llama-2-7B"),
            Control("batch", "batch", BATCHES, default=1),
            Control("context", "context (tokens)", CONTEXTS, default=4096),
            Control("weight_bytes", "weights", WEIGHT_BYTES, default=2,
                    labels=("bfloat16", "4-bit")),
        ],
        budget_frame,
        BudgetView(),
        caption=(
            "Left: weights, K/V cache, one layer's prefill activations and their total (log "
            "scale), against one 80 GB GPU. Right: what an H100 can reach at each "
            "arithmetic intensity; prefill sits right of the ridge (compute-bound), a "
            "decode step left of it (memory-bound) until the batch is large. Times are "
            "lower bounds."
        ),
    )
