"""q10's explorer: the same input seen by 1, 2, 4 or 8 heads at a fixed d_model.

Each head has its own W_Q and W_K slices, so it scores the same tokens its own way
(Vaswani et al., 2017, section 3.2.2). The weights are random (seeded), the tokens are
random embeddings plus sinusoidal positions; the panel shows every head's n × n map.
"""


import matplotlib
import torch

from attention_qa.multihead import MultiHeadAttention
from attention_qa.panel import Control, Explorer, Frame, View
from attention_qa.positional import sinusoidal_encoding
from attention_qa.training import single_thread

D_MODEL = 32
N_TOKENS = 8
HEAD_COUNTS = (1, 2, 4, 8)
INPUTS = ("random tokens", "a sequence said twice")
SEEDS = (0, 1, 2)
VIRIDIS = matplotlib.colormaps["viridis"]  # weight 0 (dark) to 1 (yellow)


def head_inputs(kind: str, n: int = N_TOKENS, d_model: int = D_MODEL) -> torch.Tensor:
    """Token embeddings plus sinusoidal positions, (1, n, d_model).

    "a sequence said twice" repeats its first n/2 tokens, so content-matching heads
    can find each token's twin n/2 positions away.
    """
    if kind not in INPUTS:
        raise ValueError(f"kind must be one of {list(INPUTS)}, got {kind!r}")
    g = torch.Generator().manual_seed(100)
    vocab = torch.randn(16, d_model, generator=g)  # (vocab, d_model)
    tokens = torch.randint(16, (n,), generator=g)  # (n,)
    if kind == "a sequence said twice":
        tokens = tokens[: n // 2].repeat(2)
    return (vocab[tokens] + sinusoidal_encoding(n, d_model)).unsqueeze(0)  # (1, n, d_model)


def head_weights(num_heads: int, kind: str, seed: int) -> torch.Tensor:
    """Attention weights (h, n, n) of a seeded random MultiHeadAttention on one input."""
    torch.manual_seed(seed)
    mha = MultiHeadAttention(D_MODEL, num_heads)
    with torch.no_grad():
        for layer in (mha.w_q, mha.w_k):
            # Unit-variance weights per input feature: the scores then have a spread of
            # about 1 after the 1/√d_k scaling, so the maps are neither flat nor one-hot.
            layer.weight.normal_(0, D_MODEL**-0.5)
        x = head_inputs(kind)  # (1, n, d_model)
        _, weights = mha(x, x, x)  # (1, h, n, n)
    return weights[0]  # (h, n, n)


@single_thread()  # 8 × 8 maps: a second thread costs more than the work
def head_maps_frame(num_heads: int, kind: str, seed: int) -> Frame:
    weights = head_weights(num_heads, kind, seed)  # (h, n, n)
    entropy = torch.special.entr(weights).sum(-1).mean(-1)  # (h,) mean over queries
    # How different the heads are: mean absolute difference between two heads' maps.
    if num_heads > 1:
        diffs = [
            (weights[i] - weights[j]).abs().mean().item()
            for i in range(num_heads)
            for j in range(i + 1, num_heads)
        ]
        spread = f"{sum(diffs) / len(diffs):.3f}"
    else:
        spread = "n/a (one head)"
    figures = {
        "d_k": str(D_MODEL // num_heads),
        "entropy per head": ", ".join(f"{e:.2f}" for e in entropy.tolist()) + " nats",
        "mean |difference| between two heads' maps": spread,
    }
    return Frame(data={"weights": weights}, figures=figures)


def head_slots(num_heads: int) -> list[tuple[slice, slice]]:
    """Where each of ``num_heads`` maps goes on a 2 × 4 grid: fewer heads, larger maps."""
    rows, cols = {1: (1, 1), 2: (1, 2), 4: (2, 2), 8: (2, 4)}[num_heads]
    height, width = 2 // rows, 4 // cols  # grid cells per map
    return [
        (slice(r * height, (r + 1) * height), slice(c * width, (c + 1) * width))
        for r in range(rows)
        for c in range(cols)
    ]


class HeadMapsView(View):
    """Every head's map; one layout per number of heads, so the maps fill the canvas.

    All layouts are built at setup on one 2 × 4 grid; ``update`` shows the one that fits.
    """

    figsize = (6.0, 3.8)

    def setup(self, fig):
        grid = fig.add_gridspec(2, 4)
        self.layouts, self.images = {}, {}
        for h in HEAD_COUNTS:
            self.layouts[h], self.images[h] = [], []
            for i, (rows, cols) in enumerate(head_slots(h)):
                ax = fig.add_subplot(grid[rows, cols])
                image = ax.imshow(  # RGBA bytes, coloured by ``update``
                    torch.zeros(N_TOKENS, N_TOKENS, 4, dtype=torch.uint8).numpy(), animated=True
                )
                ax.set(xticks=[], yticks=[], title=f"head {i}")
                # Square maps in wider slots: pack them towards the centre of the canvas.
                vertical = "S" if rows.stop < 2 else "N" if rows.start > 0 else ""
                horizontal = "E" if cols.stop < 4 else "W" if cols.start > 0 else ""
                ax.set_anchor(vertical + horizontal or "C")
                self.layouts[h].append(ax)
                self.images[h].append(image)
        fig.supxlabel("keys", fontsize="medium")
        fig.supylabel("queries", fontsize="medium")

    def update(self, data) -> int:
        # Coloured here, as bytes: an RGBA image draws about twice as fast as one that the
        # image itself puts through the colour map.
        colours = torch.from_numpy(VIRIDIS(data["weights"].numpy(), bytes=True))  # (h, n, n, 4)
        self.show_layout(colours, self.layouts, self.images)
        return len(colours)  # the still part's state: the layout, one picture per head count


def head_maps_explorer() -> Explorer:
    """Heads (1, 2, 4, 8 at d_model = 32) × input × weight seed → every head's map."""
    return Explorer(
        "Per-head attention maps at a fixed d_model",
        [
            Control("num_heads", "heads h", HEAD_COUNTS, default=4),
            Control("kind", "input", INPUTS, default="a sequence said twice"),
            Control("seed", "weight seed", SEEDS, default=0),
        ],
        head_maps_frame,
        HeadMapsView(),
        caption=(
            f"d_model = {D_MODEL}, n = {N_TOKENS} tokens, random (seeded) projections; "
            "colour = weight from 0 (dark) to 1 (yellow), each row is one query and sums "
            "to 1. Entropy runs from 0 (one key) to log n = 2.08 nats (uniform)."
        ),
    )
