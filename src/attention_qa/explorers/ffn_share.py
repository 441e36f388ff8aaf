"""q18's explorer: how a Transformer block's parameters split between attention and the FFN.

A block (Vaswani et al., 2017, §3.1–3.3) has multi-head attention with four
d_model × d_model projections and their biases, a feed-forward network
d_model → d_ff → d_model with biases, and two LayerNorms with a weight and a bias each.
The counts match ``attention_qa.blocks.TransformerBlock``.
"""

from attention_qa.costs import block_parameter_counts
from attention_qa.panel import Control, Explorer, Frame, InvalidSetting, View
from attention_qa.panel.palette import BLUE, GREEN, GREY, RED

D_MODEL_VALUES = (64, 128, 256, 512, 768, 1024, 2048, 4096)
MULTIPLIERS = (0.5, 1, 2, 4, 8)
PARTS = ("attention", "feed-forward", "LayerNorms")
COLOURS = (BLUE, RED, GREEN)


def ffn_share_frame(d_model: int, multiplier: float) -> Frame:
    d_ff = d_model * multiplier
    if d_ff != int(d_ff):
        raise InvalidSetting(f"d_ff = {multiplier} × {d_model} is not a whole number")
    counts = block_parameter_counts(d_model, int(d_ff))
    total = sum(counts.values())
    shares = {part: counts[part] / total for part in PARTS}
    figures = {
        "d_ff": str(int(d_ff)),
        "block parameters": f"{total:,}",
        "attention": f"{counts['attention']:,} ({shares['attention']:.1%})",
        "feed-forward": f"{counts['feed-forward']:,} ({shares['feed-forward']:.1%})",
        "LayerNorms": f"{counts['LayerNorms']:,} ({shares['LayerNorms']:.2%})",
    }
    return Frame(data=shares, figures=figures)


class ShareView(View):
    figsize = (5.6, 3.0)

    def setup(self, fig):
        ax = fig.subplots()
        self.bars = ax.bar(range(len(PARTS)), [0.0] * len(PARTS), color=COLOURS, animated=True)
        self.labels = [
            ax.text(i, 0.0, "", ha="center", va="bottom", animated=True) for i in range(len(PARTS))
        ]
        ax.axhline(2 / 3, color=GREY, linestyle="--", linewidth=1)
        ax.set(
            xticks=range(len(PARTS)),
            xticklabels=PARTS,
            ylim=(0, 1.05),
            ylabel="share",
            yticks=(0, 1 / 3, 2 / 3, 1),
            yticklabels=("0", "1/3", "2/3", "1"),
            title="Where a block's parameters are",
        )

    def update(self, data):
        for bar, label, part in zip(self.bars, self.labels, PARTS, strict=True):
            bar.set_height(data[part])
            label.set_position((bar.get_x() + bar.get_width() / 2, data[part] + 0.01))
            label.set_text(f"{data[part]:.1%}")


def ffn_share_explorer() -> Explorer:
    """d_model × (d_ff / d_model) → shares of attention, FFN and LayerNorm parameters."""
    return Explorer(
        "Parameters of one block: attention vs feed-forward",
        [
            Control("d_model", "d_model", D_MODEL_VALUES, default=512),
            Control("multiplier", "d_ff / d_model", MULTIPLIERS, default=4),
        ],
        ffn_share_frame,
        ShareView(),
        caption=(
            "Attention: 4·d_model² + 4·d_model; feed-forward: 2·d_model·d_ff + d_ff + d_model; "
            "LayerNorms: 4·d_model. Embeddings are not part of a block."
        ),
    )
