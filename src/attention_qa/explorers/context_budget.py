"""q42's explorer: a document longer than the window, and four ways to answer a question on it.

A prompt and its answer must fit the window together. For a document of D tokens and a
window of W, ``long_context.context_strategies`` gives what each strategy reads and costs
with Llama-3-8B's shapes (the shapes of Llama 3.1 8B, whose window is 128K tokens): the
whole document in one prompt (only when it fits), truncation to the last tokens that fit
(a tokenizer's ``truncation_side="left"``; Hugging Face's default keeps the first),
retrieval of k chunks, and a map over every chunk in separate calls. Left, the parts of the
document each strategy reads; right, its prefill FLOPs and its largest K/V cache (bf16,
batch 1), each against the window's. Retrieved chunks are drawn at example places: a
retriever picks them by relevance, which no cost model knows.
"""

import numpy as np

from attention_qa.long_context import STRATEGIES, context_strategies
from attention_qa.panel import Control, Explorer, Frame, View

DOCUMENTS = (16_384, 65_536, 262_144, 1_048_576)
WINDOWS = (8_192, 32_768, 131_072)
CHUNKS = (512, 2_048)
KS = (2, 8, 32)
BINS = 96  # the document drawn as 96 equal parts
COLOURS = ("#4477aa", "#ee6677", "#228833", "#ccbb44")
NAMES = ("whole", "truncate", "retrieve k", "map")


def read_map(document: int, chunk: int, k: int, results: dict) -> np.ndarray:
    """(4, BINS): 1 where a strategy reads that part in one prompt, 0.5 where it reads it in
    separate calls, 0 where it never reads it."""
    edges = np.linspace(0, document, BINS + 1)
    centre = (edges[:-1] + edges[1:]) / 2  # (BINS,)
    rows = np.zeros((len(STRATEGIES), BINS))  # (4, BINS)
    if results["whole document"]["fits"]:
        rows[0] = 1.0
    rows[1] = centre >= document - results["truncate"]["seen"]
    if results["retrieve k chunks"]["fits"]:
        chunks = -(-document // chunk)
        picked = ((np.arange(min(k, chunks)) + 0.5) * chunks // min(k, chunks)).astype(int)
        first = (picked * chunk * BINS) // document  # the part each chunk starts in
        last = np.maximum(first, ((picked + 1) * chunk * BINS - 1) // document)
        for a, b in zip(first, np.minimum(last, BINS - 1), strict=True):
            rows[2, a:b + 1] = 1.0  # at least one part wide, so a short chunk shows
    if results["map over chunks"]["fits"]:
        rows[3] = 0.5
    return rows


def budget_frame(document: int, window: int, chunk: int, k: int) -> Frame:
    results = context_strategies(document, window, chunk, k)
    figures = {}
    for name in STRATEGIES:
        r = results[name]
        if not r["fits"]:
            figures[name] = "does not fit in the window"
            continue
        if name == "map over chunks":  # its time is the prefills' only
            figures[name] = (
                f"reads {r['seen'] / document:.0%} of the document in {r['calls']:,} "
                f"prefill(s) of up to {r['prompt']:,} tokens; {r['flops'] / 1e15:,.2f} PFLOP, "
                f"K/V cache {r['kv_bytes'] / 1e9:,.2f} GB, map prefills ≥ {r['ttft']:,.2f} s, "
                f"partial answers and reduce on top"
            )
            continue
        figures[name] = (
            f"reads {r['seen'] / document:.0%} of the document in {r['calls']:,} "
            f"prefill(s) of up to {r['prompt']:,} tokens; {r['flops'] / 1e15:,.2f} PFLOP, "
            f"K/V cache {r['kv_bytes'] / 1e9:,.2f} GB, first token ≥ {r['ttft']:,.2f} s"
        )
    data = {
        "read": read_map(document, chunk, k, results),
        "fits": [results[s]["fits"] for s in STRATEGIES],
        "flops": [results[s]["flops"] if results[s]["fits"] else 0.0 for s in STRATEGIES],
        "kv": [results[s]["kv_bytes"] if results[s]["fits"] else 0.0 for s in STRATEGIES],
    }
    return Frame(data=data, figures=figures)


class BudgetView(View):
    figsize = (6.4, 3.3)

    def setup(self, fig):
        ax_read, ax_flops, ax_kv = fig.subplots(1, 3, width_ratios=(1.6, 1, 1))
        cmap = "Greys"
        self.image = ax_read.imshow(np.zeros((len(STRATEGIES), BINS)), aspect="auto",
                                    cmap=cmap, vmin=0, vmax=1, interpolation="nearest",
                                    animated=True)
        ax_read.set(yticks=range(len(STRATEGIES)), yticklabels=NAMES, xticks=(0, BINS - 1),
                    xticklabels=("start", "end"), title="what is read",
                    xlabel="position in the document")
        self.missing = [ax_read.text(BINS / 2, row, "", ha="center", va="center",
                                     animated=True) for row in range(len(STRATEGIES))]
        rows = np.arange(len(STRATEGIES))
        self.flops = ax_flops.barh(rows, np.ones(len(STRATEGIES)), color=COLOURS,
                                   animated=True)
        ax_flops.set(xscale="log", xlim=(1e13, 1e17), ylim=(3.6, -0.6), yticks=rows,
                     yticklabels=(), title="prefill FLOPs", xticks=(1e13, 1e15, 1e17))
        self.kv = ax_kv.barh(rows, np.ones(len(STRATEGIES)), color=COLOURS, animated=True)
        ax_kv.set(xscale="log", xlim=(1e7, 1e11), ylim=(3.6, -0.6), yticks=rows,
                  yticklabels=(), title="K/V bytes", xticks=(1e7, 1e9, 1e11))

    def update(self, data):
        self.image.set_data(data["read"])
        for text, fits in zip(self.missing, data["fits"], strict=True):
            text.set_text("" if fits else "does not fit")
        for bar, value in zip(self.flops, data["flops"], strict=True):
            bar.set_width(value if value > 0 else 1e-30)
        for bar, value in zip(self.kv, data["kv"], strict=True):
            bar.set_width(value if value > 0 else 1e-30)


def context_budget_explorer() -> Explorer:
    """document × window × chunk × k → what each strategy reads, its prefill and K/V cache."""
    return Explorer(
        "A document longer than the window: whole, truncated, retrieved or mapped",
        [
            Control("document", "document (tokens)", DOCUMENTS, default=262_144,
                    labels=("16K", "64K", "256K", "1M")),
            Control("window", "window (tokens)", WINDOWS, default=32_768,
                    labels=("8K", "32K", "128K")),
            Control("chunk", "chunk (tokens)", CHUNKS, default=512),
            Control("k", "chunks retrieved k", KS, default=8),
        ],
        budget_frame,
        BudgetView(),
        caption=(
            "Llama-3-8B's shapes, a question of 100 tokens and room for an answer of 500. "
            "Left: black, read in one prompt; grey, read in separate calls (the map); white, "
            "never read. Retrieved chunks are drawn at example places. Right: prefill FLOPs "
            "of all calls and the largest call's K/V cache (bf16), log scales; no bar: the "
            "strategy does not fit. First-token times are roofline lower bounds on one H100, "
            "calls one after another; the map's partial answers and the retriever cost more."
        ),
    )
