"""q31's explorer: how many merges a byte-level BPE learned → the tokens of two sentences.

The tokenizer is ``book_tokenizer``: byte-level BPE (Sennrich et al., 2016; GPT-2's bytes,
Radford et al., 2019) trained on this book's own English, or on its English and Chinese.
Each strip is a sentence's UTF-8 bytes, one bar per byte, coloured token by token; the
ticks mark where characters start. The panel prints tokens per character, attention's n²
scores for each sentence, and the embedding's share of a 12-block model of width 768 with
this vocabulary.
"""

import numpy as np

from attention_qa.corpus import SENTENCES
from attention_qa.costs import model_parameter_counts
from attention_qa.panel import Control, Explorer, Frame, View
from attention_qa.panel.palette import BLUE, YELLOW
from attention_qa.panel.plots import boxes, cell_patches
from attention_qa.tokens import book_tokenizer, token_spans

MERGES = (0, 25, 50, 100, 200, 400, 800)
TRAINING = ("english", "both")
COLOURS = (BLUE, YELLOW)


def sentence_figures(name: str, n_tokens: int, n_chars: int) -> str:
    return f"{n_tokens} tokens for {n_chars} characters ({n_tokens / n_chars:.2f} per character)"


def token_frame(merges: int, training: str) -> Frame:
    tokenizer = book_tokenizer(merges, chinese=training == "both")
    spans = {name: token_spans(tokenizer, text) for name, text in SENTENCES.items()}
    counts = model_parameter_counts(tokenizer.vocab_size, 768, tied=True, num_blocks=12)
    share = counts["input embedding"] / sum(counts.values())
    english = [tokenizer.token_bytes(t).decode("utf-8", errors="replace")
               for t in tokenizer.encode(SENTENCES["English"])]
    figures = {
        "vocabulary": f"{tokenizer.vocab_size} tokens (256 bytes + {merges} merges)",
        **{name: sentence_figures(name, len(spans[name]), len(text))
           for name, text in SENTENCES.items()},
        "attention scores (n²)": ", ".join(f"{name} {len(s) ** 2:,}"
                                           for name, s in spans.items()),
        "English tokens": "".join(f"[{piece}]" for piece in english),
        "embedding's share (12 blocks, d_model 768)": f"{share:.1%}",
    }
    return Frame(data=spans, figures=figures)


class TokenStrips(View):
    """One strip per sentence: a bar per byte, coloured by the token it belongs to."""

    figsize = (6.4, 2.6)

    def setup(self, fig):
        axes = fig.subplots(len(SENTENCES), 1)
        self.bars = {}
        for ax, (name, text) in zip(axes, SENTENCES.items(), strict=True):
            n_bytes = len(text.encode("utf-8"))
            # one bar per byte, in one collection: a frame colours them all at once
            middles = np.arange(n_bytes)
            self.bars[name] = cell_patches(ax, boxes(middles - 0.5, middles + 0.5, 0, 1))
            starts, offset = [], 0
            for ch in text:
                starts.append(offset)
                offset += len(ch.encode("utf-8"))
            ax.set_xticks([s - 0.5 for s in starts], labels=[])
            ax.set(xlim=(-0.5, n_bytes - 0.5), ylim=(0, 1), yticks=[],
                   title=f"{name}: {n_bytes} bytes, {len(text)} characters (ticks)")
        axes[-1].set_xlabel("bytes of the sentence; one colour per token, alternating")

    def update(self, data):
        for name, spans in data.items():
            self.bars[name].set_facecolor([COLOURS[index % 2] for index, (start, end)
                                           in enumerate(spans) for _ in range(start, end)])


def token_explorer() -> Explorer:
    """merges × training text → the two sentences' tokens, tokens per character, n², share."""
    return Explorer(
        "Byte-level BPE: merges learned → tokens",
        [
            Control("merges", "merges learned", MERGES, default=100),
            Control("training", "trained on", TRAINING, default="english",
                    labels=("the book's English", "its English and Chinese")),
        ],
        token_frame,
        TokenStrips(),
        caption=(
            "Each bar is one byte of the sentence's UTF-8; a run of one colour is one token. "
            "With no merges every byte is a token; each merge joins a frequent pair. A "
            "Chinese character is three bytes, so a vocabulary learned from English text "
            "leaves it at three tokens."
        ),
    )
