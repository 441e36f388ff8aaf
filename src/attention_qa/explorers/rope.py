"""q25's first explorer: one pair of RoPE features turning, and the score against the offset.

Follows Su et al. (2021), "RoFormer", equation (34): pair i of a query at position m is
rotated by mθᵢ, of a key at position n by nθᵢ, θᵢ = base^(−2i/d). Here the key's content
equals the query's (a token meeting a copy of itself), so without positions the score is
the largest possible. The left panel is pair i of the key (position n) and of the query
(position n + offset): the angle between them is offset·θᵢ, whatever n is. The right panel
is the score against the offset, divided by its value at offset 0: all pairs together, and
pair i alone (cos(offset·θᵢ)).
"""

import math

import torch

from attention_qa.panel import Control, Explorer, Frame, View
from attention_qa.panel.palette import BLUE, GREEN, GREY, INK, RED
from attention_qa.positional import rope_frequencies, rope_score_by_offset

D = 32
MAX_OFFSET = 64
OFFSETS = (0, 1, 2, 4, 8, 16, 32, 64)
PAIRS = (0, 1, 2, 4, 8, 15)
BASES = (100.0, 10000.0, 500000.0)
BASE_LABELS = ("100", "10 000", "500 000")
QUERY = RED
KEY = BLUE


def _content() -> torch.Tensor:
    g = torch.Generator().manual_seed(25)
    return torch.randn(D, generator=g, dtype=torch.float64)  # (d,): the query's and key's


def rope_frame(offset: int, pair: int, base: float) -> Frame:
    x = _content()  # (d,)
    theta = rope_frequencies(D, base).double()  # (d/2,)
    offsets = torch.arange(MAX_OFFSET + 1)  # (T,)
    total = rope_score_by_offset(x, x, offsets, theta)  # (T,)
    total = total / total[0]
    alone = torch.cos(offsets * theta[pair])  # (T,): pair i alone, its own score / q·k
    angle = offset * theta[pair].item()
    key = x[2 * pair : 2 * pair + 2]  # (2,): pair i of the key at position n (n = 0 here)
    start = math.atan2(key[1].item(), key[0].item())
    radius = key.norm().item()
    data = {
        "total": total,
        "alone": alone,
        "offset": offset,
        "key": (radius * math.cos(start), radius * math.sin(start)),
        "query": (radius * math.cos(start + angle), radius * math.sin(start + angle)),
        "arc": [start + angle * t / 40 for t in range(41)],
        "radius": radius,
        "title": f"pair {pair}, rotated",
    }
    wavelength = 2 * math.pi / theta[pair].item()
    figures = {
        f"θ of pair {pair}": f"{theta[pair].item():.3g} rad per position",
        "its wavelength": f"{wavelength:,.0f} positions" if wavelength >= 100
        else f"{wavelength:.1f} positions",
        "angle between the key's and the query's pair": f"{angle:.3g} rad",
        "score / score at offset 0, all pairs": f"{total[offset].item():.2f}",
        f"pair {pair} alone": f"{alone[offset].item():.2f}",
    }
    return Frame(data=data, figures=figures)


class RopeView(View):
    figsize = (6.4, 3.4)

    def setup(self, fig):
        ax_pair, ax_score = fig.subplots(1, 2, width_ratios=(1, 1.7))
        circle = torch.linspace(0, 2 * math.pi, 100)
        ax_pair.plot((2.2 * circle.cos()).numpy(), (2.2 * circle.sin()).numpy(),
                     color=GREY, linewidth=0.8)
        self.key_arrow, = ax_pair.plot([0, 1], [0, 0], color=KEY, linewidth=2.5,
                                       label="key", animated=True)
        self.query_arrow, = ax_pair.plot([0, 1], [0, 0], color=QUERY, linewidth=2.5,
                                         label="query", animated=True)
        self.arc, = ax_pair.plot([0], [0], color=INK, linewidth=1, animated=True)
        lim = 2.6
        ax_pair.set(xlim=(-lim, lim), ylim=(-lim, lim), aspect="equal", xticks=(), yticks=())
        self.pair_title = ax_pair.set_title("pair 0, rotated")
        self.pair_title.set_animated(True)
        offsets = torch.arange(MAX_OFFSET + 1).numpy()
        self.total, = ax_score.plot(offsets, offsets * 0.0, color=INK, label="all pairs",
                                    animated=True)
        self.alone, = ax_score.plot(offsets, offsets * 0.0, color=GREEN, linewidth=1,
                                    label="this pair", animated=True)
        self.marker = ax_score.axvline(0, color=QUERY, linewidth=1.5, animated=True)
        ax_score.axhline(0, color=GREY, linewidth=0.8)
        ax_score.set(xlabel="offset m − n", ylim=(-1.1, 1.1), xlim=(0, MAX_OFFSET),
                     xticks=(0, 16, 32, 48, 64), yticks=(-1, 0, 1),
                     title="score / score at offset 0")
        fig.legend(loc="outside lower center", ncol=4, frameon=False, handlelength=1.2,
                   columnspacing=1.0)

    def update(self, data):
        r = data["radius"]
        scale = 2.2 / r
        kx, ky = data["key"]
        qx, qy = data["query"]
        self.key_arrow.set_data([0, kx * scale], [0, ky * scale])
        self.query_arrow.set_data([0, qx * scale], [0, qy * scale])
        arc = torch.tensor(data["arc"])
        self.arc.set_data((0.9 * arc.cos()).numpy(), (0.9 * arc.sin()).numpy())
        self.pair_title.set_text(data["title"])
        self.total.set_ydata(data["total"].numpy())
        self.alone.set_ydata(data["alone"].numpy())
        self.marker.set_xdata([data["offset"], data["offset"]])


def rope_explorer() -> Explorer:
    """offset × frequency pair × base → the pair's rotation and the score against offset."""
    return Explorer(
        "RoPE: offset, frequency pair and base",
        [
            Control("offset", "offset m − n", OFFSETS, default=4),
            Control("pair", "frequency pair i", PAIRS, default=2),
            Control("base", "base", BASES, default=10000.0, labels=BASE_LABELS),
        ],
        rope_frame,
        RopeView(),
        caption=(
            f"d = {D}; the key's content equals the query's, so the score at offset 0 is "
            "the largest. θᵢ = base^(−2i/d). Left: pair i of the key and of the query, at "
            "any positions n and n + offset; the angle between them is offset·θᵢ."
        ),
    )
