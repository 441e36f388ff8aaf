"""q41's explorer: a sentence pair → BERT's three input rows and its attention mask; a BART
noising function → the corrupted input its encoder reads and the target its decoder writes.

BERT's input follows Devlin et al. (2019), §3 and Figure 2 (whose pair "my dog is cute" /
"he likes play ##ing" is sentence A and the next sentence here; the NotNext sentence is the
one of §A.1's example): ``objectives.bert_inputs`` makes the token and segment rows, the
position row is 0 … n − 1, and the batch is padded to 13 tokens, which the attention mask
(1 = a real token) hides. BART's noising is ``objectives.bart_noise`` (Lewis et al., 2020,
§2.2, Figure 2) at its defaults (30 % of the tokens, Poisson(3) spans) on a three-sentence
document; the corrupted tokens are coloured by the sentence they come from.
"""

import numpy as np
import torch

from attention_qa.objectives import BART_NOISES, bart_noise, bert_inputs
from attention_qa.panel import Control, Explorer, Frame, View
from attention_qa.panel.plots import KeptText, boxes, cell_patches

# BERT: a tiny WordPiece vocabulary, enough for the three sentences
BERT_VOCAB = ["[PAD]", "[CLS]", "[SEP]", "my", "dog", "is", "cute", "he", "likes", "play",
              "##ing", "penguin", "##s", "are", "flight", "##less", "birds"]
BERT_ID = {w: i for i, w in enumerate(BERT_VOCAB)}
SENTENCE_A = ["my", "dog", "is", "cute"]
SENTENCES_B = {"none": None, "next": ["he", "likes", "play", "##ing"],
               "random": ["penguin", "##s", "are", "flight", "##less", "birds"]}
NSP_LABEL = {"none": "no NSP label (one sentence)", "next": "IsNext", "random": "NotNext"}
BERT_WIDTH = 13  # the padded length: the longest pair
FIRST_CHANGING = len(SENTENCE_A) + 2  # [CLS] A [SEP] is the same in every frame

# BART: a three-sentence document; "." ends a sentence
DOCUMENT = "the cat sat near the mat . it was warm . we left early .".split()
BART_VOCAB = ["<mask>", "."] + [w for w in dict.fromkeys(DOCUMENT) if w != "."]
BART_ID = {w: i for i, w in enumerate(BART_VOCAB)}
MASK_ID, END_ID = BART_ID["<mask>"], BART_ID["."]
BART_WIDTH = 16  # the longest corrupted input of its draws is 15 tokens
SEEDS = (0, 1)  # two draws: 30 frames of about 18 kB keep the page light

SEGMENT_COLOURS = {0: (0.600, 0.733, 0.933, 1.0), 1: (0.933, 0.800, 0.400, 1.0),
                   "pad": (0.867, 0.867, 0.867, 1.0)}
SENTENCE_COLOURS = [(0.600, 0.733, 0.933, 1.0), (0.933, 0.800, 0.400, 1.0),
                    (0.600, 0.867, 0.667, 1.0)]
MASK_COLOUR, END_COLOUR, EMPTY = (0.933, 0.533, 0.467, 1.0), (1.0, 1.0, 1.0, 1.0), \
    (1.0, 1.0, 1.0, 0.0)
BERT_COLUMNS = ("token", "segment", "position", "mask")
BART_COLUMNS = ("target", "input")


def _sentence_of_words() -> dict:
    """Which sentence each word of the document belongs to (the words differ but for '.')."""
    sentence, where = 0, {}
    for w in DOCUMENT:
        if w == ".":
            sentence += 1
        else:
            where.setdefault(w, sentence)
    return where


SENTENCE_OF = _sentence_of_words()


def bert_bart_frame(sentence_b: str, noise: str, seed: int) -> Frame:
    b = SENTENCES_B[sentence_b]
    ids, types = bert_inputs([BERT_ID[w] for w in SENTENCE_A],
                             None if b is None else [BERT_ID[w] for w in b],
                             cls_id=BERT_ID["[CLS]"], sep_id=BERT_ID["[SEP]"])
    n = len(ids)
    tokens = [BERT_VOCAB[i] for i in ids.tolist()] + ["[PAD]"] * (BERT_WIDTH - n)
    segments = types.tolist() + [0] * (BERT_WIDTH - n)
    mask = [1] * n + [0] * (BERT_WIDTH - n)
    document = [BART_ID[w] for w in DOCUMENT]
    corrupted = bart_noise(document, noise, mask_id=MASK_ID, sentence_end_id=END_ID,
                           generator=torch.Generator().manual_seed(seed)).tolist()
    corrupted_words = [BART_VOCAB[i] for i in corrupted]
    data = {"tokens": tokens, "segments": segments, "mask": mask, "n": n,
            "corrupted": corrupted_words}
    figures = {
        "BERT reads": " ".join(tokens[:n]),
        "segment ids": " ".join(str(s) for s in types.tolist()),
        "padding": f"{BERT_WIDTH - n} of {BERT_WIDTH} positions",
        "next-sentence label": NSP_LABEL[sentence_b],
        "BART's encoder reads": " ".join(corrupted_words),
        "BART's decoder writes": " ".join(DOCUMENT),
        "tokens read / in the document": f"{len(corrupted)} / {len(DOCUMENT)}",
    }
    return Frame(data=data, figures=figures)


def _cells(rgba: np.ndarray, k: int = 8) -> np.ndarray:
    """Each cell of an (rows, cols, 4) image of colours in [0, 1] as k × k pixels with a white
    line between cells (a grid drawn into the image itself, so the animated image keeps it),
    as bytes: an image of bytes is drawn about twice as fast as one of floats."""
    big = rgba.repeat(k, axis=0).repeat(k, axis=1)
    big[::k] = (1.0, 1.0, 1.0, 1.0)
    big[:, ::k] = (1.0, 1.0, 1.0, 1.0)
    return np.round(big * 255).astype(np.uint8)


def _show(ax, rgba, **kwargs):
    rows, cols = rgba.shape[:2]
    return ax.imshow(_cells(rgba), aspect="auto", interpolation="nearest",
                     extent=(-0.5, cols - 0.5, rows - 0.5, -0.5), **kwargs)


def _column_cells(ax, column: int, rows: int, k: int = 8):
    """One rectangle per cell of ``column``, filling what ``_cells`` colours (all but the
    white line along each cell's top and left), for colours that move (``cell_patches``)."""
    line, top = 1 / k, np.arange(rows) - 0.5
    return cell_patches(ax, boxes(column - 0.5 + line, column + 0.5, top + line, top + 1))


def _bart_colour(word: str):
    if word == "<mask>":
        return MASK_COLOUR
    if word == ".":
        return END_COLOUR
    return SENTENCE_COLOURS[SENTENCE_OF[word]]


class BertBartView(View):
    """Two tables of coloured cells, one row per position: BERT's four input rows side by side
    (left) and BART's target next to its corrupted input (right)."""

    figsize = (6.4, 6.6)

    def setup(self, fig):
        self.bert_ax, self.bart_ax = fig.subplots(1, 2, width_ratios=(4, 2.2))
        # The cells that never change (sentence A's rows, the target column) are coloured
        # and written once, in the still part; the other images are transparent there.
        first = FIRST_CHANGING
        still_rgba = np.zeros((BERT_WIDTH, 4, 4))
        still_rgba[:first] = SEGMENT_COLOURS[0]
        _show(self.bert_ax, still_rgba)
        # BERT's rows depend on sentence B alone: they are part of the still part, whose
        # state ``update`` names, so the panel draws each of the three once and keeps its
        # picture. Only BART's input column, which every control moves, is animated (each
        # text costs half a millisecond or more a frame; its cells are a collection of
        # rectangles, which is drawn in a tenth of the time an image takes).
        self.bert_image = _show(self.bert_ax, np.zeros((BERT_WIDTH, 4, 4)))
        self.bert = None  # the state of BERT's rows shown
        still = [["[CLS]", *SENTENCE_A, "[SEP]"][i] if i < first else None
                 for i in range(BERT_WIDTH)]
        self.bert_text = {}
        for i in range(BERT_WIDTH):
            for j in (0, 1, 2, 3):
                if still[i] is not None:
                    self.bert_ax.text(j, i, (still[i], "0", str(i), "1")[j], ha="center",
                                      va="center")
                else:
                    self.bert_text[i, j] = self.bert_ax.text(j, i, " ", ha="center",
                                                             va="center")
        still_rgba = np.zeros((BART_WIDTH, 2, 4))
        for i, word in enumerate(DOCUMENT):
            still_rgba[i, 0] = _bart_colour(word)
        _show(self.bart_ax, still_rgba)
        self.bart_cells = _column_cells(self.bart_ax, 1, BART_WIDTH)
        for i, word in enumerate(DOCUMENT):  # the target is always the document
            self.bart_ax.text(0, i, word, ha="center", va="center")
        # a word that comes back to its row is pasted, not drawn again (KeptText)
        self.bart_text = [KeptText(1, i, " ", ha="center", va="center", animated=True,
                                   clip_on=False) for i in range(BART_WIDTH)]
        for text in self.bart_text:
            self.bart_ax.add_artist(text)
        for ax, title, columns in ((self.bert_ax, "BERT's input", BERT_COLUMNS),
                                   (self.bart_ax, "BART", BART_COLUMNS)):
            ax.set_title(title)
            ax.set_xticks(range(len(columns)), labels=columns)
            ax.xaxis.tick_top()
            ax.set_yticks([])
            ax.tick_params(length=0)
            for side in ("top", "right", "bottom", "left"):
                ax.spines[side].set_visible(False)

    def update(self, data):
        # the still part's state: BERT's rows, all three of which the key names
        bert = tuple(data["tokens"]), tuple(data["segments"]), tuple(data["mask"])
        if bert != self.bert:  # BERT's texts and colours change with sentence B only
            self.bert = bert
            self._show_bert(data)
        words = data["corrupted"]
        colours = []
        for i in range(BART_WIDTH):
            word = words[i] if i < len(words) else None
            colours.append(EMPTY if word is None else _bart_colour(word))
            self.bart_text[i].set_text(" " if word is None else word)
            self.bart_text[i].set_visible(word is not None)  # a hidden text costs nothing
        self.bart_cells.set_facecolor(colours)
        return bert

    def _show_bert(self, data):
        rgba = np.zeros((BERT_WIDTH, 4, 4))
        for i in range(FIRST_CHANGING, BERT_WIDTH):
            real = data["mask"][i]
            rgba[i] = SEGMENT_COLOURS[data["segments"][i]] if real else SEGMENT_COLOURS["pad"]
            values = (data["tokens"][i], str(data["segments"][i]), str(i), str(real))
            for j, value in enumerate(values):
                self.bert_text[i, j].set_text(value)
        self.bert_image.set_data(_cells(rgba))


def bert_bart_explorer() -> Explorer:
    """sentence B × BART noising function × seed → BERT's input rows, BART's input and target."""
    return Explorer(
        "BERT's input and BART's noising",
        [
            Control("sentence_b", "sentence B", tuple(SENTENCES_B), default="next",
                    labels=("none (one sentence)", "the next sentence (IsNext)",
                            "a random sentence (NotNext)")),
            Control("noise", "BART noising", BART_NOISES, default="text_infilling",
                    labels=("token masking", "token deletion", "text infilling",
                            "sentence permutation", "document rotation")),
            Control("seed", "random draw", SEEDS, default=0),
        ],
        bert_bart_frame,
        BertBartView(),
        caption=(
            "Left: BERT adds a token, a segment and a position embedding at every position "
            "(blue: sentence A, segment 0; yellow: sentence B, segment 1); the attention "
            "mask, 0 on the grey padding, hides the padding. Right: BART's encoder reads the "
            "corrupted input and its decoder writes the target, the original document; "
            "colour: the sentence a token comes from, red: <mask>. Masking keeps the length, "
            "deletion and infilling change it, permutation and rotation only move tokens."
        ),
    )
