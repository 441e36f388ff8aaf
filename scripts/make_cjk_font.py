"""Cut Noto Sans CJK SC down to the Chinese characters the book uses, as a small woff2.

The site draws its Chinese with this font (``_static/cjk.css``), so every reader sees the
same Simplified Chinese glyphs, offline, whatever fonts their machine has. Run it after
adding Chinese to a chapter (``tests/test_cjk_font.py`` fails until you do):

    python scripts/make_cjk_font.py

It reads Debian's fonts-noto-cjk (``/usr/share/fonts/opentype/noto/NotoSansCJK-*.ttc``)
and writes ``_static/fonts/noto-sans-sc-book-{400,700}.woff2``: the regular weight with
every character, the bold weight with those that stand in bold text or headings.
The fonts are under the SIL Open Font License 1.1 (``_static/fonts/OFL.txt``).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FONTS = ROOT / "_static" / "fonts"
SOURCE = Path("/usr/share/fonts/opentype/noto")
SOURCE_FILES = {400: "NotoSansCJK-Regular.ttc", 700: "NotoSansCJK-Bold.ttc"}
FAMILY = "Noto Sans CJK SC"

# What the site marks as Chinese (_ext/book_cjk.py): Han ideographs, CJK symbols and
# punctuation, full-width forms.
sys.path.insert(0, str(ROOT / "_ext"))
from book_cjk import CJK  # noqa: E402

CJK_CHARACTER = re.compile(f"[{CJK}]")
# Where the book's text comes from: chapters (prose, code and saved outputs), pages, the
# table of contents and the site's settings.
SOURCES = ["book/*.ipynb", "book/*.md", "_toc.yml", "_config.yml"]
# Markdown that makes text bold: headings, **strong**, __strong__ and a table's header row.
BOLD = re.compile(
    r"^#{1,6} .*$|\*\*[^*\n]+\*\*|__[^_\n]+__|^\|.*\|[ \t]*$(?=\n\|[ \t:|-]*-[ \t:|-]*$)",
    re.MULTILINE,
)


def font_path(weight: int) -> Path:
    return FONTS / f"noto-sans-sc-book-{weight}.woff2"


def _texts() -> list[str]:
    texts = []
    for pattern in SOURCES:
        for path in sorted(ROOT.glob(pattern)):
            text = path.read_text(encoding="utf-8")
            if path.suffix == ".ipynb":  # the JSON escapes nothing, but read it as cells
                text = "\n".join(_notebook_strings(json.loads(text)))
            texts.append(text)
    return texts


def _notebook_strings(value) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        if all(isinstance(v, str) for v in value):
            return ["".join(value)]
        return [s for v in value for s in _notebook_strings(v)]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _notebook_strings(v)]
    return []


def book_characters() -> set[str]:
    """Every Chinese character (and CJK punctuation mark) anywhere in the book."""
    return {ch for text in _texts() for ch in CJK_CHARACTER.findall(text)}


def bold_characters() -> set[str]:
    """The Chinese characters that stand in headings or bold text."""
    return {ch for text in _texts() for m in BOLD.findall(text) for ch in CJK_CHARACTER.findall(m)}


def font_characters(path: Path) -> set[str]:
    from fontTools.ttLib import TTFont

    return {chr(code) for code in TTFont(path).getBestCmap()}


def subset(weight: int, characters: set[str], out: Path) -> None:
    from fontTools import subset as ft_subset
    from fontTools.ttLib import TTCollection

    collection = TTCollection(SOURCE / SOURCE_FILES[weight])
    font = next(f for f in collection.fonts if f["name"].getDebugName(1) == FAMILY)
    options = ft_subset.Options()
    options.flavor = "woff2"
    options.hinting = False
    options.desubroutinize = True
    options.name_IDs = ["*"]  # keep the copyright and licence records
    options.layout_features = ["*"]
    subsetter = ft_subset.Subsetter(options)
    subsetter.populate(unicodes=sorted(ord(ch) for ch in characters))
    subsetter.subset(font)
    out.parent.mkdir(parents=True, exist_ok=True)
    font.flavor = "woff2"
    font.recalcTimestamp = False  # the same input makes the same file
    font.save(out)


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.parse_args(argv)
    everything, bold = book_characters(), bold_characters()
    for weight, characters in ((400, everything), (700, bold)):
        out = font_path(weight)
        subset(weight, characters, out)
        print(f"{out.relative_to(ROOT)}: {len(characters)} characters, {out.stat().st_size} bytes")


if __name__ == "__main__":
    main(sys.argv[1:])
