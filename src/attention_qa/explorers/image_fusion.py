"""q45's explorer: how an image enters a language model, three ways, and what it costs.

* Projector (LLaVA, Liu et al., 2023, §4.1; LLaVA-1.5, Liu et al., 2024, abstract): every
  patch of the vision encoder becomes one token of the language model's sequence, after an
  optional merge × merge fusion of neighbours (Qwen2-VL's 2 × 2 merge, Wang et al., 2024, §2.1);
  ``vision.image_token_count``.
* Q-Former (BLIP-2, Li et al., 2023, §3.1): 32 learned queries cross-attend to the patches
  and only their 32 outputs enter the sequence, whatever the image size.
* Gated cross-attention (Flamingo, Alayrac et al., 2022, §2.2): the sequence holds the text
  and one <image> marker per image (§2.3), no visual features; new layers let the text
  cross-attend to 64 visual tokens from the Perceiver Resampler (§2.1), through a tanh gate
  initialised at 0 (``vision.gated_cross_attention``).

The mask shows who attends to whom in the language model: the image's tokens drawn as four
cells whatever their number, then six text tokens. "Untrained" is a toy, one
frozen random attention layer in float64 with d_model = 8, before any training (each setting
computed on its first visit): the largest change of a text token's output when the image is
added, with the gate closed (α = 0) and open (α = 1). The toy shows which design leaves the
frozen model unchanged, not how much a trained one moves.
"""

import functools

import matplotlib.colors as mcolors
import numpy as np
import torch

from attention_qa.panel import Control, Explorer, Frame, InvalidSetting, View
from attention_qa.panel.palette import BLUE, GREEN, INK_LIGHT, PALE_GREY, RED, WHITE
from attention_qa.vision import gated_cross_attention, image_token_count

DESIGNS = ("projector", "qformer", "cross_attention")
DESIGN_LABELS = ("projector (LLaVA)", "Q-Former (BLIP-2)", "gated cross-attention (Flamingo)")
SIZES = (224, 336, 448)
PATCHES = (14, 16)
MERGES = (1, 2)
QFORMER_QUERIES = 32  # BLIP-2, §3.1
RESAMPLER_TOKENS = 64  # Flamingo, §2.1: the Perceiver Resampler's outputs
IMAGE_CELLS, TEXT = 4, 6  # the mask draws the image as 4 cells, then 6 text tokens
D_MODEL = 8
OPEN_ALPHA = 1.0
CHANGE_MAX = 3.6  # the "Untrained" panel's y limit (the largest change of the frames is 3.03)

COLOURS = {name: mcolors.to_rgba(c) for name, c in
           (("self", BLUE), ("cross", RED), ("masked", PALE_GREY), ("none", WHITE))}


def _weights(seed: int, d_in: int):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(rows, D_MODEL, generator=g, dtype=torch.float64) / rows ** 0.5
            for rows in (D_MODEL, d_in, d_in, D_MODEL)]


_TEXT = torch.randn(1, TEXT, D_MODEL, generator=torch.Generator().manual_seed(0),
                    dtype=torch.float64)  # (1, n, d_model): the prompt's hidden states
_SELF = _weights(1, D_MODEL)  # the frozen language model's attention
_CROSS = _weights(2, D_MODEL)  # the new cross-attention layer


def _image_tokens(count: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(3)
    return torch.randn(1, count, D_MODEL, generator=g, dtype=torch.float64)  # (1, m, d_model)


def _causal_self_attention(h: torch.Tensor) -> torch.Tensor:
    """The frozen layer, causal single-head self-attention with a residual, at the last TEXT
    positions only (the text's outputs; the image's rows are never read): (1, TEXT, d_model)."""
    w_q, w_k, w_v, w_o = _SELF
    n = h.shape[1]
    text = h[:, n - TEXT:]  # (1, TEXT, d_model)
    scores = (text @ w_q) @ (h @ w_k).transpose(-2, -1) / D_MODEL ** 0.5  # (1, TEXT, N)
    causal = torch.ones(n, n, dtype=torch.bool).tril()[n - TEXT:]  # (TEXT, N)
    scores = scores.masked_fill(~causal, float("-inf"))
    return text + scores.softmax(-1) @ (h @ w_v) @ w_o


@functools.cache  # computed on a setting's first visit, not at import
def first_step_change(design: str, image_tokens: int) -> tuple[float, float]:
    """At initialisation, the largest change of a text token's output when the image is
    added, with the gate closed and open (the same twice where there is no gate)."""
    text_only = _causal_self_attention(_TEXT)  # (1, n, d_model)
    media = _image_tokens(image_tokens)
    if design == "cross_attention":
        changes = []
        for alpha in (0.0, OPEN_ALPHA):
            with_image = _causal_self_attention(
                gated_cross_attention(_TEXT, media, *_CROSS, alpha))
            changes.append((with_image - text_only).abs().max().item())
        return changes[0], changes[1]
    joined = _causal_self_attention(torch.cat([media, _TEXT], dim=1))  # (1, n, d_model)
    change = (joined - text_only).abs().max().item()
    return change, change


def lm_mask(design: str) -> np.ndarray:
    """(IMAGE_CELLS + TEXT, IMAGE_CELLS + TEXT, 4) colours: who attends to whom."""
    n = IMAGE_CELLS + TEXT
    rgba = np.empty((n, n, 4))
    causal = np.tril(np.ones((n, n), dtype=bool))
    for i in range(n):
        for j in range(n):
            if design == "cross_attention" and i < IMAGE_CELLS:
                rgba[i, j] = COLOURS["none"]  # the image is not in the sequence
            elif design == "cross_attention" and j < IMAGE_CELLS:
                rgba[i, j] = COLOURS["cross"]
            else:
                rgba[i, j] = COLOURS["self"] if causal[i, j] else COLOURS["masked"]
    return rgba


MASKS = {design: lm_mask(design) for design in DESIGNS}


def _visual_tokens(design: str, size: int, patch: int, merge: int) -> int:
    if design == "qformer":
        return QFORMER_QUERIES
    if design == "cross_attention":
        return RESAMPLER_TOKENS
    return image_token_count(size, size, patch, merge)


def image_fusion_frame(design: str, size: int, patch: int, merge: int) -> Frame:
    if merge != 1 and design != "projector":
        raise InvalidSetting("the merge of neighbouring patches belongs to the projector "
                             "path (Qwen2-VL); set merge to 1")
    patches = image_token_count(size, size, patch)
    if design == "projector":
        try:
            in_sequence = image_token_count(size, size, patch, merge)
        except ValueError as error:
            raise InvalidSetting(f"{size // patch} × {size // patch} patches do not split "
                                 f"into {merge} × {merge} blocks") from error
        attended = in_sequence
    elif design == "qformer":
        in_sequence = attended = QFORMER_QUERIES
    else:
        in_sequence, attended = 0, RESAMPLER_TOKENS
    closed, opened = first_step_change(design, attended)
    figures = {
        "patches from the vision encoder": f"{size // patch} × {size // patch} = {patches}",
        "image tokens in the language model's sequence": str(in_sequence),
        "visual tokens a text token attends to": str(attended),
        "at initialisation, largest change of a text output, gate closed": f"{closed:.3f}",
        "gate open (α = 1)": (f"{opened:.3f}" if design == "cross_attention"
                               else f"{opened:.3f} (no gate)"),
    }
    return Frame(data={"mask": MASKS[design], "patches": patches, "in_sequence": in_sequence,
                       "closed": closed, "opened": opened, "design": design},
                 figures=figures)


class ImageFusionView(View):
    figsize = (6.2, 3.0)

    def setup(self, fig):
        self.count_ax, self.mask_ax, self.step_ax = fig.subplots(
            1, 3, width_ratios=(1.4, 1.0, 0.8))
        ax = self.count_ax
        self.count_bars = ax.barh([1, 0], [1, 1], color=[INK_LIGHT, BLUE], animated=True)
        self.count_text = [ax.text(1, y, " ", va="center", animated=True) for y in (1, 0)]
        ax.set(xscale="log", xlim=(1, 3e4), ylim=(-0.6, 1.6), yticks=[1, 0], xlabel="tokens",
               yticklabels=["patches", "sequence"], title="Tokens per image")
        n = IMAGE_CELLS + TEXT
        self.mask = self.mask_ax.imshow(np.zeros((n, n, 4)), interpolation="nearest",
                                        aspect="auto", extent=(-0.5, n - 0.5, n - 0.5, -0.5),
                                        animated=True)
        middle = (IMAGE_CELLS - 1) / 2, IMAGE_CELLS + (TEXT - 1) / 2
        self.mask_ax.set(xticks=middle, xticklabels=["image", "text"], yticks=middle,
                         yticklabels=["image", "text"], title="Who sees whom")
        self.mask_ax.tick_params(length=0)
        ax = self.step_ax
        self.step_bars = ax.bar([0, 1], [0, 0], color=[GREEN, RED], animated=True)
        self.step_text = [ax.text(x, 0, " ", ha="center", va="bottom", animated=True)
                          for x in (0, 1)]
        ax.set(xticks=[0, 1], xticklabels=["α = 0", "α = 1"], xlim=(-0.6, 1.6),
               ylim=(0, CHANGE_MAX), title="Untrained")

    def update(self, data):
        for bar, text, value in zip(self.count_bars, self.count_text,
                                    (data["patches"], data["in_sequence"]), strict=True):
            bar.set_width(max(value, 1))
            text.set_position((max(value, 1) * 1.15, bar.get_y() + bar.get_height() / 2))
            text.set_text(str(value))
        self.mask.set_data(data["mask"])
        for bar, text, value in zip(self.step_bars, self.step_text,
                                    (data["closed"], data["opened"]), strict=True):
            bar.set_height(value)
            text.set_position((bar.get_x() + bar.get_width() / 2, value + 0.03))
            text.set_text(f"{value:.2f}")


def image_fusion_explorer() -> Explorer:
    """Fusion design × image size × patch × merge → tokens per image, the language model's
    attention mask, and how much its output changes at initialisation, gate closed and open."""
    return Explorer(
        "Images into a language model: projector, Q-Former, gated cross-attention",
        [
            Control("design", "fusion design", DESIGNS, default="projector",
                    labels=DESIGN_LABELS),
            Control("size", "image side (pixels)", SIZES, default=336),
            Control("patch", "patch (pixels)", PATCHES, default=14),
            Control("merge", "merge (n × n patches → 1)", MERGES, default=1),
        ],
        image_fusion_frame,
        ImageFusionView(),
        caption=(
            "Blue: self-attention, red: cross-attention, grey: masked; the image's tokens are "
            "drawn as four cells whatever their number. \"Untrained\" is a toy: "
            "one frozen random attention layer (float64, d_model = 8) before any training; the "
            "change is the largest difference of a text token's output with the image and "
            "without it. Q-Former: 32 queries; gated cross-attention: 64 resampled tokens."
        ),
    )
