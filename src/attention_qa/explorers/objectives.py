"""q32's explorer: a pre-training objective → what the model reads, how it may attend, and
where it is trained.

The objectives are ``objectives.objective_layout``'s: causal LM (GPT), prefix LM (T5's
"prefix LM", UniLM), masked LM (BERT) and span corruption (T5), on T5's Figure 2 sentence.
The panel is the attention mask over what the model reads (blue: may attend); the words
in red are the positions that carry a loss.
"""

import numpy as np

from attention_qa.objectives import EXAMPLE, OBJECTIVES, objective_layout
from attention_qa.panel import Control, Explorer, Frame, View

SIZE = len(EXAMPLE)
ALLOWED, BLOCKED = (0.267, 0.467, 0.667, 1.0), (0.867, 0.867, 0.867, 1.0)
LOSS_TEXT = "#cc3311"  # Tol vibrant red: a word whose position carries a loss


def objective_frame(objective: str) -> Frame:
    layout = objective_layout(objective)
    n = len(layout["inputs"])
    loss = layout["loss"]
    figures = {
        "the model reads": " ".join(layout["inputs"]),
        "it predicts": " ".join(layout["targets"]),
        "positions with a loss": (f"{int(loss.sum())} of {n}" if loss is not None else
                                  f"none in the encoder; the decoder predicts "
                                  f"{len(layout['targets'])} tokens"),
        "queries that see a later word": str(int(layout["mask"].triu(1).any(-1).sum())),
    }
    return Frame(data=layout, figures=figures)


class ObjectiveView(View):
    figsize = (5.2, 5.2)

    def setup(self, fig):
        self.ax = fig.subplots()
        self.image = self.ax.imshow(np.ones((SIZE, SIZE, 4)), animated=True)
        self.ax.set(title="blue: may attend; red word: a loss there", ylabel="query (reads)",
                    xlabel="key")
        self._ticks(EXAMPLE, None)

    def _ticks(self, words, loss):
        self.ax.set_xticks(range(len(words)), labels=words, rotation=60, ha="right",
                           rotation_mode="anchor")
        self.ax.set_yticks(range(len(words)), labels=words)
        for i, label in enumerate(self.ax.get_yticklabels()):
            label.set_color(LOSS_TEXT if loss is not None and loss[i] else "#000000")

    def update(self, data):
        n = len(data["inputs"])
        rgba = np.ones((SIZE, SIZE, 4))
        rgba[:n, :n] = np.where(data["mask"].numpy()[..., None], ALLOWED, BLOCKED)
        self.image.set_data(rgba)
        self._ticks(data["inputs"], data["loss"])
        return True  # the words on the axes changed


def objective_explorer() -> Explorer:
    """objective → the mask, what the model reads, what it predicts and where."""
    return Explorer(
        "Pre-training objectives as attention masks",
        [Control("objective", "objective", OBJECTIVES, default="causal LM")],
        objective_frame,
        ObjectiveView(),
        caption=(
            "Blue: the key may be attended; grey: blocked. Causal LM: each word sees those "
            "before it. Prefix LM: the first five see each other. Masked LM and T5's encoder: "
            "every word sees every word, so only hidden or dropped words can be predicted."
        ),
    )
