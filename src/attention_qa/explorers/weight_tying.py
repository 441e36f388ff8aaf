"""q16's explorer: what tying the input embedding and the output projection saves.

Press and Wolf (2017), "Using the Output Embedding to Improve Language Models", and
Vaswani et al. (2017, §3.4) use one vocab_size × d_model matrix both to embed tokens and,
transposed, to turn the last hidden states into logits. The model here is a stack of
NUM_BLOCKS Transformer blocks with d_ff = 4·d_model (counted as in
``attention_qa.costs.block_parameter_counts``) between the two.
"""

from attention_qa.costs import NUM_BLOCKS, model_parameter_counts
from attention_qa.panel import Control, Explorer, Frame, View
from attention_qa.panel.palette import BLUE, GREY, RED

VOCAB_VALUES = (8_000, 16_000, 32_000, 37_000, 50_257, 128_000)
D_MODEL_VALUES = (128, 256, 512, 768, 1024, 2048)
SEGMENTS = ("input embedding", "blocks", "output projection")
COLOURS = (BLUE, GREY, RED)


def tying_frame(vocab_size: int, d_model: int) -> Frame:
    untied = model_parameter_counts(vocab_size, d_model, tied=False)
    tied = model_parameter_counts(vocab_size, d_model, tied=True)
    total_untied, total_tied = sum(untied.values()), sum(tied.values())
    saved = total_untied - total_tied
    figures = {
        "untied": f"{total_untied / 1e6:.1f} M",
        "tied": f"{total_tied / 1e6:.1f} M",
        "saved": f"{saved / 1e6:.1f} M ({saved / total_untied:.0%} of the untied model)",
        "embeddings' share of the untied model": (
            f"{(untied['input embedding'] + untied['output projection']) / total_untied:.0%}"
        ),
    }
    data = {
        "untied": [untied[s] / total_untied for s in SEGMENTS],
        "tied": [tied[s] / total_untied for s in SEGMENTS],
    }
    return Frame(data=data, figures=figures)


class TyingView(View):
    figsize = (6.4, 2.8)

    def setup(self, fig):
        ax = fig.subplots()
        self.rects = {}
        for row, name in enumerate(("untied", "tied")):
            self.rects[name] = [
                ax.barh(row, 0.0, left=0.0, color=colour, animated=True)[0]
                for colour in COLOURS
            ]
        ax.set(
            yticks=(0, 1),
            yticklabels=("untied", "tied"),
            xlim=(0, 1),
            ylim=(1.6, -0.6),
            xlabel="parameters, as a fraction of the untied model",
            title=f"Embeddings and a {NUM_BLOCKS}-block model, d_ff = 4·d_model",
        )
        fig.legend(
            self.rects["untied"], SEGMENTS, loc="outside lower center", ncols=3, frameon=False
        )

    def update(self, data):
        for name in ("untied", "tied"):
            left = 0.0
            for rect, width in zip(self.rects[name], data[name], strict=True):
                rect.set_x(left)
                rect.set_width(width)
                left += width


def weight_tying_explorer() -> Explorer:
    """vocab size × d_model → parameter counts of a small model with and without tying."""
    return Explorer(
        "Weight tying: parameters with and without a shared embedding matrix",
        [
            Control("vocab_size", "vocabulary size", VOCAB_VALUES, default=37_000),
            Control("d_model", "d_model", D_MODEL_VALUES, default=512),
        ],
        tying_frame,
        TyingView(),
        caption=(
            f"Input embedding and output projection are vocab_size × d_model each; tying "
            f"shares one matrix. The {NUM_BLOCKS} blocks are counted with biases and LayerNorms."
        ),
    )
