"""q23's explorer: the masks of every attention layer of one model family.

The layers come from ``attention_qa.families.family_layers`` (BERT, GPT, T5, ViT, CLIP,
BLIP, Flamingo, LLaVA; the papers are named there). Each panel is one layer's boolean mask,
rows the queries, columns the keys and values, labelled with where they come from. CLIP
gets a last panel, text queries against image keys, that no layer fills: its two encoders
meet only in the similarity matrix of their pooled outputs.
"""

import numpy as np
from matplotlib.colors import to_rgba
from matplotlib.patches import Patch

from attention_qa.families import FAMILIES, MODALITY, cross_modal_entries, family_layers
from attention_qa.panel import Control, Explorer, Frame, View
from attention_qa.panel.palette import BLUE

TEXT_LENGTHS = (4, 6)
PADDINGS = (0, 1, 2)
GRIDS = (2, 3)
MAX_PANELS = 3
CELL_PX = 8  # pixels a cell in the picture, the last one a seam
ALLOWED, BLOCKED, PADDED = (to_rgba(c) for c in (BLUE, "#dddddd", "#ee8866"))
BOUNDARY = to_rgba("black")
SHORT = {"encoder output": "encoder out", "patches + latents": "patch + latent",
         "visual tokens": "visual"}
TITLES = {"encoder self-attention": "encoder self", "decoder self-attention": "decoder self",
          "cross-attention": "cross", "image encoder self-attention": "image self",
          "text encoder self-attention": "text self", "text self-attention": "text self",
          "resampler attention": "resampler", "language model self-attention": "LM self",
          "gated cross-attention": "gated cross"}


def _picture(mask, query_tokens, key_tokens) -> np.ndarray:
    """(n·C, m·C, 4) RGBA, C pixels a cell with a white seam: blue where a query may read a
    key, orange where a padding key is hidden, grey elsewhere; a black seam where the tokens
    change from image to text."""
    n, m = mask.shape
    cells = np.empty((n, m, 4))
    cells[:] = BLOCKED
    cells[:, [t == "pad" for t in key_tokens]] = PADDED
    cells[np.asarray(mask, dtype=bool)] = ALLOWED
    image = cells.repeat(CELL_PX, axis=0).repeat(CELL_PX, axis=1)  # (n·C, m·C, 4)
    image[CELL_PX - 1 :: CELL_PX] = 1.0  # white seams between rows and between columns
    image[:, CELL_PX - 1 :: CELL_PX] = 1.0
    for axis, tokens in ((0, query_tokens), (1, key_tokens)):
        kinds = [MODALITY[t] for t in tokens]
        for j in range(1, len(kinds)):
            if kinds[j] != kinds[j - 1]:
                seam = slice(j * CELL_PX - 2, j * CELL_PX)
                image[(seam, slice(None)) if axis == 0 else (slice(None), seam)] = BOUNDARY
    return image


def _tokens(family: str, text_len: int, padding: int, grid: int) -> str:
    image = f"[CLS] + {grid * grid} patches"
    text = f"{text_len} tokens, {padding} of them padding"
    return {
        "BERT": f"text {text}", "GPT": f"text {text}",
        "T5": f"source {text}; target {text_len} tokens", "ViT": f"image {image}",
        "Flamingo": f"two images of {grid * grid} patches, 2 visual tokens each; text {text}",
        "LLaVA": f"image {image}, its {grid * grid} patches fed to the LM; text {text}",
    }.get(family, f"image {image}; text {text}")


def family_frame(family: str, text_len: int, padding: int, grid: int) -> Frame:
    layers = family_layers(family, text_len, padding, grid)
    panels, figures = [], {"tokens": _tokens(family, text_len, padding, grid)}
    for i, layer in enumerate(layers, start=1):
        n, m = layer.mask.shape
        panels.append({
            "title": f"{i} · {TITLES[layer.name]}",
            "queries": f"Q: {SHORT.get(layer.queries, layer.queries)}",
            "keys": f"K, V: {SHORT.get(layer.keys, layer.keys)}",
            "picture": _picture(layer.mask, layer.query_tokens, layer.key_tokens),
            "empty": False,
        })
        figures[f"{i} · {layer.name}"] = (
            f"Q from {layer.queries}, K and V from {layer.keys}; {n} × {m}, "
            f"{int(layer.mask.sum())} pairs allowed"
        )
    modalities = {MODALITY[t] for layer in layers for t in layer.query_tokens}
    across = sum(cross_modal_entries(layer) for layer in layers)
    if modalities == {"image", "text"} and across == 0:  # CLIP: two towers, no bridge
        text, image = layers[1].query_tokens, layers[0].key_tokens
        panels.append({
            "title": f"{len(layers) + 1} · none", "queries": "Q: text", "keys": "K, V: image",
            "picture": _picture(np.zeros((len(text), len(image)), bool), text, image),
            "empty": True,
        })
    figures["text–image pairs allowed"] = (
        f"{across}" if len(modalities) == 2 else "none (one modality)"
    )
    return Frame(data={"panels": panels}, figures=figures)


class FamilyView(View):
    figsize = (6.4, 3.3)

    def setup(self, fig):
        self.axes = fig.subplots(1, MAX_PANELS)
        self.images, self.notes, self.words = [], [], []
        for ax in self.axes:
            self.images.append(ax.imshow(np.ones((2, 2, 4)), animated=True,
                                         interpolation="nearest"))
            self.notes.append(ax.text(0.5, 0.5, "no layer", transform=ax.transAxes,
                                      ha="center", va="center", animated=True,
                                      bbox={"facecolor": "white", "edgecolor": "none"}))
            # Square boxes of one size; each mask is drawn to scale in the middle of its box.
            # The longest labels, so that the layout, fixed after setup, leaves room for all.
            ax.set(xticks=[], yticks=[], title="3 · gated cross", xlabel="K, V: encoder out",
                   ylabel="Q: image + text", aspect="auto", box_aspect=1, xlim=(0, 1),
                   ylim=(1, 0))
            for spine in ax.spines.values():
                spine.set_visible(False)
            # Only the words and the picture change. The words are texts where the title
            # and the axis labels go (those stay, transparent, to hold their room); they
            # follow the family alone, so they belong to the still part, drawn once per
            # family (the key ``update`` returns). The picture (and the note over it) is
            # animated.
            for text in (ax.title, ax.xaxis.label, ax.yaxis.label):
                text.set_color("none")
            self.words.append((
                ax.text(0.5, 1.0, "", transform=ax.title.get_transform(), ha="center",
                        va="baseline", size="large"),
                ax.text(0.5, -0.03, "", transform=ax.transAxes, ha="center", va="top"),
                ax.text(-0.03, 0.5, "", transform=ax.transAxes, ha="right", va="center",
                        rotation=90),
            ))
        handles = [Patch(color=c, label=label) for c, label in
                   ((ALLOWED, "may attend"), (BLOCKED, "hidden"), (PADDED, "padding key"))]
        fig.legend(handles=handles, loc="outside lower center", ncols=3, frameon=False)

    def update(self, data):
        # The layout, fixed by now, kept the placeholders' room for the words: drawn
        # transparent, they would only cost the first picture of each family.
        for ax in self.axes:
            for text in (ax.title, ax.xaxis.label, ax.yaxis.label):
                text.set_visible(False)
        panels = data["panels"]
        size = max(max(p["picture"].shape[:2]) for p in panels) / CELL_PX  # cells
        for i, (image, note, words) in enumerate(zip(self.images, self.notes, self.words,
                                                     strict=True)):
            shown = i < len(panels)
            for artist in (image, *words):
                artist.set_visible(shown)
            note.set_visible(shown and panels[i]["empty"])
            if not shown:
                continue
            picture = panels[i]["picture"]
            n, m = (side / CELL_PX for side in picture.shape[:2])
            # as bytes (made as matplotlib makes them from floats): drawn about twice as fast
            image.set_data((picture * 255).astype(np.uint8))
            # the mask to scale, centred in the unit box: a box holds size × size cells
            x0, y0 = (size - m) / 2, (size - n) / 2
            image.set_extent((x0 / size, (x0 + m) / size, (y0 + n) / size, y0 / size))
            for text, key in zip(words, ("title", "keys", "queries"), strict=True):
                text.set_text(panels[i][key])
        # the still part's state: the words of each panel shown
        return tuple((p["title"], p["keys"], p["queries"]) for p in panels)


def model_family_explorer() -> Explorer:
    """Family × text length × padding × image grid → the mask of each attention layer."""
    return Explorer(
        "Attention in model families: each layer's mask, and where Q, K and V come from",
        [
            Control("family", "family", FAMILIES, default="CLIP"),
            Control("text_len", "text tokens", TEXT_LENGTHS, default=4),
            Control("padding", "padding tokens", PADDINGS, default=1),
            Control("grid", "image patches per side", GRIDS, default=2),
        ],
        family_frame,
        FamilyView(),
        caption=(
            "One panel per attention layer: rows are queries, columns keys (and values). "
            "Image sequences start with [CLS]; Flamingo's resampler turns each image into 2 "
            "visual tokens (64 in the paper); LLaVA puts the patches before the text. "
            "Families without an image ignore the grid, ViT ignores the text. CLIP's last "
            "panel is empty: no layer lets text read the image."
        ),
    )
