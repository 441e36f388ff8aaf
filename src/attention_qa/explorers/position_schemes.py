"""q25's second explorer: one query and one key, the same content, under each position scheme.

The query's content equals the key's; only their positions m (query) and n (key) change.
The top panel is the score of every causal pair (n ≤ m) for positions 0 … 127 of a model
trained on 64 (dashed lines); colours run from each scheme's lowest score to its highest.
The bottom panel reads one row: the score against the offset m − n for the chosen query
and, dashed, for the query at position 32. Where the two curves coincide the scheme
depends on the offset alone. Schemes: the sinusoidal encoding (Vaswani et al., 2017) and a
learned table (here a seeded random stand-in with 64 rows) added to the inputs; RoPE
(Su et al., 2021), plain, with position interpolation (Chen et al., 2023) and with NTK-aware
base scaling, both for twice the trained length; ALiBi (Press et al., 2022) with slope 1/16,
the fourth of eight heads.
"""

import math
from functools import cache

import matplotlib
import torch

from attention_qa.panel import Control, Explorer, Frame, View
from attention_qa.panel.palette import BLUE, GREY, PALE_GREY, RED
from attention_qa.positional import (
    SCHEME_LABELS,
    SCHEME_NAMES,
    learned_position_table,
    position_scores,
    rope_frequencies,
    scaled_rope_frequencies,
)

D = 64
TRAINED = 64
N = 128
REFERENCE = 32
SLOPE = 1 / 16
QUERIES = (48, 63, 96, 127)


def _content() -> torch.Tensor:
    g = torch.Generator().manual_seed(25)
    return torch.randn(D, generator=g, dtype=torch.float64)  # (d,)


def _theta(scheme: str) -> torch.Tensor | None:
    if scheme == "rope-pi":
        return scaled_rope_frequencies(D, scale=N / TRAINED, method="interpolation")
    if scheme == "rope-ntk":
        return scaled_rope_frequencies(D, scale=N / TRAINED, method="ntk")
    return rope_frequencies(D).double()


@cache
def scheme_scores(scheme: str) -> torch.Tensor:
    """The (N, N) scores of the explorer's query and key under ``scheme``, causal part only
    (NaN where the key comes after the query)."""
    x = _content()
    kind = "rope" if scheme.startswith("rope") else scheme
    scores = position_scores(
        x, x, kind, N, theta=_theta(scheme), slope=SLOPE,
        table=learned_position_table(TRAINED, D, seed=0),
    )  # (N, N)
    future = torch.ones(N, N, dtype=torch.bool).triu(1)  # (N, N): n > m
    return scores.masked_fill(future, float("nan"))


@cache
def depends_on_offset_only(scheme: str) -> bool:
    """Whether every diagonal m − n = t of the scores holds one value (NaN: no score)."""
    scores = scheme_scores(scheme)  # (N, N)
    return all(
        (d := scores.diagonal(-t))[d.isfinite()].numel() < 2
        or (d[d.isfinite()].max() - d[d.isfinite()].min()).item() < 1e-9
        for t in range(N)
    )


def beyond_training(scheme: str) -> str:
    """What the positions past the trained length bring, in words and one number."""
    longest, trained = N - 1, TRAINED - 1
    if scheme == "learned":
        return f"no row past position {trained}: no score at all"
    if scheme == "sinusoidal":
        return f"encodings of positions {TRAINED}…{longest}, never seen in training"
    if scheme == "alibi":
        return (f"bias down to {-SLOPE * longest:.2f} (training: {-SLOPE * trained:.2f}), "
                "the same straight line")
    slowest = _theta(scheme)[-1].item() * longest
    trained_angle = rope_frequencies(D).double()[-1].item() * trained
    return f"slowest pair turns {slowest / trained_angle:.2f}× its largest angle in training"


MAP = matplotlib.colormaps["viridis"].with_extremes(bad=PALE_GREY)


@cache
def scheme_picture(scheme: str) -> dict:
    """What the frames of one scheme share: the map's pixels (bytes, drawn about twice as fast
    as floats), the score range and whether scores depend on the offset alone."""
    scores = scheme_scores(scheme)  # (N, N)
    finite = scores[scores.isfinite()]
    low, high = finite.min().item(), finite.max().item()
    return {"rgba": MAP(((scores - low) / (high - low)).numpy(), bytes=True),  # (N, N, 4)
            "low": low, "high": high, "offset_only": depends_on_offset_only(scheme)}


def schemes_frame(scheme: str, query: int) -> Frame:
    scores, picture = scheme_scores(scheme), scheme_picture(scheme)  # (N, N)
    row = scores[query, : query + 1].flip(0)  # (query + 1,): offsets 0 … query
    reference = scores[REFERENCE, : REFERENCE + 1].flip(0)  # (33,)
    offset_only = picture["offset_only"]
    label = SCHEME_LABELS[SCHEME_NAMES.index(scheme)]

    def score_at(offset):
        value = row[offset].item()
        return "undefined (no row)" if math.isnan(value) else f"{value:.2f}"

    gap = (row[: REFERENCE + 1] - reference).abs().max().item()
    figures = {
        "depends only on m − n": "yes" if offset_only else "no",
        f"score, query {query}, offset 0": score_at(0),
        f"score, query {query}, offset 16": score_at(16),
        f"largest gap to query {REFERENCE}'s curve": "undefined (no row)" if math.isnan(gap)
        else f"{gap:.2f}",
        f"past position {TRAINED - 1}": beyond_training(scheme),
    }
    low, high = picture["low"], picture["high"]
    data = {"rgba": picture["rgba"], "row": row, "reference": reference,
            "query": query, "ylim": (low - 0.05 * (high - low), high + 0.05 * (high - low)),
            "title": label}
    return Frame(data=data, figures=figures)


class SchemesView(View):
    figsize = (6.4, 5.2)

    def setup(self, fig):
        ax_map, ax_row = fig.subplots(2, 1, height_ratios=(1.25, 1))
        self.image = ax_map.imshow(
            MAP(torch.zeros(N, N).numpy(), bytes=True), aspect="auto",
            interpolation="nearest", animated=True,
        )
        for line in (ax_map.axvline, ax_map.axhline):
            # animated, so that they are drawn over the image, which is animated too
            line(TRAINED - 0.5, color="white", linestyle="--", linewidth=1.2, animated=True,
                 zorder=3)
        self.row_line = ax_map.axhline(0, color=RED, linewidth=1.5, animated=True,
                                       zorder=4)
        ax_map.set(xlabel="key position n", ylabel="query m", xticks=(0, 32, 64, 96, 127),
                   yticks=(0, 64, 127))
        self.title = ax_map.set_title("sinusoidal")
        self.title.set_animated(True)
        offsets = torch.arange(N).numpy()
        (self.curve,) = ax_row.plot(offsets, offsets * 0.0, color=RED, animated=True,
                                    label="query m")
        (self.reference,) = ax_row.plot(offsets[: REFERENCE + 1], offsets[: REFERENCE + 1] * 0.0,
                                        color=BLUE, linestyle="--", animated=True,
                                        label=f"query {REFERENCE}")
        ax_row.axvline(TRAINED - 0.5, color=GREY, linestyle="--", linewidth=1)
        self.ax_row = ax_row
        ax_row.set(xlabel="offset m − n", ylabel="score", xlim=(0, N - 1),
                   xticks=(0, 32, 64, 96, 127))
        ax_row.legend(loc="upper right", frameon=False, ncol=2)

    def update(self, data):
        self.image.set_data(data["rgba"])
        self.row_line.set_ydata([data["query"], data["query"]])
        self.title.set_text(data["title"])
        row = data["row"].numpy()
        self.curve.set_data(range(len(row)), row)
        self.reference.set_ydata(data["reference"].numpy())
        self.ax_row.set_ylim(*data["ylim"])
        return tuple(data["ylim"])  # the still part's state: one picture per scheme


def position_schemes_explorer() -> Explorer:
    """scheme × query position → the scores of every (m, n) and the score against offset."""
    return Explorer(
        "Sinusoidal, learned, RoPE and ALiBi on the same query and key",
        [
            Control("scheme", "scheme", SCHEME_NAMES, default="rope", labels=SCHEME_LABELS),
            Control("query", "query position m", QUERIES, default=96),
        ],
        schemes_frame,
        SchemesView(),
        caption=(
            f"d = {D}; the key's content equals the query's. Scores (q·k)/√d before softmax, "
            f"for a model trained on {TRAINED} positions (dashed lines). Top: every query m "
            "and key n ≤ m, colours from the lowest score to the highest; grey: no score. "
            f"Bottom: the row of query m, and of query {REFERENCE}, against the offset."
        ),
    )
