"""The interview drill as Anki decks, one per edition: a note for every short answer and every
follow-up of the drill pages (book/drill_partN.md, which scripts/make_drill.py generates from
the chapters), one subdeck per part of the book.

Usage: python scripts/make_anki.py [--base-url URL] [--out DIR] [en] [zh]
  writes _build/html/anki/attention-qa-en.apkg and _build/html/zh/anki/attention-qa-zh.apkg
  (each edition's site holds its own deck, where its drill pages link); --out puts both in
  DIR instead. The two builds write the same decks (_ext/book_anki.py calls ``write_deck``).

* The front shows the question: for a short answer the chapter's question, for a follow-up
  the interviewer's question with the chapter's question above it as context; the back the
  answer, its maths as \\(…\\) and \\[…\\] for Anki's MathJax, its Markdown as HTML, and the
  chapter's page on the site (under ``html.baseurl`` in _config.yml, or SITE_URL; with no
  base the card names the page's file, since a relative link leads nowhere inside Anki).
* The Chinese deck is the same notes through the drill pages' translations
  (locales/zh_CN/LC_MESSAGES/book/drill*.po, read as _ext/book_languages.py reads them):
  a paragraph without a translation stops it, naming the entry, so no English prose
  ever reaches a Chinese card.
* Ids are stable: a note's guid is a hash of the language, the chapter and which answer it
  is (the short answer, or the follow-up asking a given English question), never of the
  answer's text, so importing a newer deck updates the cards (and keeps their reviews)
  instead of adding them twice, and a follow-up moved or inserted elsewhere in its chapter
  keeps its own card; a new question is a new card. The decks' and the note type's ids are
  hashes of their names' keys the same way.
* The bytes depend only on the inputs: the collection's times are the newest modification
  time of the drill pages, their translations and this script (or SOURCE_DATE_EPOCH when
  set), so a rebuild of the same files gives the same file, and a deck built after an edit
  is newer, which Anki needs to update the notes it already has.
"""

from __future__ import annotations

import argparse
import hashlib
import html
import itertools
import os
import re
import sqlite3
import sys
import tempfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BOOK = ROOT / "book"
LOCALE = ROOT / "locales" / "zh_CN" / "LC_MESSAGES" / "book"
SITE = ROOT / "_build" / "html"
LANGUAGES = ("en", "zh")
SUBFOLDER = {"en": "", "zh": "zh/"}  # each edition's place in the published site
DECKS_FOLDER = "anki"  # in each edition's site
# The published site's address, where a card's "Read the chapter" link leads. _config.yml's
# html.baseurl wins when it is set; with neither, a card names the page's file instead.
SITE_URL = ""
# The book's title, the parent deck's name (the Chinese deck's is its translation in intro.po)
TITLE = "Attention Q&A"
PARTS_INDEX = BOOK / "drill.md"
PART_LINK = re.compile(r"^- (\[([^\]]+)\]\((drill_part(\d+))\.md\).*)$", re.M)
FOLDS = ("Short answer", "What they ask next")
BOLD_QUESTION = re.compile(r"\*\*(.+?)\*\*\s*(.*)", re.S)
CHAPTER_LINK = re.compile(r"\]\((q\d\d_\w+)\.ipynb\)")


class MissingTranslation(ValueError):
    """Paragraphs of the drill with no translation (or an empty or fuzzy one)."""

    def __init__(self, entries: list[str]):
        self.entries = entries
        super().__init__("no Chinese translation for:\n" + "\n".join(entries))


def deck_file(language: str) -> str:
    return f"attention-qa-{language}.apkg"


def stable_id(*key: str) -> int:
    """A deck's or note type's id, from what it is rather than when it was made: in the range
    genanki advises, [2**30, 2**31)."""
    digest = hashlib.sha256("\x1f".join(("attention-qa", *key)).encode()).digest()
    return (1 << 30) + int.from_bytes(digest[:8], "big") % (1 << 30)


def note_guid(language: str, chapter: str, which: str) -> str:
    import genanki

    return genanki.guid_for("attention-qa", language, chapter, which)


# ---------------------------------------------------------------------------------------
# The drill pages, read block by block (a block is what Sphinx translates as one entry)


@dataclass
class Chapter:
    stem: str  # the chapter's notebook, e.g. q01_what_is_attention
    title: str  # "q01 · What is attention? …"
    chinese: str = ""  # the Chinese question, as written ("*…*")
    folds: dict[str, list[str]] = field(default_factory=dict)  # fold's summary → its blocks
    read: str = ""  # "Read the chapter: [q01 · …](q01_….ipynb)"


@dataclass
class Part:
    number: int
    caption: str  # as the drill index writes its link: "Part 1 — …"
    caption_message: str  # the index's list item, the caption's entry in drill.po
    page: Path
    chapters: list[Chapter]


def blocks(text: str) -> list[str]:
    """The page's blocks: paragraphs, headings and raw HTML, split at blank lines."""
    return [b.strip("\n") for b in re.split(r"\n\s*\n", text) if b.strip()]


def read_part(page: Path) -> list[Chapter]:
    chapters: list[Chapter] = []
    fold = None
    for block in blocks(page.read_text()):
        if block.startswith("## "):
            chapters.append(Chapter(stem="", title=block[3:].strip()))
        elif not chapters:
            continue  # the page's title and the Anki sentence
        elif summary := re.fullmatch(r"<details>\n<summary>(.*)</summary>", block):
            fold = summary.group(1)
            chapters[-1].folds[fold] = []
        elif block == "</details>":
            fold = None
        elif fold is not None:
            chapters[-1].folds[fold].append(block)
        elif not chapters[-1].chinese and block.startswith("*") and not chapters[-1].folds:
            chapters[-1].chinese = block
        elif link := CHAPTER_LINK.search(block):
            chapters[-1].read, chapters[-1].stem = block, link.group(1)
    for chapter in chapters:
        if not chapter.stem or FOLDS[0] not in chapter.folds:
            raise ValueError(f"{page.name}: '{chapter.title}' lacks a short answer or a link")
    return chapters


def read_drill(book: Path = BOOK) -> list[Part]:
    index = (book / PARTS_INDEX.name).read_text()
    return [
        Part(int(number), caption, message, book / f"{stem}.md",
             read_part(book / f"{stem}.md"))
        for message, caption, stem, number in PART_LINK.findall(index)
    ]


# ---------------------------------------------------------------------------------------
# Translations


def po_table(path: Path) -> dict[str, str]:
    """A .po file's translations: entry → translation, leaving out empty and fuzzy ones (as
    _ext/book_languages.py's po_table, which the Chinese build uses)."""
    from babel.messages.pofile import read_po

    with path.open("rb") as f:
        return {m.id: m.string for m in read_po(f) if m.id and m.string and not m.fuzzy}


class Translator:
    """English Markdown → the edition's: itself in English, the .po entry in Chinese. A
    block's entry is its source with its lines joined by spaces (a raw HTML block's as it is),
    as Sphinx extracts it; what is missing is collected, and ``check`` raises for all of it."""

    def __init__(self, language: str, locale: Path = LOCALE):
        self.language, self.locale = language, locale
        self.tables: dict[str, dict[str, str]] = {}
        self.missing: list[str] = []

    def __call__(self, page: str, block: str, raw: bool = False) -> str:
        message = block if raw else " ".join(block.split("\n")).strip()
        if self.language == "en":
            return message
        path = self.locale / f"{page}.po"
        if page not in self.tables:
            self.tables[page] = po_table(path) if path.exists() else {}
        if message not in self.tables[page]:
            entry = message if len(message) <= 90 else message[:87] + "..."
            where = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
            self.missing.append(f"{where}: {entry!r}")
            return ""
        return self.tables[page][message]

    def check(self) -> None:
        if self.missing:
            raise MissingTranslation(self.missing)


# ---------------------------------------------------------------------------------------
# Markdown → the HTML of an Anki field


def _markdown(page_url):
    """A Markdown renderer as the book's MyST reads maths ($…$, $$…$$), writing it for
    Anki's MathJax, and pointing a link to a chapter's notebook at the chapter's page (or
    leaving its text alone where the site has no address)."""
    from markdown_it import MarkdownIt
    from markdown_it.common.utils import escapeHtml
    from mdit_py_plugins.dollarmath import dollarmath_plugin

    md = MarkdownIt("commonmark", {"html": True})
    # MyST's defaults (myst_dmath_*): labels, spaces and digits around $ allowed, no $$ inline
    md.use(dollarmath_plugin, allow_labels=True, allow_space=True, allow_digits=True,
           double_inline=False)

    def inline_math(self, tokens, idx, options, env):
        return f"\\({escapeHtml(tokens[idx].content)}\\)"

    def block_math(self, tokens, idx, options, env):
        return f"<p>\\[{escapeHtml(tokens[idx].content.strip())}\\]</p>\n"

    def link_open(self, tokens, idx, options, env):
        token = tokens[idx]
        href = token.attrGet("href") or ""
        chapter = re.fullmatch(r"(q\d\d_\w+)\.ipynb", href)
        url = page_url(chapter.group(1)) if chapter else href
        if not re.match(r"https?://", url):
            env.setdefault("dropped", []).append(True)
            return ""  # no address inside Anki: the link's text stays, plain
        env.setdefault("dropped", []).append(False)
        token.attrSet("href", url)
        return self.renderToken(tokens, idx, options, env)

    def link_close(self, tokens, idx, options, env):
        return "" if env["dropped"].pop() else self.renderToken(tokens, idx, options, env)

    md.add_render_rule("math_inline", inline_math)
    md.add_render_rule("math_block", block_math)
    md.add_render_rule("math_block_label", block_math)
    md.add_render_rule("link_open", link_open)
    md.add_render_rule("link_close", link_close)
    return md


def to_html(md, markdown: str) -> str:
    """A field's HTML: one paragraph without its <p>, several as paragraphs."""
    out = md.render(markdown).strip()
    single = re.fullmatch(r"<p>(.*)</p>", out, re.S)
    return single.group(1) if single and "<p>" not in single.group(1) else out


# ---------------------------------------------------------------------------------------
# The deck


MODEL_FIELDS = ["Question", "Context", "Answer", "Chapter"]
FRONT = """\
<div lang="{lang}" class="aqa">
<div class="aqa-context">{{{{Context}}}}</div>
<div class="aqa-question">{{{{Question}}}}</div>
</div>"""
BACK = """\
{{{{FrontSide}}}}
<hr id="answer">
<div lang="{lang}" class="aqa">
<div class="aqa-answer">{{{{Answer}}}}</div>
<div class="aqa-chapter">{{{{Chapter}}}}</div>
</div>"""
CSS = """\
.card { font-family: system-ui, "Noto Sans", "Noto Sans CJK SC", "PingFang SC",
  "Microsoft YaHei", sans-serif; font-size: 19px; line-height: 1.5; text-align: left;
  max-width: 40em; margin: 0 auto; padding: 0 0.5em; }
.aqa-context { font-size: 80%; opacity: 0.7; margin-bottom: 0.4em; }
.aqa-question { font-weight: 600; }
.aqa-chapter { font-size: 80%; margin-top: 1em; opacity: 0.8; }
code { font-size: 90%; }
"""


@dataclass
class Card:
    part: int
    guid: str
    fields: list[str]
    tags: list[str]


def page_urls(language: str, base_url: str):
    """A chapter's page in the published site, or "" where there is no address."""
    base = base_url.rstrip("/")

    def url(stem: str) -> str:
        return f"{base}/{site_path(language, stem)}" if base else ""

    return url


def site_path(language: str, stem: str) -> str:
    return f"{SUBFOLDER[language]}book/{stem}.html"


def cards(language: str, base_url: str = "", book: Path = BOOK,
          locale: Path = LOCALE) -> tuple[list[Part], dict[int, str], str, list[Card]]:
    """The deck's parts, their subdecks' names, the parent deck's name and the notes."""
    parts = read_drill(book)
    tr = Translator(language, locale)
    md = _markdown(page_urls(language, base_url))
    names: dict[int, str] = {}
    title = TITLE if language == "en" else tr("intro", TITLE)
    found: list[Card] = []
    for part in parts:
        caption = part.caption
        if language != "en":
            linked = re.match(r"\[([^\]]+)\]", tr("drill", part.caption_message))
            caption = linked.group(1) if linked else ""
        names[part.number] = f"{title}::{caption}"
        page = part.page.stem
        labels = {fold: re.sub(r"</?details>|</?summary>|\n", "",
                               tr(page, f"<details>\n<summary>{fold}</summary>\n", raw=True))
                  for fold in FOLDS}
        for chapter in part.chapters:
            title_html = to_html(md, tr(page, chapter.title))
            chinese = to_html(md, tr(page, chapter.chinese)) if chapter.chinese else ""
            read = to_html(md, tr(page, chapter.read))
            if not base_url:
                read += f' — <code>{html.escape(site_path(language, chapter.stem))}</code>'
            tags = ["attention-qa", f"part{part.number}", chapter.stem[:3]]
            short = [tr(page, b) for b in chapter.folds[FOLDS[0]]]
            context = labels[FOLDS[0]] + (f" · {chinese}" if chinese else "")
            found.append(Card(part.number, note_guid(language, chapter.stem, "short-answer"),
                              [title_html, context, to_html(md, "\n\n".join(short)), read],
                              [*tags, "short-answer"]))
            follow_ups: list[list[str]] = []
            asked_in_english: list[str] = []  # each follow-up's key: its English question
            for block in chapter.folds.get(FOLDS[1], []):
                text = tr(page, block)
                if block.startswith("**"):
                    follow_ups.append([text])
                    english = BOLD_QUESTION.fullmatch(block)
                    question = english.group(1) if english else block
                    asked_in_english.append(" ".join(question.split()))
                elif follow_ups:
                    follow_ups[-1].append(text)
            for key, (first, *rest) in zip(asked_in_english, follow_ups, strict=True):
                asked = BOLD_QUESTION.fullmatch(first)
                if not first:
                    continue  # missing: tr has named it
                if not asked:
                    raise ValueError(f"{page}: a follow-up that does not open with its "
                                     f"**question**: {first[:80]!r}")
                answer = "\n\n".join([asked.group(2), *rest]).strip()
                context = f"{labels[FOLDS[1]]} · {title_html}"
                guid = note_guid(language, chapter.stem, f"follow-up: {key}")
                found.append(Card(part.number, guid,
                                  [to_html(md, asked.group(1)), context, to_html(md, answer), read],
                                  [*tags, "follow-up"]))
    tr.check()
    return parts, names, title, found


def inputs(book: Path = BOOK, locale: Path = LOCALE) -> list[Path]:
    """What a deck is made of, whose newest time is the deck's."""
    return [*sorted(book.glob("drill*.md")), *sorted(locale.glob("drill*.po")),
            locale / "intro.po", Path(__file__)]


def source_time(book: Path = BOOK, locale: Path = LOCALE) -> int:
    if os.environ.get("SOURCE_DATE_EPOCH"):
        return int(os.environ["SOURCE_DATE_EPOCH"])
    return int(max(p.stat().st_mtime for p in inputs(book, locale) if p.exists()))


def build_package(language: str, base_url: str = "", book: Path = BOOK, locale: Path = LOCALE):
    import genanki

    parts, names, title, found = cards(language, base_url, book, locale)
    model = genanki.Model(
        stable_id("model", language),
        f"{title} ({language})",
        fields=[{"name": name} for name in MODEL_FIELDS],
        templates=[{"name": "Card",
                    "qfmt": FRONT.format(lang="zh-CN" if language == "zh" else "en"),
                    "afmt": BACK.format(lang="zh-CN" if language == "zh" else "en")}],
        css=CSS,
    )
    parent = genanki.Deck(stable_id("deck", language), title)
    decks = {p.number: genanki.Deck(stable_id("deck", language, str(p.number)), names[p.number])
             for p in parts}
    for due, card in enumerate(found):  # new cards come in book order
        decks[card.part].add_note(genanki.Note(model=model, fields=card.fields, guid=card.guid,
                                               tags=card.tags, due=due))
    return genanki.Package([parent, *decks.values()])


def write_deck(language: str, folder: Path, base_url: str | None = None,
               book: Path = BOOK, locale: Path = LOCALE) -> Path:
    """Write ``folder/attention-qa-<language>.apkg``; the same inputs give the same bytes."""
    base_url = site_url() if base_url is None else base_url
    package = build_package(language, base_url, book, locale)
    timestamp = source_time(book, locale)
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / deck_file(language)
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "collection.anki2"
        conn = sqlite3.connect(db)
        package.write_to_db(conn.cursor(), timestamp, itertools.count(timestamp * 1000))
        conn.commit()
        conn.close()
        staged = folder / f".{target.name}.tmp"  # a reader never sees half a deck
        with zipfile.ZipFile(staged, "w") as out:
            # what genanki writes, with fixed times in the zip's headers
            for name, data in (("collection.anki2", db.read_bytes()), ("media", b"{}")):
                info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
                info.compress_type = zipfile.ZIP_DEFLATED
                out.writestr(info, data)
        os.replace(staged, target)
    return target


def site_url(config: Path = ROOT / "_config.yml") -> str:
    """_config.yml's html.baseurl where it is set, else SITE_URL."""
    import yaml

    settings = yaml.safe_load(config.read_text()) if config.exists() else {}
    return ((settings or {}).get("html") or {}).get("baseurl") or SITE_URL


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("languages", nargs="*", help=f"of {', '.join(LANGUAGES)} (default: all)")
    parser.add_argument("--base-url", default=None, help="the published site's address")
    parser.add_argument("--out", type=Path, default=None, help="one folder for every deck")
    args = parser.parse_args(argv)
    if set(args.languages) - set(LANGUAGES):
        parser.error(f"a language is one of {', '.join(LANGUAGES)}")
    for language in args.languages or LANGUAGES:
        folder = args.out or SITE / SUBFOLDER[language] / DECKS_FOLDER
        try:
            path = write_deck(language, folder, args.base_url)
        except MissingTranslation as error:
            print(error, file=sys.stderr)
            return 1
        print(f"wrote {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
