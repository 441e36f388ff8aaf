"""q22's explorer: one head's attention map on one input, and the pattern scores of the head.

The model is ``attention_qa.heads.train_sum_model()``: a 2-layer, 2-head decoder trained to
output (x_{t−1} + x_t) mod 12 at every position, a task that needs the previous token. The
scores (previous-token, self, first-token, content; Clark et al., 2019; Voita et al., 2019)
are computed over a fixed batch of inputs, so they describe the head, not the one input.
"""

import torch

from attention_qa.heads import (
    CONTENT_THRESHOLD,
    NUM_PROBE_INPUTS,
    SUM_LENGTH,
    SUM_MODELS,
    classify_head,
    first_token_score,
    pattern_scores,
    previous_token_score,
    self_score,
    sum_model_maps,
)
from attention_qa.panel import Control, Explorer, Frame, View
from attention_qa.panel.palette import BLUE, GREEN, INK, PURPLE, YELLOW

HEADS = ((0, 0), (0, 1), (1, 0), (1, 1))
HEAD_LABELS = tuple(f"layer {layer}, head {head}" for layer, head in HEADS)
EXAMPLES = (0, 1, 2, 3)
MODELS = SUM_MODELS
NUM_INPUTS = NUM_PROBE_INPUTS
SCORE_NAMES = ("previous-token", "self", "first-token", "content")
POSITION_SCORES = {
    "previous-token": previous_token_score, "self": self_score, "first-token": first_token_score,
}


def head_maps(model_name: str) -> torch.Tensor:
    """Maps (layers, NUM_INPUTS, heads, T, T) of the trained or the untrained model (kept
    here for older imports; the computation is ``attention_qa.heads.sum_model_maps``)."""
    return sum_model_maps(model_name)


def head_frame(head: tuple, example: int, model: str) -> Frame:
    layer, index = head
    maps = head_maps(model)[layer, :, index]  # (NUM_INPUTS, T, T)
    scores = pattern_scores(maps)
    kind = classify_head(scores)
    figures = {name: f"{value:.2f}" for name, value in scores.items()}
    figures["kind"] = kind
    one = {name: score(maps[example]).item() for name, score in POSITION_SCORES.items()}
    figures["this input: previous-token / self / first-token"] = " / ".join(
        f"{value:.2f}" for value in one.values()
    )
    figures["named from this input alone"] = max(one, key=one.get)
    data = {"map": maps[example], "scores": scores, "kind": kind, "one": one}
    return Frame(data=data, figures=figures)


class HeadView(View):
    figsize = (6.4, 3.0)

    def setup(self, fig):
        ax_map, ax_bar = fig.subplots(1, 2, width_ratios=(1, 1.2))
        self.img = ax_map.imshow(
            torch.zeros(SUM_LENGTH, SUM_LENGTH).numpy(),
            cmap="viridis",
            vmin=0,
            vmax=1,
            animated=True,
        )
        ax_map.set(title="weights on this input", xlabel="key j", ylabel="query i",
                   xticks=(0, 5, 10, 15), yticks=(0, 5, 10, 15))
        colours = (BLUE, GREEN, YELLOW, PURPLE)
        self.bars = ax_bar.bar(range(4), [0.0] * 4, color=colours, animated=True)
        (self.dots,) = ax_bar.plot(range(3), [0.0] * 3, "o", color=INK, markersize=7,
                                   animated=True)
        ax_bar.axhline(0.5, color=INK, linestyle="--", linewidth=1)
        ax_bar.set(
            xticks=range(4),
            xticklabels=["prev", "self", "first", "content"],
            ylim=(0, 1),
            xlabel=f"bars: {NUM_INPUTS} inputs; dots: this one",
        )
        self.kind = ax_bar.set_title("previous-token", animated=True)  # text keeps its line

    def update(self, data):
        self.img.set_data(data["map"].numpy())
        for bar, name in zip(self.bars, SCORE_NAMES, strict=True):
            bar.set_height(data["scores"][name])
        self.dots.set_ydata(list(data["one"].values()))
        self.kind.set_text(f"named: {data['kind']}")


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
            "on position 0, and how much the map changes with the input (content); the bars "
            f"are over {NUM_INPUTS} inputs, the dots the same scores on the input shown. A head is "
            "named after the first position pattern holding at least half its weight (dashed "
            f"line); failing that, 'content' if its content score is at least {CONTENT_THRESHOLD}, "
            "else 'mixed'."
        ),
    )
