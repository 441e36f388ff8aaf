"""The two editions side by side: the English site in ``_build/html``, the Chinese one built
from the same pages through gettext in ``_build/html/zh`` (``scripts/build_language.py``).

* ``language_switch``: every page links to the same page in the other edition, from the
  header's row of buttons (a relative link, so it works offline and from ``file://``).
* ``untranslated``: in the Chinese edition, a paragraph (heading, list item, cell …) left in
  English is a warning that names the page, the line and the text, so the strict build
  fails: its entry is missing from the page's .po file (the English changed and `make
  gettext` was not run), empty, or fuzzy (the English changed since it was translated).
  An entry translated as itself (a formula, a name) counts as translated. The descriptions
  of the chapters' figures (cell outputs, which Sphinx leaves alone) are translated from the
  same file by ``translate_figure_descriptions``.
* ``KeepMeasured``: what ``make bench`` writes (the table ``book/testing.md`` includes from
  ``benchmarks/results.md``, in a ``{container} aqa-measured``) is output, like a cell's
  printed output: it is not extracted for translation, so the figures a new run writes never
  leave a page untranslated.
* ``chinese_fonts``: the Chinese edition draws its text with the reader's own Chinese fonts
  (``_static/zh.css``: Noto Sans CJK SC, PingFang SC, Microsoft YaHei …) rather than the
  English edition's cut of Noto Sans SC, which holds only the characters the English pages
  use; ``zh.css`` is linked on the Chinese pages only, ``cjk.css`` on the English ones.
"""

from __future__ import annotations

import re
from pathlib import Path

from book_cjk import CJK
from docutils import nodes
from sphinx import addnodes
from sphinx.transforms import SphinxTransform
from sphinx.util import logging
from sphinx.util.nodes import extract_messages

logger = logging.getLogger(__name__)

CHINESE = "zh_CN"
SUBFOLDER = "zh"  # the Chinese site's place inside the English one
CJK_TEXT = re.compile(f"[{CJK}]")  # what the English edition marks as Chinese
BUTTONS = re.compile(r'<div class="article-header-buttons">')
SWITCH = {
    # the language a page links to: its label, its lang and hreflang, the link's title (the
    # label is the link's accessible name, so that speech input can say what it sees)
    CHINESE: ("中文", "zh-CN", "这一页的中文版"),
    "en": ("English", "en", "This page in English"),
}


def other_edition(pagename: str, language: str | None) -> str:
    """The relative URL of ``pagename`` in the other edition."""
    up = "../" * pagename.count("/")
    if language == CHINESE:
        return f"../{up}{pagename}.html"
    return f"{up}{SUBFOLDER}/{pagename}.html"


def language_switch(page_html: str, pagename: str, language: str | None) -> str:
    """The page with a link to the other edition first among the header's buttons."""
    label, lang, title = SWITCH["en" if language == CHINESE else CHINESE]
    link = (
        f'<a class="btn aqa-language" href="{other_edition(pagename, language)}" '
        f'hreflang="{lang}" lang="{lang}" title="{title}">{label}</a>'
    )
    return BUTTONS.sub(lambda m: m.group(0) + link, page_html, count=1)


class TranslateRawHtml(SphinxTransform):
    """A raw HTML block (the ``<details>``/``<summary>`` of a folded answer) translated as it
    is. Sphinx's Locale transform re-parses a raw block's translation as a literal block in
    reStructuredText (``::`` and an indented text), which the Markdown parser reads as a
    paragraph ``::``: every folded answer unfolded and printed ``::`` in its place. Here the
    translation replaces the block's HTML directly, before that transform runs."""

    default_priority = 15  # before Sphinx's Locale transform (20)

    def apply(self, **kwargs) -> None:
        if self.config.language != CHINESE:
            return
        table = None
        for node in self.document.findall(nodes.raw):
            block = not isinstance(node.parent, nodes.TextElement)  # not inside a paragraph
            if not block or _in_output(node) or "html" not in node.get("format", "").split():
                continue
            table = _page_table(self.app.srcdir, self.env.docname) if table is None else table
            message = node.rawsource or node.astext()
            if message not in table:
                logger.warning(
                    "not translated (see locales/zh_CN/LC_MESSAGES/%s.po): %s",
                    self.env.docname,
                    " ".join(message.split())[:100],
                    location=node,
                )
                continue
            node.children = [nodes.Text(table[message])]
            node.rawsource = table[message]
            node["translatable"] = False  # done: Sphinx's Locale transform leaves it alone


class KeepMeasured(SphinxTransform):
    default_priority = 10  # before Sphinx's Locale transform (20) and the gettext builder

    def apply(self, **kwargs) -> None:
        for box in self.document.findall(nodes.container):
            if "aqa-measured" in box.get("classes", []):
                for node in box.findall(nodes.TextElement):
                    node["translatable"] = False


def _in_output(node) -> bool:
    """Inside a notebook cell's output (printed text, figures, HTML), which stays as it is."""
    parent = node.parent
    while parent is not None:
        if isinstance(parent, nodes.container) and "cell_output" in parent.get("classes", []):
            return True
        parent = parent.parent
    return False


def po_table(path: Path) -> dict[str, str]:
    """A .po file's translations: entry → translation, leaving out empty and fuzzy ones."""
    from babel.messages.pofile import read_po

    with path.open("rb") as f:
        return {m.id: m.string for m in read_po(f) if m.id and m.string and not m.fuzzy}


def _page_table(srcdir: str, docname: str) -> dict[str, str]:
    """The page's translations, from its .po file."""
    path = Path(srcdir) / "locales" / CHINESE / "LC_MESSAGES" / f"{docname}.po"
    return po_table(path) if path.exists() else {}


def translate_figure_descriptions(app, doctree) -> None:
    """A chapter's figures are cell outputs, whose descriptions (alt texts, from the cells'
    metadata) Sphinx does not extract (``make gettext`` puts them in the page's .po): each is
    in Chinese once the build is done, or the build says which is not."""
    if app.config.language != CHINESE:
        return
    table = None
    for image in doctree.findall(nodes.image):
        if not (image.get("alt") and _in_output(image)):
            continue
        table = _page_table(app.srcdir, app.env.docname) if table is None else table
        if image["alt"] in table:
            image["alt"] = table[image["alt"]]
        elif not CJK_TEXT.search(image["alt"]):  # not translated by Sphinx already
            logger.warning(
                "figure description not translated (see locales/zh_CN/LC_MESSAGES/%s.po): %s",
                app.env.docname,
                image["alt"][:97],
                location=image,
            )


def translate_toc_captions(app, doctree) -> None:
    """The parts' captions in the table of contents (``_toc.yml``): sphinx-external-toc adds
    its toctrees after Sphinx has translated the page, so they are looked up here, before
    the contents are collected for the sidebar."""
    if app.config.language != CHINESE:
        return
    toctrees = [t for t in doctree.findall(addnodes.toctree) if t.get("caption")]
    table = _page_table(app.srcdir, app.env.docname) if toctrees else {}
    for toctree in toctrees:
        if toctree["caption"] in table:
            toctree["caption"] = table[toctree["caption"]]
        elif not CJK_TEXT.search(toctree["caption"]):
            logger.warning("caption not translated: %s", toctree["caption"], location=toctree)


def untranslated(app, doctree) -> None:
    if app.config.language != CHINESE:
        return
    for node, message in extract_messages(doctree):
        if isinstance(node, addnodes.translatable) or _in_output(node):
            continue  # a toctree's caption (tests/test_translations.py checks its entry)
        if not node.get("translated", False):
            text = " ".join(message.split())
            logger.warning(
                "not translated (see locales/zh_CN/LC_MESSAGES/%s.po): %s",
                app.env.docname,
                text if len(text) <= 100 else text[:97] + "...",
                location=node,
            )


def chinese_search_box(app, config) -> None:
    """The search box's placeholder, which jupyter-book sets in English (``search_bar_text``)."""
    if config.language == CHINESE:
        config.html_theme_options["search_bar_text"] = "搜索本书…"


def chinese_fonts(app, pagename, templatename, context, doctree) -> None:
    chinese = app.config.language == CHINESE
    dropped = "cjk.css" if chinese else "zh.css"
    context["css_files"][:] = [c for c in context["css_files"] if dropped not in str(c)]


def setup(app):
    app.connect("config-inited", chinese_search_box)
    app.add_transform(KeepMeasured)
    app.add_transform(TranslateRawHtml)
    app.connect("doctree-read", translate_toc_captions, priority=400)  # before the toc
    app.connect("doctree-read", untranslated)
    app.connect("doctree-read", translate_figure_descriptions)
    app.connect("html-page-context", chinese_fonts)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
