"""q17's explorer: the length of a random vector concentrates near √d as d grows.

For x with d independent standard-normal components, ‖x‖² has mean d and variance 2d, so
‖x‖/√d has mean close to 1 and standard deviation close to 1/√(2d). LayerNorm (Ba et al.,
2016) with unit weight and zero bias puts every vector exactly at norm √d; for large d a
random vector is almost there already.
"""

import math

import torch

from attention_qa.panel import Control, Explorer, Frame, View
from attention_qa.panel.palette import BLUE, RED

D_VALUES = tuple(2**i for i in range(13))  # 1 … 4096
NUM_SAMPLES = 4000
RATIO_RANGE = (0.0, 2.5)
RATIO_BINS = 50


def norm_ratios(d: int, num_samples: int = NUM_SAMPLES, seed: int = 0) -> torch.Tensor:
    """‖x‖/√d for num_samples vectors x with d independent standard-normal components."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(num_samples, d, generator=g)  # (N, d)
    return x.norm(dim=-1) / math.sqrt(d)  # (N,)


def norm_frame(d: int) -> Frame:
    ratios = norm_ratios(d)  # (N,)
    clipped = ratios.clamp(*RATIO_RANGE)
    counts, edges = torch.histogram(clipped, bins=RATIO_BINS, range=RATIO_RANGE)
    within = ((ratios - 1).abs() < 0.1).float().mean().item()
    figures = {
        "mean of ‖x‖/√d": f"{ratios.mean().item():.3f}",
        "std of ‖x‖/√d": f"{ratios.std().item():.3f}",
        "1/√(2d)": f"{1 / math.sqrt(2 * d):.3f}",
        "share within 10% of √d": f"{within:.0%}",
    }
    return Frame(data={"fractions": counts / counts.sum(), "edges": edges}, figures=figures)


class NormView(View):
    figsize = (6.0, 2.6)

    def setup(self, fig):
        ax = fig.subplots()
        self.hist = ax.stairs([0.0], [0.0, 1.0], fill=True, color=BLUE, animated=True)
        ax.axvline(1.0, color=RED, linestyle="--", linewidth=1.2, label="LayerNorm output")
        ax.set(
            title="length of random vectors, divided by √d",
            xlabel="‖x‖ / √d",
            ylabel="fraction per bin",
            xlim=RATIO_RANGE,
            ylim=(0, 1.0),
        )
        ax.legend(loc="upper right", frameon=False)

    def update(self, data):
        self.hist.set_data(data["fractions"].numpy(), data["edges"].numpy())


def norm_concentration_explorer() -> Explorer:
    """d (1 … 4096, log scale) → histogram of ‖x‖/√d for standard-normal x."""
    return Explorer(
        "Norm concentration: ‖x‖/√d for d-dimensional standard-normal vectors",
        [Control("d", "dimension d", D_VALUES, default=16)],
        norm_frame,
        NormView(),
        caption=(
            f"{NUM_SAMPLES} vectors per setting. The dashed line is where LayerNorm (unit "
            "weight, zero bias) puts every vector: norm exactly √d."
        ),
    )
