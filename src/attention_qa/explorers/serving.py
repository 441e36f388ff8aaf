"""q44's explorer: a toy serving engine, step by step.

Twenty-four chat requests arrive at random (``attention_qa.serving.workload``: Poisson
arrivals, prompts of a shared 1,024-token system prompt plus 64–511 tokens of their own,
4–47 output tokens). ``serving.simulate`` runs them through an engine that batches at most
``max_batch`` requests, statically (a batch runs until its longest request ends) or
continuously (Orca's iteration-level scheduling), with or without prefix caching over
blocks of 16 tokens. A step lasts what q33's roofline gives for the tokens it processes with
Llama-3-8B's weight matrices on one H100, so a step in which a prompt is prefilled is long.
Top: each request's waiting, prefill and decoding steps. Bottom: each step's length.
Arrivals fall on step indices and an idle step lasts no time (see ``serving``'s docstring).
The 36 simulations and their frames are computed once, when the explorer is built.
"""

import functools

import numpy as np
from matplotlib.collections import PolyCollection

from attention_qa.panel import Control, Explorer, Frame, View
from attention_qa.panel.palette import BLUE, GREY, INK, RED
from attention_qa.serving import percentile, simulate, workload

RATES = (0.1, 0.25, 0.5)
BATCHES = (1, 4, 16)
POLICIES = ("static", "continuous")
NUM_REQUESTS = 24
STEPS = 640  # the longest run (batch 1) takes 590 steps; the axes are fixed
EMPTY, WAITING, PREFILL, DECODE = 0, 1, 2, 3


@functools.cache
def _run(rate: float, max_batch: int, policy: str, prefix: bool) -> dict:
    w = workload(rate, NUM_REQUESTS)
    return {"requests": w["requests"], "prompts": w["prompts"],
            **simulate(w["requests"], w["prompts"], max_batch, policy,
                       prefix_caching=prefix, block_size=w["block_size"])}


def timeline_picture(requests, timeline) -> np.ndarray:
    """(NUM_REQUESTS, STEPS) colour indices: waiting from arrival, the prefill step (its
    first token), then decoding to the last token."""
    picture = np.full((len(requests), STEPS), EMPTY, dtype=np.int64)
    for row, ((arrival, _), (first, last)) in enumerate(zip(requests, timeline, strict=True)):
        picture[row, arrival:first] = WAITING
        picture[row, first] = PREFILL
        picture[row, first + 1:last + 1] = DECODE
    return picture


def serving_frame(rate: float, max_batch: int, policy: str, prefix: str) -> Frame:
    run = _run(rate, max_batch, policy, prefix == "on")
    ms = [1e3 * t for t in run["ttft"]]
    per_token = [1e3 * t for t in run["tpot"]]
    tokens = sum(n for _, n in run["requests"])
    total = run["step_end"][-1]
    figures = {
        "time to first token, median / 90th percentile":
            f"{percentile(ms, 50):,.0f} / {percentile(ms, 90):,.0f} ms",
        "time per output token, median / 90th percentile":
            f"{percentile(per_token, 50):.1f} / {percentile(per_token, 90):.1f} ms",
        "steps / time to serve all 24": f"{len(run['step_end'])} / {total:.2f} s",
        "output tokens per second": f"{tokens / total:,.0f}",
        "prompt tokens prefilled": f"{sum(run['prefill_tokens']):,}",
        "blocks reused from the prefix cache": f"{run['blocks_reused']:,}",
    }
    step_ms = np.full(STEPS, np.nan)
    durations = np.diff(np.concatenate([[0.0], run["step_end"]])) * 1e3
    step_ms[:len(durations)] = durations
    data = {"picture": timeline_picture(run["requests"], run["timeline"]), "step_ms": step_ms,
            "bars": timeline_bars(run["requests"], run["timeline"])}
    return Frame(data=data, figures=figures)


def timeline_bars(requests, timeline) -> dict[str, list]:
    """Rectangles (as four corners) per request: waiting, the prefill step, decoding."""
    bars: dict[str, list] = {"waiting": [], "prefill": [], "decode": []}
    for row, ((arrival, _), (first, last)) in enumerate(zip(requests, timeline, strict=True)):
        for name, a, b in (("waiting", arrival, first), ("prefill", first, first + 1),
                           ("decode", first + 1, last + 1)):
            bars[name].append([(a - 0.5, row - 0.4), (b - 0.5, row - 0.4),
                               (b - 0.5, row + 0.4), (a - 0.5, row + 0.4)])
    return bars


class ServingView(View):
    figsize = (6.4, 3.6)

    def setup(self, fig):
        ax_time, ax_step = fig.subplots(2, 1, height_ratios=(2.2, 1), sharex=True)
        # rectangles, not an image: a few dozen polygons draw faster than a resampled image
        self.bars = {}
        for name, colour in (("waiting", GREY), ("prefill", RED), ("decode", BLUE)):
            self.bars[name] = PolyCollection([], facecolors=colour, edgecolors="none",
                                             animated=True)
            ax_time.add_collection(self.bars[name])
        ax_time.set(ylim=(NUM_REQUESTS - 0.5, -0.5), yticks=(0, NUM_REQUESTS - 1),
                    yticklabels=("1", str(NUM_REQUESTS)), ylabel="request")
        (self.line,) = ax_step.plot(np.arange(STEPS), np.full(STEPS, 4.0), color=INK, lw=1,
                                    animated=True)
        ax_step.set(yscale="log", ylim=(2, 400), xlim=(-0.5, STEPS - 0.5),
                    xlabel="engine step", ylabel="step (ms)", yticks=(3, 30, 300),
                    yticklabels=("3", "30", "300"))
        ax_step.minorticks_off()

    def update(self, data):
        for name, collection in self.bars.items():
            collection.set_verts(data["bars"][name])
        self.line.set_ydata(data["step_ms"])


def serving_explorer() -> Explorer:
    """Arrival rate × batch limit × policy × prefix cache → each request's timeline, its
    time to first token and per output token, and the blocks reused."""
    return Explorer(
        "A serving engine, step by step: static or continuous batching, prefix caching",
        [
            Control("rate", "arrivals per step", RATES, default=0.25),
            Control("max_batch", "batch limit", BATCHES, default=4),
            Control("policy", "batching", POLICIES, default="continuous"),
            Control("prefix", "prefix cache", ("off", "on"), default="off"),
        ],
        serving_frame,
        ServingView(),
        caption=(
            "24 chat requests, each a shared 1,024-token system prompt, 64–511 tokens of its "
            "own and 4–47 output tokens. Top: grey, waiting; red, the step that prefills the "
            "prompt and makes the first token; blue, decoding. Bottom: each step's length, "
            "a roofline lower bound for Llama-3-8B's weights on one H100 (attention and the "
            "K/V cache left out). Time runs in steps: requests arrive at steps, and a step "
            "with nothing to run lasts no time. A toy engine: it shows the mechanisms, not a "
            "real server's numbers."
        ),
    )
