"""q14's explorer: a K/V-cache calculator for published model configurations.

The cache holds, per token, a key and a value vector for every layer and every key/value
head: ``2 · layers · kv_heads · d_head · bytes`` (``attention_qa.costs.kv_cache_bytes``).
Grouped-query attention (Ainslie et al., 2023, "GQA") and multi-query attention (Shazeer,
2019, "Fast Transformer Decoding: One Write-Head is All You Need") shrink it by using fewer
key/value heads than query heads.

The presets (Llama-2-7B, Llama-2-70B, Mistral-7B, GPT-2 small) are ``costs.MODEL_PRESETS``,
read from the rows of ``attention_qa.anatomy.MODELS``: their layer and head counts are the
models' ``config.json`` on Hugging Face, checked against their papers, and each row's
``sources`` names them. GPT-2 small's 12 heads cannot form 8 groups: the panel keeps its
bars and says so instead of a size.
"""

from attention_qa.costs import MODEL_PRESETS, kv_cache_bytes
from attention_qa.panel import Control, Explorer, Frame, InvalidSetting, View
from attention_qa.panel.palette import BLUE, GREY, INK, RED

PRESETS = MODEL_PRESETS
CHOICES = ("MHA", "GQA-8", "MQA")
SEQ_LENS = (4096, 32768, 131072)
DTYPE_BYTES = (4, 2, 1)
DTYPE_LABELS = ("float32 (4 B)", "bfloat16 (2 B)", "int8 (1 B)")
GIB = 2**30
NOT_AVAILABLE = GREY  # bar colour of an option the preset cannot use
GPU_GIB = 80e9 / GIB  # one 80 GB accelerator, for scale
Y_RANGE = (1e-3, 3e3)


def kv_heads_for(choice: str, num_heads: int) -> int:
    """The number of K/V heads of a choice; InvalidSetting when it cannot group the heads."""
    kv = {"MHA": num_heads, "GQA-8": 8, "MQA": 1}.get(choice)
    if kv is None:
        raise ValueError(f"choice must be one of {CHOICES}, got {choice!r}")
    if num_heads % kv != 0:
        raise InvalidSetting(
            f"{kv} key/value heads do not divide {num_heads} query heads: every key/value "
            f"head must serve the same number of query heads"
        )
    return kv


def published_choice(preset: str) -> str:
    _, heads, kv, _ = PRESETS[preset]
    return "MHA" if kv == heads else ("MQA" if kv == 1 else f"GQA-{kv}")


def kv_cache_frame(preset: str, choice: str, seq_len: int, dtype_bytes: int) -> Frame:
    layers, heads, _, d_head = PRESETS[preset]
    sizes = {}
    for option in CHOICES:
        try:
            kv = kv_heads_for(option, heads)
        except InvalidSetting:
            continue
        sizes[option] = kv_cache_bytes(layers, kv, d_head, seq_len, 1, dtype_bytes) / GIB
    data = {
        "sizes": sizes, "choice": choice, "published": published_choice(preset),
        "title": f"{preset}: {seq_len:,} tokens, {dtype_bytes} B per element",
    }
    try:
        chosen_kv = kv_heads_for(choice, heads)
    except InvalidSetting:  # the lesson: K/V heads must divide the query heads
        data["title"] = f"{preset}: {heads} heads cannot form 8 K/V groups"
        figures = {
            "K/V heads": f"8 do not divide {heads} query heads: no {choice}",
            "cache (batch 1)": "none (no such model)",
            "published": data["published"],
        }
        return Frame(data=data, figures=figures)
    per_token = kv_cache_bytes(layers, chosen_kv, d_head, 1, 1, dtype_bytes)
    figures = {
        "K/V heads": f"{chosen_kv} of {heads} query heads",
        "per token": f"{per_token / 2**10:,.0f} KiB",
        "cache (batch 1)": f"{sizes[choice]:,.3f} GiB",
        "vs MHA": f"{sizes['MHA'] / sizes[choice]:.0f}× smaller" if choice != "MHA" else "1×",
        "published": data["published"],
    }
    return Frame(data=data, figures=figures)


class KVCacheView(View):
    figsize = (5.6, 3.0)

    def setup(self, fig):
        ax = fig.subplots()
        self.bars = ax.bar(range(len(CHOICES)), [Y_RANGE[0]] * len(CHOICES), color=NOT_AVAILABLE,
                           animated=True)
        self.labels = [
            ax.text(i, Y_RANGE[0], "", ha="center", va="bottom", animated=True)
            for i in range(len(CHOICES))
        ]
        ax.axhline(GPU_GIB, color=INK, linestyle="--", linewidth=1)
        ax.text(len(CHOICES) - 0.55, GPU_GIB * 1.15, "80 GB", ha="right", va="bottom")
        ax.set(
            yscale="log", ylim=Y_RANGE, xlim=(-0.6, len(CHOICES) - 0.4),
            xticks=range(len(CHOICES)), xticklabels=CHOICES,
            ylabel="K/V cache (GiB, log scale)",
            xlabel="red: the chosen K/V heads; *: the published configuration",
        )
        self.title = ax.set_title("K/V cache", animated=True)  # text: keeps the title's line

    def update(self, data):
        for option, bar, label in zip(CHOICES, self.bars, self.labels, strict=True):
            size = data["sizes"].get(option)
            if size is None:  # this preset cannot use this option
                bar.set_height(Y_RANGE[0])
                bar.set_color(NOT_AVAILABLE)
                label.set_text("n/a")
                label.set_color(RED if option == data["choice"] else "black")
                label.set_y(Y_RANGE[0] * 1.3)
                continue
            label.set_color("black")
            bar.set_height(size)
            bar.set_color(RED if option == data["choice"] else BLUE)
            label.set_text(f"{size:.3g}" + (" *" if option == data["published"] else ""))
            label.set_y(min(size, Y_RANGE[1] / 3) * 1.15)
        self.title.set_text(data["title"])


def kv_cache_explorer() -> Explorer:
    """Preset × K/V heads (MHA, GQA-8, MQA) × sequence length × bytes per element."""
    return Explorer(
        "K/V-cache calculator: MHA, GQA and MQA",
        [
            Control("preset", "model", tuple(PRESETS), default="Llama-2-70B"),
            Control("choice", "K/V heads", CHOICES, default="GQA-8"),
            Control("seq_len", "sequence length", SEQ_LENS, default=4096,
                    labels=tuple(f"{s:,}" for s in SEQ_LENS)),
            Control("dtype_bytes", "cache dtype", DTYPE_BYTES, default=2, labels=DTYPE_LABELS),
        ],
        kv_cache_frame,
        KVCacheView(),
        caption=(
            "Cache = 2 · layers · K/V heads · d_head · sequence length · bytes, for one "
            "sequence (batch 1); a batch multiplies it. Layer and head counts are the "
            "published ones (Llama 2, Mistral 7B, GPT-2); only the number of K/V heads is "
            "varied. The dashed line is one 80 GB accelerator."
        ),
    )

