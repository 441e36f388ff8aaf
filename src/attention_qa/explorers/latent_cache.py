"""q27's explorer: what one attention layer caches per token, and how many weights it has,
for MHA, GQA, MQA and multi-head latent attention (MLA).

MLA (DeepSeek-AI, 2024, "DeepSeek-V2", section 2.1) caches one latent vector c of width
d_latent per token and layer, plus a decoupled RoPE key of width d_rope shared by every
head; MHA caches a key and a value per head (``attention_qa.costs.cache_elements_per_token``,
``attention_parameters``). The fixed sizes are DeepSeek-V2's (section 3.1.2): hidden
dimension 5120, heads of width 128, d_rope = 64, 60 layers; GQA uses 8 K/V heads, as
Llama-2-70B does. The bars show every kind at once, so moving d_latent or the heads moves
the bars of the kinds it touches; the kind picks the one described under the figure.
"""

from attention_qa.costs import (
    ATTENTION_KINDS,
    DEEPSEEK_V2,
    GQA_KV_HEADS,
    attention_parameters,
    cache_elements_per_token,
)
from attention_qa.panel import Control, Explorer, Frame, View
from attention_qa.panel.palette import BLUE, RED

D_MODEL = DEEPSEEK_V2["d_model"]
D_HEAD = DEEPSEEK_V2["d_head"]
D_ROPE = DEEPSEEK_V2["d_rope"]
LAYERS = DEEPSEEK_V2["num_layers"]
HEADS = (16, 32, 64, 128)
LATENTS = (128, 256, 512, 1024)
BYTES = 2  # bfloat16
CACHE_RANGE = (100, 1e6)
PARAM_RANGE = (0, 480)  # millions
CHOSEN, OTHER = RED, BLUE
MLA = ATTENTION_KINDS.index("MLA")


def sizes(kind: str, num_heads: int, d_latent: int) -> tuple[int, int]:
    """(numbers cached per token and layer, weights of one layer) of one kind."""
    kwargs = {"num_kv_heads": GQA_KV_HEADS, "d_latent": d_latent, "d_rope": D_ROPE}
    return (cache_elements_per_token(kind, num_heads, D_HEAD, **kwargs),
            attention_parameters(kind, D_MODEL, num_heads, D_HEAD, **kwargs))


def latent_cache_frame(kind: str, num_heads: int, d_latent: int) -> Frame:
    table = {k: sizes(k, num_heads, d_latent) for k in ATTENTION_KINDS}
    cached, params = table[kind]
    mha_cached = table["MHA"][0]
    figures = {
        "cached per token and layer": f"{cached:,} numbers",
        "per token, 60 layers, bf16": f"{cached * LAYERS * BYTES / 2**10:,.1f} KiB",
        "vs MHA": "1×" if kind == "MHA" else f"{mha_cached / cached:.1f}× smaller",
        "as many as GQA with": f"{cached / (2 * D_HEAD):g} K/V heads",
        "weights per layer": f"{params / 1e6:.1f} M",
        "distinct keys per token": {
            "MHA": f"{num_heads} (one per head)", "GQA": f"{GQA_KV_HEADS} (one per group)",
            "MQA": "1 (shared by all heads)",
            "MLA": f"{num_heads} (each head's W_UK reads c)",
        }[kind],
    }
    data = {"cache": [table[k][0] for k in ATTENTION_KINDS],
            "params": [table[k][1] / 1e6 for k in ATTENTION_KINDS],
            "chosen": ATTENTION_KINDS.index(kind),
            "title": f"{num_heads} heads of 128, d_latent = {d_latent}, d_rope = 64"}
    return Frame(data=data, figures=figures)


class LatentCacheView(View):
    figsize = (6.4, 3.2)

    def setup(self, fig):
        ax_cache, ax_params = fig.subplots(1, 2, sharey=True)
        rows = range(len(ATTENTION_KINDS))
        self.bars, self.labels = [], []
        for ax, low in ((ax_cache, CACHE_RANGE[0]), (ax_params, PARAM_RANGE[0])):
            # The bars change colour with the kind: animated. The numbers of MHA, GQA and MQA
            # follow the heads alone: they are drawn with the still part, one picture per
            # number of heads (the key ``update`` returns); MLA's follow d_latent too.
            self.bars.append(ax.barh(rows, [low] * 4, color=OTHER, animated=True))
            self.labels.append([ax.text(low, i, "", va="center", animated=i == MLA)
                                for i in rows])
        ax_cache.set(xscale="log", xlim=CACHE_RANGE, yticks=rows, yticklabels=ATTENTION_KINDS,
                     xlabel="cached numbers\nper token, layer")
        ax_cache.invert_yaxis()
        ax_params.set(xlim=PARAM_RANGE, xlabel="weights per layer\n(millions)")
        self.title = fig.suptitle("heads", animated=True)  # text: keeps the title's line

    def update(self, data):
        for bars, labels, values in zip(self.bars, self.labels,
                                        (data["cache"], data["params"]), strict=True):
            for i, (bar, label, value) in enumerate(zip(bars, labels, values, strict=True)):
                bar.set_width(value)
                bar.set_color(CHOSEN if i == data["chosen"] else OTHER)
                label.set_x(value * 1.15 if bars is self.bars[0] else value + 8)
                label.set_text(f"{value:,.0f}")
        self.title.set_text(data["title"])
        # the still part's state: the numbers written there (set by the heads) and their places
        return tuple((label.get_text(), label.get_position()) for labels in self.labels
                     for label in labels if not label.get_animated())


def latent_cache_explorer() -> Explorer:
    """Kind of attention × number of heads × MLA's latent width d_latent."""
    return Explorer(
        "Per-token cache and weights: MHA, GQA, MQA, MLA",
        [
            Control("kind", "kind", ATTENTION_KINDS, default="MLA"),
            Control("num_heads", "heads", HEADS, default=128),
            Control("d_latent", "d_latent (MLA)", LATENTS, default=512),
        ],
        latent_cache_frame,
        LatentCacheView(),
        caption=(
            "One layer, bias-free, hidden size 5120 and heads of width 128 as in DeepSeek-V2; "
            "GQA has 8 K/V heads; MLA caches d_latent + 64 numbers (the latent c and the "
            "decoupled RoPE key) and has no query compression here. Red: the chosen kind."
        ),
    )
