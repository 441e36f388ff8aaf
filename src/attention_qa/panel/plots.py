"""Drawing helpers that several explorers' views share (matplotlib only, no engine state)."""

import torch

from attention_qa.panel.palette import INK


def sorted_weights_axes(ax):
    """Axes for one query's m weights, largest first, over [0, 1]; returns the 1/m line."""
    (uniform,) = ax.plot([0, 1], [0, 0], color=INK, linestyle="--", linewidth=1,
                         animated=True)
    ax.set(
        title="weights of one query, largest first",
        xlabel="keys, sorted (fraction of m)",
        ylabel="weight",
        xlim=(0, 1),
        ylim=(0, 1.02),
    )
    return uniform


def key_edges(m: int):
    """Edges of m equal steps over [0, 1], for a stairs plot of m sorted weights."""
    return torch.linspace(0, 1, m + 1).numpy()
