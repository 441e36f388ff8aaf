"""q15's explorer: the sinusoidal positional encoding and how alike two positions look.

Follows Vaswani et al. (2017), section 3.5. The top panel is the encoding of positions
0 … 127, one column per position, with a line at the chosen position p; the bottom panel,
on the same position axis, is the cosine similarity of PE(p) with every PE(q),
PE(p)·PE(q) / (‖PE(p)‖ ‖PE(q)‖).
Every row has norm √(d_model/2), so this is the dot product divided by d_model/2.
"""

import torch

from attention_qa.panel import Control, Explorer, Frame, InvalidSetting, View
from attention_qa.panel.palette import BLUE, GREY, RED
from attention_qa.positional import similarity_to, sinusoidal_encoding

NUM_POSITIONS = 128
D_MODEL_VALUES = (4, 8, 16, 32, 64, 128, 256, 512)
POSITION_VALUES = (0, 16, 32, 48, 64, 80, 96, 112)


def positional_frame(d_model: int, position: int) -> Frame:
    if not 0 <= position < NUM_POSITIONS:
        raise InvalidSetting(f"position must lie in 0 … {NUM_POSITIONS - 1}, got {position}")
    pe = sinusoidal_encoding(NUM_POSITIONS, d_model)  # (positions, d_model)
    sim = similarity_to(position, d_model)  # (positions,)
    neighbour = position + 1 if position + 1 < NUM_POSITIONS else position - 1
    far = (sim - torch.where(torch.arange(NUM_POSITIONS) == position, 2.0, 0.0)).max()
    figures = {
        "d_model": str(d_model),
        "frequencies": str(d_model // 2),
        "similarity to the next position": f"{sim[neighbour].item():.3f}",
        "highest similarity to another position": f"{far.item():.3f}",
        # depends on p only through the distance p − 0: the curve read at q = 0
        "similarity to position 0": f"{sim[0].item():.3f}",
    }
    return Frame(data={"pe": pe, "sim": sim, "position": position}, figures=figures)


class PositionalView(View):
    figsize = (6.4, 4.4)

    def setup(self, fig):
        ax_pe, ax_sim = fig.subplots(2, 1, sharex=True)
        # Features run down the rows, sines then cosines, each fast to slow: neighbouring
        # rows are close frequencies, and "auto" interpolation averages them where there are
        # more rows than pixels (d_model 512) instead of drawing moiré.
        self.image = ax_pe.imshow(
            torch.zeros(2, NUM_POSITIONS).numpy(),
            aspect="auto",
            cmap="viridis",
            vmin=-1,
            vmax=1,
            extent=(-0.5, NUM_POSITIONS - 0.5, 1, 0),
            interpolation="auto",
            animated=True,
        )
        (self.row,) = ax_pe.plot([0, 0], [0, 1], color=RED, linewidth=2, animated=True)
        ax_pe.axhline(0.5, color="white", linewidth=1)
        ax_pe.set(
            title="PE(q): frequencies fast (top) to slow",
            yticks=(0.25, 0.75),
            yticklabels=("sin", "cos"),
        )
        fig.colorbar(self.image, ax=ax_pe, fraction=0.05, ticks=(-1, 0, 1))
        positions = torch.arange(NUM_POSITIONS).numpy()
        (self.curve,) = ax_sim.plot(positions, positions * 0.0, color=BLUE, animated=True)
        (self.marker,) = ax_sim.plot([0], [1], "o", color=RED, animated=True)
        ax_sim.axhline(0, color=GREY, linewidth=0.8)
        ax_sim.set(
            title="cosine similarity of PE(p) and PE(q)",
            xlabel="position q (red: p)",
            xlim=(-0.5, NUM_POSITIONS - 0.5),
            ylim=(-0.25, 1.05),
            yticks=(0, 0.5, 1),
        )

    def update(self, data):
        pe = data["pe"]  # (positions, d_model), sin and cos interleaved
        self.image.set_data(torch.cat([pe[:, 0::2], pe[:, 1::2]], dim=1).T.numpy())
        p = data["position"]
        self.row.set_xdata([p, p])
        self.curve.set_ydata(data["sim"].numpy())
        self.marker.set_data([p], [1.0])


def positional_explorer() -> Explorer:
    """d_model × position p → the encoding's heatmap and the similarity of PE(p) to the rest."""
    return Explorer(
        "Sinusoidal positional encoding: d_model and position",
        [
            Control("d_model", "d_model", D_MODEL_VALUES, default=64),
            Control("position", "position p", POSITION_VALUES, default=48),
        ],
        positional_frame,
        PositionalView(),
        caption=(
            f"Positions 0 … {NUM_POSITIONS - 1}. Cosine similarity is PE(p)·PE(q) divided by "
            "d_model/2, the squared norm of every row; it depends only on the distance q − p."
        ),
    )
