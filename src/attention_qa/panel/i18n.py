"""The explorers' words in another language: their titles, controls, figures, messages and the
text drawn in their pictures, looked up in a table per language.

A string is looked up with its numbers taken out: "8 heads do not divide d_model = 100" is
the entry "{0} heads do not divide d_model = {1}", so one translation serves every frame, and
the numbers go back in their places (a translation may reorder the placeholders). A string
with no letters (a number, a formula of symbols) needs no entry. The table for Chinese is
``locales/zh_CN/LC_MESSAGES/explorers.po``, made by ``scripts/translations.py explorers``.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from dataclasses import dataclass, field

from matplotlib.category import StrCategoryFormatter
from matplotlib.figure import Figure
from matplotlib.text import Text
from matplotlib.ticker import FixedFormatter, FuncFormatter

# A number standing on its own: not part of a name such as float16, q04 or W_2.
NUMBER = re.compile(r"(?<![A-Za-z_\d.])\d+(?:[.,]\d+)*(?:e[+-]?\d+)?(?![A-Za-z_\d])")
PLACEHOLDER = re.compile(r"\{(\d+)\}")
LETTERS = re.compile(r"[A-Za-z]{2,}")


def template(text: str) -> tuple[str, list[str]]:
    """``text`` with its numbers replaced by {0}, {1}, … and the numbers taken out."""
    numbers: list[str] = []

    def take(match: re.Match) -> str:
        numbers.append(match.group(0))
        return "{" + str(len(numbers) - 1) + "}"

    return NUMBER.sub(take, text.replace("{", "{{").replace("}", "}}")), numbers


MATHTEXT = re.compile(r"\$[^$]*\$")


def needs_translation(text: str) -> bool:
    """Whether a string has words in it (two letters in a row) outside $maths$, not just
    numbers, symbols and formulas."""
    return bool(LETTERS.search(MATHTEXT.sub("", text)))


# How the alt text joins its parts: "Title at a = 1, b = 2. figure 0.5; other 3."
WORDS = {
    "en": {"open": " at ", "close": "", "list": ", ", "colon": ": ", "stop": ". ",
           "facts": "; ", "end": "."},
    "zh_CN": {"open": "（", "close": "）", "list": "，", "colon": "：", "stop": "。",
              "facts": "；", "end": "。"},
}
# Fonts the pictures draw with: DejaVu Sans (matplotlib's own) first, then Chinese glyphs.
FONTS = {"zh_CN": ["DejaVu Sans", "Noto Sans CJK SC"]}


@dataclass
class Translator:
    """Looks strings up in ``table`` (entry → translation); ``missing`` collects the entries
    that had words but no translation, so the build can say which."""

    language: str
    table: dict[str, str]
    missing: set[str] = field(default_factory=set)

    @functools.cached_property
    def digest(self) -> str:
        """What the table holds, in eight hex digits (the build's cache key)."""
        text = json.dumps(sorted(self.table.items()), ensure_ascii=False)
        return hashlib.sha256(text.encode()).hexdigest()[:8]

    @property
    def words(self) -> dict[str, str]:
        return WORDS[self.language]

    @property
    def rc(self) -> dict:
        return {"font.family": FONTS[self.language]} if self.language in FONTS else {}

    def __post_init__(self):
        self._translations = set(self.table.values())

    def __call__(self, text: str) -> str:
        if self.language == "en" or not isinstance(text, str) or not needs_translation(text):
            return text
        key, numbers = template(text)
        if key not in self.table:
            if key not in self._translations:  # not a string translated already
                self.missing.add(key)
            return text
        return PLACEHOLDER.sub(lambda m: numbers[int(m.group(1))], self.table[key]).replace(
            "{{", "{"
        ).replace("}}", "}")


def figure_texts(fig: Figure) -> list[str]:
    """Every string the figure draws: its texts, legends and the words of its tick labels."""
    found = [t.get_text() for t in fig.findobj(Text)]
    for formatter in _word_formatters(fig):
        found.extend(_formatter_words(formatter))
    return [text for text in found if text]


def translate_figure(fig: Figure, translate) -> None:
    """Put every string the figure draws through ``translate``, in place."""
    for text in fig.findobj(Text):
        text.set_text(translate(text.get_text()))
    for formatter in _word_formatters(fig):
        if isinstance(formatter, FixedFormatter):
            formatter.seq = [translate(s) for s in formatter.seq]
        elif isinstance(formatter, StrCategoryFormatter):  # the categories are the labels
            formatter._units = {translate(k): v for k, v in formatter._units.items()}
        else:  # labels given to set_ticklabels: a dict from tick to label
            labels = _labels_by_tick(formatter)
            labels.update({tick: translate(label) for tick, label in labels.items()})


def _labels_by_tick(formatter) -> dict | None:
    """The labels ``Axis.set_ticklabels`` keeps in a FuncFormatter (matplotlib 3.11 wraps
    ``Axis._format_with_dict`` around a dict from tick position to label)."""
    func = getattr(formatter, "func", None)
    if isinstance(formatter, FuncFormatter) and isinstance(func, functools.partial):
        if func.func.__name__ == "_format_with_dict" and isinstance(func.args[0], dict):
            return func.args[0]
    return None


def _word_formatters(fig: Figure) -> list:
    """The tick formatters whose labels are words (fixed labels, categories)."""
    found = []
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            for formatter in (axis.get_major_formatter(), axis.get_minor_formatter()):
                if isinstance(formatter, (FixedFormatter, StrCategoryFormatter)):
                    found.append(formatter)
                elif _labels_by_tick(formatter) is not None:
                    found.append(formatter)
    return found


def _formatter_words(formatter) -> list[str]:
    if isinstance(formatter, FixedFormatter):
        return [str(s) for s in formatter.seq]
    if isinstance(formatter, StrCategoryFormatter):
        return [str(k) for k in formatter._units]
    return [str(label) for label in _labels_by_tick(formatter).values()]


ENGLISH = Translator("en", {})  # the explorers' own words
