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
from attention_qa.panel.plots import KeptText

SIZE = len(EXAMPLE)
ALLOWED, BLOCKED, EMPTY = (68, 119, 170, 255), (221, 221, 221, 255), (255, 255, 255, 255)
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


def _all_inputs() -> list[list[str]]:
    """What the model reads under each objective, padded to SIZE words."""
    inputs = [objective_layout(o)["inputs"] for o in OBJECTIVES]
    return [words + [""] * (SIZE - len(words)) for words in inputs]


class ObjectiveView(View):
    figsize = (5.2, 5.2)

    def setup(self, fig):
        self.ax = fig.subplots()
        # The mask as one square per cell rather than an image: drawn without antialiasing,
        # the squares fill the same pixels as the image would, without its resampling
        # (about a twentieth of the time).
        edges = np.arange(SIZE + 1) - 0.5
        self.cells = self.ax.pcolormesh(edges, edges, np.zeros((SIZE, SIZE)), antialiased=False,
                                        animated=True)
        self.cells.set_array(None)  # coloured by set_facecolor, not by a colour map
        self.ax.set(xlim=(edges[0], edges[-1]), ylim=(edges[-1], edges[0]), aspect="equal")
        self.ax.set(title="blue: may attend; red word: a loss there", ylabel="query (reads)",
                    xlabel="key position (the same words, in order)")
        # The words change with the objective: drawn as animated texts over transparent tick
        # labels (which hold the longest word of each row, so that the layout makes room),
        # so that a new objective redraws the words alone, not the whole figure. The keys are
        # the same words in the same order: numbered, each text costs a millisecond a frame.
        # A word that comes back to its row in its colour is pasted, not drawn (KeptText).
        longest = [max(words, key=len) for words in zip(*_all_inputs(), strict=True)]
        self.ax.set_xticks(range(SIZE))
        self.ax.set_yticks(range(SIZE), labels=longest, color="none")
        self.words = [
            KeptText(0, i, w, ha="right", va="center", animated=True, clip_on=False,
                     transform=label.get_transform())
            for i, (w, label) in enumerate(zip(EXAMPLE, self.ax.get_yticklabels(), strict=True))
        ]
        for word in self.words:
            self.ax.add_artist(word)

    def update(self, data):
        n = len(data["inputs"])
        rgba = np.full((SIZE, SIZE, 4), EMPTY, dtype=np.uint8)  # (query, key, RGBA)
        rgba[:n, :n] = np.where(data["mask"].numpy()[..., None], ALLOWED, BLOCKED)
        self.cells.set_facecolor(rgba.reshape(-1, 4) / 255)  # one square per cell, row by row
        loss = data["loss"]
        for i, text in enumerate(self.words):
            text.set_text(data["inputs"][i] if i < n else "")
            text.set_color(LOSS_TEXT if loss is not None and i < n and loss[i] else "#000000")


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
