"""q22's second explorer: the heads of a two-layer attention-only model that learned to copy.

The model is ``attention_qa.induction.trained_model()``: two layers of four heads, no MLP,
trained on random blocks said twice. The reader picks a head to look at and a head to
switch off; the panel shows the head's map on one repeated sequence, its previous-token and
induction scores over the evaluation batch, and the accuracy on the second copy with the
chosen head off. A previous-token head in layer 0 and induction heads in layer 1 that read
it through their keys form the circuit Elhage et al. (2021, "Two-Layer Attention-Only
Transformers": "Three Kinds of Composition", "Induction Heads") call K-composition.
"""

from functools import lru_cache

import torch

from attention_qa.induction import (
    EVAL_K,
    EVAL_T,
    evaluation_batch,
    head_scores,
    second_copy_accuracy,
    trained_model,
)
from attention_qa.panel import Control, Explorer, Frame, View
from attention_qa.panel.palette import BLUE, GREEN, INK, YELLOW

HEADS = tuple((layer, head) for layer in range(2) for head in range(4))
HEAD_LABELS = tuple(f"layer {layer}, head {head}" for layer, head in HEADS)
OFF = ("none",) + HEADS
OFF_LABELS = ("none",) + HEAD_LABELS
EXAMPLE = 0  # which sequence of the evaluation batch the map shows


@lru_cache(maxsize=None)
def with_head_off(off) -> dict:
    """Scores (layers, h), maps of the example (layers, h, T, T) and accuracy on the second
    copy, over the evaluation batch, with head ``off`` switched off ("none": all on)."""
    model, _ = trained_model()
    x = evaluation_batch()  # (B, T)
    ablate = () if off == "none" else (off,)
    with torch.no_grad():
        _, attn = model(x[EXAMPLE : EXAMPLE + 1], ablate=ablate, return_attn=True)
    scores = head_scores(model, x, EVAL_K, ablate=ablate)
    return {
        "maps": attn[:, 0],  # (layers, h, T, T)
        "previous-token": scores["previous-token"],
        "induction": scores["induction"],
        "accuracy": second_copy_accuracy(model, x, EVAL_K, ablate=ablate),
    }


def induction_frame(head: tuple, off) -> Frame:
    layer, index = head
    seen = with_head_off(off)
    full = with_head_off("none")["accuracy"]
    values = {
        "previous-token": seen["previous-token"][layer, index].item(),
        "induction": seen["induction"][layer, index].item(),
        "accuracy": seen["accuracy"],
    }
    figures = {
        "previous-token score": f"{values['previous-token']:.2f}",
        "induction score": f"{values['induction']:.2f}",
        "accuracy on the second copy": f"{seen['accuracy']:.1%}",
        "with every head on": f"{full:.1%}",
    }
    off_text = "all heads on" if off == "none" else f"L{off[0]} H{off[1]} off"
    data = {"map": seen["maps"][layer, index], "values": values, "off": off_text}
    return Frame(data=data, figures=figures)


class InductionView(View):
    figsize = (6.4, 3.0)

    def setup(self, fig):
        ax_map, ax_bar = fig.subplots(1, 2, width_ratios=(1, 1.2))
        self.img = ax_map.imshow(
            torch.zeros(EVAL_T, EVAL_T).numpy(), cmap="viridis", vmin=0, vmax=1, animated=True
        )
        starts = (0, EVAL_T - 2 * EVAL_K, EVAL_T - EVAL_K)  # the prefix, then the two copies
        ax_map.set(title="weights, one sequence", xlabel="key j", ylabel="query i",
                   xticks=starts, yticks=starts)
        colours = (BLUE, GREEN, YELLOW)
        self.bars = ax_bar.bar(range(3), [0.0] * 3, color=colours, animated=True)
        full = with_head_off("none")["accuracy"]
        ax_bar.axhline(full, color=INK, linestyle="--", linewidth=1)
        ax_bar.set(xticks=range(3), xticklabels=["prev", "induction", "accuracy"], ylim=(0, 1),
                   xlabel="dashed: accuracy, all heads on")
        self.title = ax_bar.set_title("all heads on", animated=True)  # text keeps its line

    def update(self, data):
        self.img.set_data(data["map"].numpy())
        for bar, name in zip(self.bars, ("previous-token", "induction", "accuracy"), strict=True):
            bar.set_height(data["values"][name])
        self.title.set_text(data["off"])


def induction_explorer() -> Explorer:
    """head shown × head switched off → its map, its scores, the accuracy on the second copy."""
    return Explorer(
        "Induction heads in a two-layer attention-only model",
        [
            Control("head", "head shown", HEADS, default=(1, 2), labels=HEAD_LABELS),
            Control("off", "head switched off", OFF, labels=OFF_LABELS),
        ],
        induction_frame,
        InductionView(),
        caption=(
            "Two layers of four heads, no MLP, trained on random blocks said twice. The map is "
            f"one held-out sequence: {EVAL_T - 2 * EVAL_K} random tokens, then a block of "
            f"{EVAL_K} tokens, then the same block again (ticks where each part starts). A "
            "previous-token head lights the line just below the diagonal; an induction head, "
            f"in the last block, the line {EVAL_K - 1} places left of the diagonal: the token "
            "after the earlier "
            "copy of the current one. Scores and accuracy (next-token predictions in the second "
            f"copy) are over {evaluation_batch().shape[0]} held-out sequences."
        ),
    )
