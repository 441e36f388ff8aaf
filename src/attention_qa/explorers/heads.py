"""q22's explorer: one head's attention map on one input, and the pattern scores of the head.

The model is ``attention_qa.heads.train_sum_model()``: a 2-layer, 2-head decoder trained to
output (x_{t−1} + x_t) mod 12 at every position, a task that needs the previous token. The
scores (previous-token, self, first-token, content; Clark et al., 2019; Voita et al., 2019)
are computed over a fixed batch of inputs, so they describe the head, not the one input.
"""

from functools import lru_cache

import torch

from attention_qa.explorer import Control, Explorer, Frame, View
from attention_qa.heads import (
    CONTENT_THRESHOLD,
    SUM_LENGTH,
    SUM_VOCAB,
    attention_maps,
    classify_head,
    pattern_scores,
    sum_task_batch,
    train_sum_model,
)
from attention_qa.models import TinyTransformerLM

HEADS = ((0, 0), (0, 1), (1, 0), (1, 1))
HEAD_LABELS = tuple(f"layer {layer}, head {head}" for layer, head in HEADS)
EXAMPLES = (0, 1, 2, 3)
MODELS = ("trained", "untrained")
NUM_INPUTS = 64
SCORE_NAMES = ("previous-token", "self", "first-token", "content")


@lru_cache(maxsize=None)
def head_maps(model_name: str) -> torch.Tensor:
    """Maps (layers, NUM_INPUTS, heads, T, T) of the trained or the untrained model."""
    if model_name == "trained":
        model, _ = train_sum_model()
    elif model_name == "untrained":
        torch.manual_seed(0)  # the trained model's starting point
        model = TinyTransformerLM(SUM_VOCAB, 32, 2, 2, SUM_LENGTH).eval()
    else:
        raise ValueError(f"model must be one of {MODELS}, got {model_name!r}")
    tokens, _ = sum_task_batch(NUM_INPUTS, torch.Generator().manual_seed(100))
    return attention_maps(model, tokens)


def head_frame(head: tuple, example: int, model: str) -> Frame:
    layer, index = head
    maps = head_maps(model)[layer, :, index]  # (NUM_INPUTS, T, T)
    scores = pattern_scores(maps)
    kind = classify_head(scores)
    figures = {name: f"{value:.2f}" for name, value in scores.items()}
    figures["kind"] = kind
    return Frame(data={"map": maps[example], "scores": scores, "kind": kind}, figures=figures)


class HeadView(View):
    figsize = (6.4, 2.7)

    def setup(self, fig):
        ax_map, ax_bar = fig.subplots(1, 2, width_ratios=(1, 1.2))
        self.img = ax_map.imshow(
            torch.zeros(SUM_LENGTH, SUM_LENGTH).numpy(),
            cmap="viridis",
            vmin=0,
            vmax=1,
            animated=True,
        )
        ax_map.set(title="weights on this input", xlabel="key j", ylabel="query i")
        colours = ("#4477aa", "#228833", "#ccbb44", "#aa3377")
        self.bars = ax_bar.bar(range(4), [0.0] * 4, color=colours, animated=True)
        ax_bar.axhline(0.5, color="#222222", linestyle="--", linewidth=1)
        ax_bar.set(
            xticks=range(4),
            xticklabels=["prev", "self", "first", "content"],
            ylim=(0, 1),
            title=f"scores over {NUM_INPUTS} inputs",
        )
        self.kind = ax_bar.text(
            0.98, 0.95, "", transform=ax_bar.transAxes, ha="right", va="top", animated=True
        )

    def update(self, data):
        self.img.set_data(data["map"].numpy())
        for bar, name in zip(self.bars, SCORE_NAMES, strict=True):
            bar.set_height(data["scores"][name])
        self.kind.set_text(data["kind"])


def head_explorer() -> Explorer:
    """layer/head × input example × trained or untrained → the head's map and its scores."""
    return Explorer(
        "Inside the heads of a tiny trained model",
        [
            Control("head", "layer / head", HEADS, labels=HEAD_LABELS),
            Control("example", "input example", EXAMPLES),
            Control("model", "model", MODELS),
        ],
        head_frame,
        HeadView(),
        caption=(
            "A 2-layer, 2-head decoder trained to output (x_{t−1} + x_t) mod 12 at every "
            "position. Scores are mean weights on the previous token, on the token itself and "
            "on position 0, and how much the map changes with the input (content). A head is "
            "named after the first position pattern holding at least half its weight (dashed "
            f"line); failing that, 'content' if its content score is at least {CONTENT_THRESHOLD}, "
            "else 'mixed'."
        ),
    )
