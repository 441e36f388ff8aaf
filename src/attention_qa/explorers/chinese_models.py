"""q46's explorer: reading past the trained length with and without LogN scaling, and GLM's
blank-infilling input.

Left: ``positional.needle_attention``, one query's attention over n keys whose scores are
seeded standard normal noise except one "needle" key (score ln L, L = 2,048, the length
Qwen's report trains at, §2.4), with or without the LogN factor of Qwen's ``use_logn_attn``
(``positional.logn_scale``): the entropy of the weights and the needle's weight, against n.
Right: ``objectives.glm_blank_infilling`` on six tokens x1 … x6 (Du et al., 2022, Figure 2)
for a span layout: the attention mask over [part A, part B], part A's keys blue and part B's
yellow; the input and both position rows are printed under the figure.
"""

import math

import numpy as np
from matplotlib.colors import to_rgba

from attention_qa.objectives import glm_blank_infilling
from attention_qa.panel import Control, Explorer, Frame, View
from attention_qa.panel.palette import BLUE, INK, INK_LIGHT, PALE_GREY, RED, YELLOW
from attention_qa.positional import attention_entropy, logn_scale, needle_attention

TRAINED = 2048  # Qwen's pre-training length (Bai et al., 2023, §2.4)
KEYS = (1024, 2048, 8192, 32768)
CURVE = tuple(2 ** k for k in range(9, 16))  # 512 … 32768: the still curves
SCALINGS = ("none", "logn")

TOKENS = ["x1", "x2", "x3", "x4", "x5", "x6"]
IDS = {w: i for i, w in enumerate(["[M]", "[S]", "[E]", *TOKENS])}
WORDS = {i: w for w, i in IDS.items()}
LAYOUTS = {  # name: (spans, order)
    "figure2": ([(2, 3), (4, 6)], [1, 0]),
    "text_order": ([(2, 3), (4, 6)], [0, 1]),
    "one_span": ([(3, 6)], [0]),
}
WIDTH = 10  # the longest input: Figure 2's ten tokens


def _stats(n: int, logn: bool) -> tuple[float, float]:
    w = needle_attention(n, TRAINED, logn=logn)
    return attention_entropy(w), float(w[0])


# Every setting's numbers, computed once: a frame only looks them up.
STATS = {(n, s): _stats(n, s == "logn") for n in sorted({*KEYS, *CURVE}) for s in SCALINGS}
GLM = {name: glm_blank_infilling([IDS[w] for w in TOKENS], spans, mask_id=IDS["[M]"],
                                 start_id=IDS["[S]"], end_id=IDS["[E]"], order=order)
       for name, (spans, order) in LAYOUTS.items()}


def _mask_image(out: dict) -> np.ndarray:
    """(WIDTH, WIDTH, 4): allowed keys of part A blue, of part B yellow; masked pale grey;
    beyond the input transparent."""
    n, n_a = len(out["input_ids"]), out["part_a_length"]
    rgba = np.zeros((WIDTH, WIDTH, 4))
    allowed = out["mask"].numpy()
    for i in range(n):
        for j in range(n):
            colour = (BLUE if j < n_a else YELLOW) if allowed[i, j] else PALE_GREY
            rgba[i, j] = to_rgba(colour)
    return rgba


IMAGES = {name: _mask_image(out) for name, out in GLM.items()}


def chinese_models_frame(keys: int, scaling: str, layout: str) -> Frame:
    entropy, needle = STATS[keys, scaling]
    out = GLM[layout]
    words = " ".join(WORDS[i] for i in out["input_ids"].tolist())
    targets = " ".join(WORDS.get(i, "·") for i in out["targets"].tolist())
    figures = {
        "keys n": f"{keys:,}",
        "LogN factor": f"{logn_scale(keys, TRAINED) if scaling == 'logn' else 1.0:.3f}",
        "entropy (nats)": f"{entropy:.2f} (ln n = {math.log(keys):.2f})",
        "needle's weight": f"{needle:.3f}",
        "GLM input": words,
        "targets": targets,
        "position ids": " ".join(map(str, out["position_ids"].tolist())),
        "block position ids": " ".join(map(str, out["block_position_ids"].tolist())),
    }
    data = {"keys": keys, "scaling": scaling, "entropy": entropy, "needle": needle,
            "layout": layout}
    return Frame(data=data, figures=figures)


def _cells(rgba: np.ndarray, k: int = 8) -> np.ndarray:
    """Each cell as k × k pixels with a white line between cells, drawn into the image."""
    big = rgba.repeat(k, axis=0).repeat(k, axis=1)
    big[::k] = (1.0, 1.0, 1.0, 1.0)
    big[:, ::k] = (1.0, 1.0, 1.0, 1.0)
    return big


CELLS = {name: _cells(image) for name, image in IMAGES.items()}


class ChineseModelsView(View):
    """Entropy and the needle's weight against n (log scale), both scalings drawn still and
    the chosen point marked; GLM's mask as an image."""

    figsize = (6.4, 3.0)

    def setup(self, fig):
        self.entropy_ax, self.needle_ax, self.mask_ax = fig.subplots(
            1, 3, width_ratios=(1, 1, 0.9))
        ns = list(CURVE)
        for ax, index, title in ((self.entropy_ax, 0, "entropy (nats)"),
                                 (self.needle_ax, 1, "needle's weight")):
            for scaling, colour, style in (("none", INK_LIGHT, "--"), ("logn", RED, "-")):
                ax.plot(ns, [STATS[n, scaling][index] for n in ns], style, color=colour,
                        label=("no scaling", "LogN")[scaling == "logn"])
            ax.axvline(TRAINED, color=INK_LIGHT, lw=0.8, ls=":")
            ax.set_xscale("log", base=2)
            ax.set_xticks([512, 2048, 8192, 32768], labels=["512", "2K", "8K", "32K"])
            ax.set_xlabel("keys n")
            ax.set_title(title)
        self.entropy_ax.set_ylim(0, 11)
        self.needle_ax.set_ylim(0, 1)
        self.needle_ax.legend(loc="upper right", frameon=False)
        self.markers = [ax.plot([], [], "o", color=INK, ms=7, animated=True)[0]
                        for ax in (self.entropy_ax, self.needle_ax)]
        self.mask_image = self.mask_ax.imshow(
            CELLS["figure2"], aspect="auto", interpolation="nearest",
            extent=(-0.5, WIDTH - 0.5, WIDTH - 0.5, -0.5), animated=True)
        self.mask_ax.set_title("GLM's mask")
        self.mask_ax.set_xlabel("key")
        self.mask_ax.set_ylabel("query")
        self.mask_ax.set_xticks([])
        self.mask_ax.set_yticks([])

    def update(self, data):
        n = data["keys"]
        self.markers[0].set_data([n], [data["entropy"]])
        self.markers[1].set_data([n], [data["needle"]])
        self.markers[0].set_color(RED if data["scaling"] == "logn" else INK)
        self.markers[1].set_color(RED if data["scaling"] == "logn" else INK)
        self.mask_image.set_data(CELLS[data["layout"]])


def chinese_models_explorer() -> Explorer:
    """keys × scaling × GLM span layout → attention entropy and needle weight; GLM's mask."""
    return Explorer(
        "LogN scaling past the trained length, and GLM's blank infilling",
        [
            Control("keys", "keys n (trained on 2,048)", KEYS, default=8192,
                    labels=("1,024", "2,048", "8,192", "32,768")),
            Control("scaling", "scaling", SCALINGS, default="none",
                    labels=("none", "LogN (Qwen)")),
            Control("layout", "GLM spans", tuple(LAYOUTS), default="figure2",
                    labels=("Figure 2: [x5 x6] first", "spans in text order",
                            "one span to the end")),
        ],
        chinese_models_frame,
        ChineseModelsView(),
        caption=(
            "Left and middle: one query's attention over n keys of seeded noise plus one "
            "needle key, a toy; the curves show both scalings, the dot the chosen one. "
            "Without scaling the needle's weight falls as n grows past the trained 2,048 "
            "and the entropy climbs; LogN multiplies the scores by log n / log 2,048 and "
            "keeps the needle's weight near its trained value. Right: GLM's mask over "
            "[part A, part B]; blue: part A's keys, which every query sees; yellow: part "
            "B's keys, seen causally; grey: masked."
        ),
    )
