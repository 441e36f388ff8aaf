"""q38's explorer: pick two models → their blocks side by side, parameters by part, cache.

Everything comes from ``attention_qa.anatomy``: the published shapes in ``MODELS``, the
weights by part (``parameter_parts``: embedding, attention, feed-forward, norms, output
head) and the bytes one token adds to the K/V cache in bfloat16
(``kv_cache_bytes_per_token``). Left, each model's weights split into those parts, as shares
of its total (the totals differ by more than three orders of magnitude, so shares keep both
bars readable; the totals are in the figures). Right, the cache per token on a log scale.
The figures under the plot describe the two blocks side by side.
"""

from attention_qa.anatomy import (
    MODELS,
    PARTS,
    active_parameter_count,
    kv_cache_bytes_per_token,
    kv_sharing,
    parameter_count,
    parameter_parts,
)
from attention_qa.panel import Control, Explorer, Frame, View
from attention_qa.panel.palette import BLUE, GREEN, INK_LIGHT, PURPLE, RED, YELLOW

# Eight decoders, one of each kind of block: MHA with learned positions and a GELU MLP
# (GPT-2), MHA and GQA with SwiGLU (Llama 2), GQA with a window (Mistral), experts
# (Mixtral), pre- and post-norm with GeGLU (Gemma 2), MQA with a parallel block (Falcon) and
# MLA with shared experts (DeepSeek-V3). The table in the chapter has the rest; 8 × 8 pairs
# keep the static panel small.
CHOICES = ("GPT-2", "Llama-2-7B", "Llama-2-70B", "Mistral-7B", "Mixtral-8x7B", "Gemma-2-9B",
           "Falcon-7B", "DeepSeek-V3")
PART_COLOURS = (BLUE, RED, GREEN, YELLOW, PURPLE)
CACHE_RANGE = (1e3, 1e7)  # bytes per token


def _total(n: int) -> str:
    return f"{n / 1e9:,.2f} B" if n >= 1e9 else f"{n / 1e6:,.0f} M"


def describe_block(name: str) -> str:
    """One model's block in a line: attention, feed-forward, norm, position."""
    m = MODELS[name]
    attention = (f"MLA (latent {m.kv_rank}, RoPE key {m.d_rope})" if m.attention == "MLA"
                 else f"{m.attention}, {m.heads} heads / {m.kv_heads} K/V of {m.d_head}")
    if m.window:
        attention += f", window {m.window:,}"
    ffn = (f"{m.experts} experts × {m.ffn} {m.d_ff_expert:,}, top-{m.active_experts}"
           + (f" + {m.shared_experts} shared" if m.shared_experts else "")
           + (f" (first {m.dense_layers} dense)" if m.dense_layers else "")
           if m.experts else f"{m.ffn} {m.d_ff:,}")
    position = m.position + (f" (base {m.rope_base:,.0f})" if m.rope_base else "")
    return (f"{m.layers} × [{attention}; {ffn}; {m.norm}, {m.norm_place}]; {position}; "
            f"d_model {m.d_model:,}")


def anatomy_frame(model_a: str, model_b: str) -> Frame:
    shares, caches, figures = [], [], {}
    for slot, name in (("A", model_a), ("B", model_b)):
        parts = parameter_parts(name)
        total = parameter_count(name)
        shares.append([parts[p] / total for p in PARTS])
        cache = kv_cache_bytes_per_token(name)
        caches.append(cache)
        active = active_parameter_count(name)
        figures[f"{slot}: {name}"] = describe_block(name)
        figures[f"{slot}: parameters"] = _total(total) + (
            f" ({_total(active)} per token)" if active != total else "")
        figures[f"{slot}: K/V cache per token (bf16)"] = (
            f"{cache / 1024:,.1f} KiB; {kv_sharing(name)}")
    ratio = caches[0] / caches[1]
    figures["cache per token, A / B"] = f"{ratio:.2f}×" if ratio < 10 else f"{ratio:,.0f}×"
    return Frame(data={"shares": shares, "caches": caches}, figures=figures)


class AnatomyView(View):
    figsize = (6.4, 3.0)

    def setup(self, fig):
        ax_parts, ax_cache = fig.subplots(1, 2, width_ratios=(1.6, 1))
        self.segments = []
        for row in range(2):
            left = 0.0
            segs = []
            for colour, part in zip(PART_COLOURS, PARTS, strict=True):
                segs.append(ax_parts.barh(row, 0.2, left=left, color=colour, animated=True,
                                          label=part if row == 0 else None)[0])
                left += 0.2
            self.segments.append(segs)
        ax_parts.set(xlim=(0, 1), yticks=(0, 1), yticklabels=("A", "B"),
                     xlabel="share of the weights")
        ax_parts.invert_yaxis()
        fig.legend(loc="outside lower center", ncol=3, frameon=False)
        self.cache = ax_cache.barh((0, 1), [CACHE_RANGE[0]] * 2, color=INK_LIGHT,
                                   animated=True)
        ax_cache.set(xscale="log", xlim=CACHE_RANGE, yticks=(0, 1), yticklabels=("A", "B"),
                     xlabel="K/V cache bytes\nper token (bf16)")
        ax_cache.invert_yaxis()

    def update(self, data):
        for segs, shares in zip(self.segments, data["shares"], strict=True):
            left = 0.0
            for seg, share in zip(segs, shares, strict=True):
                seg.set_x(left)
                seg.set_width(share)
                left += share
        for bar, cache in zip(self.cache, data["caches"], strict=True):
            bar.set_width(cache)


def anatomy_explorer() -> Explorer:
    """Two models → their blocks, weights by part and K/V cache per token."""
    return Explorer(
        "Anatomy of open models: two blocks side by side",
        [
            Control("model_a", "model A", CHOICES, default="Llama-2-7B"),
            Control("model_b", "model B", CHOICES, default="Mistral-7B"),
        ],
        anatomy_frame,
        AnatomyView(),
        caption=(
            "Left: each model's weights by part (embedding, attention, feed-forward, norms, "
            "output head) as shares of its total. Right: the bytes one token adds to the K/V "
            "cache in bfloat16, log scale. The figures give the totals and each block."
        ),
    )
