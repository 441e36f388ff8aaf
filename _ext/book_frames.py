"""Every explorer's full panel put into the pages at build time, from the explorers
themselves: the build does not execute the notebooks again.

A saved notebook holds each explorer's default frame only (its outputs are what nbval
checks). When the site is built, each such panel is replaced by the one with every frame:
the builder is found among the page's explorers (``attention_qa.explorers.BY_CHAPTER``) by
the panel's id, and its full panel is rendered once for each state of what the frames
depend on (the package's source and the versions of the libraries that compute and draw
them), then kept in ``_build/.frames/``, where every later build reuses it.

In the Chinese edition (``language = "zh_CN"``) the panel says everything in Chinese: its
labels, figures and messages, and the words drawn in its pictures, from the explorers'
table ``locales/zh_CN/LC_MESSAGES/explorers.po`` (``attention_qa.panel.i18n``), read once
per build. A string missing from the table stops the build, naming the explorer and the string.

Cells that time something (tagged ``nbval-ignore-output``) keep no output in the saved
notebook; the site says so under them, since a time is the machine's that runs the cell.
"""

import hashlib
import importlib.metadata
import os
import re
from functools import cache
from pathlib import Path

from docutils import nodes
from sphinx.errors import ExtensionError

PANEL_ID = re.compile(r'<div class="aqa-explorer" id="(aqa-[0-9a-f]{10})"')
DEFAULT_ONLY = "This copy holds the default setting only"
LIBRARIES = ("torch", "numpy", "matplotlib", "pillow")
TIMED = "tag_nbval-ignore-output"
FRAMES_CACHE = "_build/.frames"  # beside the sites, shared by both languages
EXPLORER_TABLE = "locales/{language}/LC_MESSAGES/explorers.po"
TIMED_NOTE = {
    "en": (
        "This cell measures time, which depends on the machine that runs it: run the notebook "
        "to see yours. The cell after it checks the claim without a clock."
    ),
    "zh_CN": "这个单元格测量时间，结果取决于运行它的机器：运行 notebook 即可看到你的机器上的结果。"
    "它后面的单元格不借助计时来验证这一结论。",
}


@cache
def fingerprint() -> str:
    """What every frame depends on: the package's source and the libraries' versions."""
    from attention_qa import hash_source

    digest = hashlib.sha256()
    hash_source(digest)
    for name in LIBRARIES:
        digest.update(f"{name}=={importlib.metadata.version(name)}\n".encode())
    return digest.hexdigest()[:16]


def chapter_key(docname: str) -> str:
    """The page's key in BY_CHAPTER: ``book/q04_why…`` → ``q04``, ``book/playground`` too."""
    stem = docname.rsplit("/", 1)[-1]
    return stem[:3] if re.match(r"q\d\d_", stem) else stem


def translator(srcdir: Path, language: str | None):
    """The explorers' words in ``language`` (translated, not fuzzy entries), or English."""
    from attention_qa.panel.i18n import ENGLISH

    if not language or language == "en":
        return ENGLISH
    require_fonts(language)
    path = srcdir / EXPLORER_TABLE.format(language=language)
    if not path.exists():
        raise ExtensionError(f"no table of the explorers' words for {language}: {path}")
    return _table_translator(path, language, path.stat().st_mtime_ns)


def require_fonts(language: str) -> None:
    """Stop the build if matplotlib cannot find a font the pictures of ``language`` draw with
    (``attention_qa.panel.i18n.FONTS``): it would draw each missing glyph as an empty box,
    and only warn."""
    from matplotlib import font_manager

    from attention_qa.panel.i18n import FONTS

    for family in FONTS.get(language, []):
        try:
            font_manager.findfont(family, fallback_to_default=False)
        except ValueError:
            raise ExtensionError(
                f"the {language} explorer pictures draw with the font {family!r}, which "
                "matplotlib cannot find: install it (Debian: fonts-noto-cjk); if it is "
                "installed, matplotlib's list of fonts predates it: delete the fontlist-*.json "
                f"in {os.environ.get('MPLCONFIGDIR', 'its config folder')} and build again"
            ) from None


@cache
def _table_translator(path: Path, language: str, mtime_ns: int):
    """One Translator per state of the table, shared by every page of a build."""
    from book_languages import po_table

    from attention_qa.panel.i18n import Translator

    return Translator(language, po_table(path))


def cached_panel(builder, folder: Path, explorer=None, language=None) -> str:
    """The full panel of ``builder``'s explorer, rendered once for each fingerprint (and, in
    a translation, the table of its words) and then read from ``folder`` (pass the explorer
    if it is built already; ``language`` is a Translator)."""
    from attention_qa.panel.i18n import ENGLISH

    language = language or ENGLISH
    suffix = "" if language is ENGLISH else f"-{language.language}-{language.digest}"
    path = folder / f"{builder.__module__}.{builder.__name__}-{fingerprint()}{suffix}.html"
    if path.exists():
        return path.read_text()
    explorer = (explorer or builder()).in_language(language)
    html = explorer.to_html(all_frames=True)
    if language.missing:
        words = "; ".join(sorted(language.missing))
        language.missing.clear()
        raise ExtensionError(
            f"{builder.__name__}: not in {EXPLORER_TABLE.format(language=language.language)} "
            f"(run `python scripts/translations.py explorers`, then translate): {words}"
        )
    folder.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(f".{os.getpid()}.partial")
    partial.write_text(html)
    partial.replace(path)  # a build stopped half-way leaves no half-written panel
    return html


def full_panel(docname: str, uid: str, folder: Path, language=None) -> str:
    """The panel with every frame of the explorer whose id is ``uid`` on page ``docname``."""
    from attention_qa.explorers import BY_CHAPTER

    builders = BY_CHAPTER.get(chapter_key(docname), [])
    for builder in builders:
        explorer = builder()
        if explorer.uid == uid:
            return cached_panel(builder, folder, explorer, language)
    names = [b.__name__ for b in builders]
    raise ExtensionError(
        f"{docname}: an explorer panel with id {uid} matches none of the page's builders "
        f"{names} (attention_qa.explorers.BY_CHAPTER); run `make execute` on the notebook"
    )


def insert_full_panels(app, doctree, docname):
    folder = Path(app.srcdir) / FRAMES_CACHE
    language = translator(Path(app.srcdir), app.config.language)
    panels = [
        raw
        for raw in doctree.findall(nodes.raw)
        if "html" in raw.get("format", "") and DEFAULT_ONLY in raw.astext()
    ]
    for raw in panels:
        found = PANEL_ID.search(raw.astext())
        if found is None:
            raise ExtensionError(f"{docname}: an explorer panel without an id")
        html = full_panel(docname, found.group(1), folder, language)
        raw.replace_self(nodes.raw("", html, format="html"))


def outdated_with_the_package(app, env, added, changed, removed):
    """Pages with explorers are read again when what their frames depend on has changed
    since the last build (Sphinx alone sees only the notebooks)."""
    from attention_qa.explorers import BY_CHAPTER

    if getattr(env, "aqa_frames_fingerprint", None) == fingerprint():
        return []
    env.aqa_frames_fingerprint = fingerprint()
    return [name for name in env.found_docs if chapter_key(name) in BY_CHAPTER]


def note_timed_cells(app, doctree, docname):
    note = TIMED_NOTE.get(app.config.language or "en", TIMED_NOTE["en"])
    for cell in doctree.findall(nodes.container):
        if TIMED in cell.get("classes", []):
            cell += nodes.paragraph(text=note, classes=["aqa-timed-note"])


def setup(app):
    app.connect("env-get-outdated", outdated_with_the_package)
    app.connect("doctree-resolved", insert_full_panels)
    app.connect("doctree-resolved", note_timed_cells)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
