"""The attention playground: d_k, heads, mask, scaling and length in one panel.

Each head attends with its own random queries and keys (standard-normal components, so
q·k has variance d_k; Vaswani et al., 2017, footnote 4). The panel draws every head's
weight map and prints its saturation figures (``attention_qa.saturation.saturation_stats``):
max weight, entropy and the norm of the softmax Jacobian, each a mean over the queries.
"""

import torch

from attention_qa.panel import Control, Explorer, Frame, InvalidSetting, View
from attention_qa.saturation import PLAYGROUND_MASKS, playground_figures, playground_weights

D_K_VALUES = (4, 64, 512)
HEAD_COUNTS = (1, 4)
MASKS = PLAYGROUND_MASKS
SCALINGS = ("none", "1/√d_k", "1/d_k")
LENGTHS = (8, 16)
MAX_HEADS = max(HEAD_COUNTS)


def playground_frame(d_k: int, heads: int, mask: str, scaling: str, n: int) -> Frame:
    try:
        scores, weights = playground_weights(d_k, heads, mask, scaling, n)
    except ValueError as err:  # any value off the panel's grid may reach here
        raise InvalidSetting(str(err)) from None
    return Frame(data={"weights": weights}, figures=playground_figures(scores, mask))


class PlaygroundView(View):
    """One weight map per head: one large map for one head, a 2 × 2 grid for four.

    The saturation figures of each head are printed in the list under the plot.
    """

    figsize = (5.6, 4.6)

    def setup(self, fig):
        grid = fig.add_gridspec(2, 2)
        # Both layouts share the canvas; update shows the one that fits the number of heads.
        self.layouts = {
            1: [fig.add_subplot(grid[:, :])],
            MAX_HEADS: [fig.add_subplot(grid[i // 2, i % 2]) for i in range(MAX_HEADS)],
        }
        self.images = {}
        for heads, axes in self.layouts.items():
            self.images[heads] = []
            for i, ax in enumerate(axes):
                image = ax.imshow(
                    torch.full((2, 2), float("nan")).numpy(), cmap="viridis", vmin=0, vmax=1,
                    extent=(0, 1, 1, 0), interpolation="nearest", animated=True,
                )
                ax.set(xlim=(0, 1), ylim=(1, 0), xticks=[], yticks=[], title=f"head {i + 1}")
                self.images[heads].append(image)
        fig.supxlabel("keys")
        fig.supylabel("queries")
        fig.colorbar(self.images[1][0], ax=self.layouts[1], label="weight", shrink=0.9)

    def update(self, data) -> bool:
        return self.show_layout(data["weights"], self.layouts, self.images)  # (h, n, n)

def playground_explorer() -> Explorer:
    """d_k × heads × mask × scaling × length: every head's weights and saturation figures."""
    return Explorer(
        "The attention playground",
        [
            Control("d_k", "d_k", D_K_VALUES, default=64),
            Control("heads", "heads", HEAD_COUNTS, default=4),
            Control("mask", "mask", MASKS, default="none"),
            Control("scaling", "scaling", SCALINGS, default="1/√d_k"),
            Control("n", "sequence length", LENGTHS, default=8),
        ],
        playground_frame,
        PlaygroundView(),
        caption=(
            "Random standard-normal queries and keys, one set per head. The list gives each "
            "head's max weight (1 is one-hot), entropy in nats (0 is one-hot) and softmax "
            "Jacobian norm (0 means no gradient), means over the queries. The padding "
            "mask hides the last quarter of the keys; the causal mask the keys after each "
            "query."
        ),
    )
