"""q26's explorer: swap the parts of a Transformer block, from the 2017 one to LLaMA's.

Each control changes one part of ``attention_qa.blocks.ConfigurableBlock``: the norm
(LayerNorm or RMSNorm, Zhang and Sennrich, 2019), its place (Post-LN as in Vaswani et al.,
2017, or Pre-LN as in LLaMA, Touvron et al., 2023), the feed-forward network (ReLU with
d_ff = 4·d_model, or SwiGLU, Shazeer, 2020, with d_ff = 8/3·d_model), biases, and QK-norm
(Dehghani et al., 2023). The panel shows the parameters of one block by part
(``configurable_block_parameter_counts``), its FLOPs (``block_flops``) and the activation
statistics of a stack of fresh blocks in float64 (``stack_statistics``): the root mean
square of the residual stream after each layer and each layer's largest |attention logit|.
"""

from functools import lru_cache

from attention_qa.blocks import stack_statistics
from attention_qa.costs import block_flops, configurable_block_parameter_counts
from attention_qa.panel import Control, Explorer, Frame, View
from attention_qa.panel.palette import BLUE, GREEN, RED

D_MODEL, NUM_HEADS, N, NUM_LAYERS = 96, 4, 16, 8
D_FF = {"relu": 4 * D_MODEL, "swiglu": 8 * D_MODEL // 3}  # 384 and 256
PARTS = ("attention", "feed-forward", "norms")
COLOURS = (BLUE, RED, GREEN)
QK_SCALES = (1, 2, 4)
STAT_RANGE = (0.5, 50.0)


@lru_cache(maxsize=None)
def _statistics(norm, norm_first, ffn, bias, qk_norm, qk_scale):
    return stack_statistics(
        NUM_LAYERS, d_model=D_MODEL, num_heads=NUM_HEADS, d_ff=D_FF[ffn], n=N,
        qk_scale=qk_scale, norm=norm, ffn=ffn, norm_first=norm_first, bias=bias,
        qk_norm=qk_norm,
    )


def modern_block_frame(norm: str, norm_first: bool, ffn: str, bias: bool, qk_norm: bool,
                       qk_scale: int) -> Frame:
    counts = configurable_block_parameter_counts(
        D_MODEL, D_FF[ffn], NUM_HEADS, norm=norm, ffn=ffn, bias=bias, qk_norm=qk_norm
    )
    flops = sum(block_flops(N, D_MODEL, D_FF[ffn], ffn).values())
    stats = _statistics(norm, norm_first, ffn, bias, qk_norm, qk_scale)
    figures = {
        "d_ff": str(D_FF[ffn]),
        "parameters": f"{sum(counts.values()):,}",
        "of which norms": f"{counts['norms']:,}",
        "FLOPs on 16 tokens": f"{flops:,}",
        "residual RMS after layer 8": f"{stats['rms'][-1]:.2f}",
        "largest |logit|": f"{max(stats['max_logit']):.1f}",
    }
    return Frame(data={"counts": counts, **stats}, figures=figures)


class BlockView(View):
    figsize = (6.4, 3.0)

    def setup(self, fig):
        left, right = fig.subplots(1, 2, width_ratios=(1, 1.25))
        self.bars = left.barh(range(3), [0.0] * 3, color=COLOURS, animated=True)
        self.labels = [left.text(0, i, "", va="center", animated=True)
                       for i in range(3)]
        left.set(yticks=range(3), yticklabels=("attn", "FFN", "norms"), xlim=(0, 100),
                 xlabel="thousands", title="parameters")
        left.invert_yaxis()
        layers = range(1, NUM_LAYERS + 1)
        (self.rms,) = right.plot(layers, [1.0] * NUM_LAYERS, "o-", color=BLUE,
                                 label="residual RMS", animated=True)
        (self.logit,) = right.plot(layers, [1.0] * NUM_LAYERS, "s-", color=RED,
                                   label="max |logit|", animated=True)
        right.set(yscale="log", ylim=STAT_RANGE, xlabel="layer", title="activations",
                  xticks=(1, 4, 8))
        right.legend(loc="upper left", frameon=False)

    def update(self, data):
        for bar, label, part in zip(self.bars, self.labels, PARTS, strict=True):
            value = data["counts"][part] / 1000
            bar.set_width(value)
            label.set_position((value + 2, bar.get_y() + bar.get_height() / 2))
            label.set_text(f"{value:.1f}")
        self.rms.set_ydata(data["rms"])
        self.logit.set_ydata(data["max_logit"])


def modern_block_explorer() -> Explorer:
    """norm × placement × FFN × biases × QK-norm × W_Q/W_K scale → parameters, activations."""
    return Explorer(
        "From the 2017 block to LLaMA's, one part at a time",
        [
            Control("norm", "norm", ("layernorm", "rmsnorm"),
                    labels=("LayerNorm", "RMSNorm")),
            Control("norm_first", "placement", (False, True),
                    labels=("post-norm", "pre-norm")),
            Control("ffn", "feed-forward", ("relu", "swiglu"),
                    labels=("ReLU, 4·d", "SwiGLU, 8/3·d")),
            Control("bias", "biases", (True, False), labels=("yes", "no")),
            Control("qk_norm", "QK-norm", (False, True), labels=("off", "on")),
            Control("qk_scale", "W_Q, W_K scale", QK_SCALES, default=1),
        ],
        modern_block_frame,
        BlockView(),
        caption=(
            f"One block with d_model = {D_MODEL}, {NUM_HEADS} heads; activations of a stack "
            f"of {NUM_LAYERS} fresh causal blocks on {N} standard-normal tokens, in float64. "
            "The W_Q, W_K scale multiplies those weights, as training can grow them."
        ),
    )
