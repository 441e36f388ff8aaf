"""Chinese in the book is marked as Chinese, and drawn with the Chinese font the site ships.

* ``MarkChinese`` (a transform, run on every page as it is read) wraps each run of Chinese
  characters in ``<span lang="zh-CN">`` (docutils writes the ``lang`` attribute for an
  inline node with the class ``language-zh-CN``). Titles are marked before Sphinx copies
  them into tables of contents, so the sidebar, the page's neighbours and its contents box
  are marked too. Code, printed output, raw HTML and maths are left alone. Notebook
  outputs join the page only as it is written: ``MarkChineseInOutputs`` marks those.
* ``mark_code``: code and printed output are highlighted only as the page is written, so
  Chinese in them (a string literal, a printed token) is marked in the page's HTML: each
  run of Chinese inside ``<pre>`` is wrapped, between the highlighter's tags.
* ``mark_print_title``: the theme repeats each page's title, as plain text, in a heading
  shown only in print (the handouts); it is marked the same way.
* ``_static/cjk.css`` (jupyter-book links every stylesheet in ``_static/`` into every page)
  draws ``:lang(zh)`` text with ``_static/fonts/noto-sans-sc-book-{400,700}.woff2``, Noto
  Sans CJK SC cut down to the characters the book uses (``scripts/make_cjk_font.py`` makes
  them), and never in a made-up italic.
"""

from __future__ import annotations

import html
import re

from docutils import nodes
from sphinx.transforms import SphinxTransform
from sphinx.transforms.post_transforms import SphinxPostTransform

LANG_CLASS = "language-zh-CN"

# Han ideographs, CJK symbols and punctuation, and full-width forms (，。？：（）).
CJK = (
    "\u2e80-\u2fdf"  # radicals
    "\u3000-\u303f"  # CJK symbols and punctuation
    "\u3400-\u4dbf"  # extension A
    "\u4e00-\u9fff"  # unified ideographs
    "\uf900-\ufaff"  # compatibility ideographs
    "\ufe30-\ufe4f"  # compatibility forms
    "\uff00-\uffef"  # half-width and full-width forms
    "\U00020000-\U0002fa1f"  # extensions B-F, compatibility supplement
)
CJK_RUN = re.compile(f"[{CJK}]+")

# Text under these is code, output or markup, not prose.
SKIPPED = (
    nodes.FixedTextElement,  # literal blocks, doctest, raw, comments, math blocks
    nodes.literal,
    nodes.math,
    nodes.raw,
)


def split_runs(text: str) -> list[tuple[str, bool]]:
    """The text as (piece, is_chinese) pairs, in order, covering it exactly."""
    pieces, at = [], 0
    for match in CJK_RUN.finditer(text):
        if match.start() > at:
            pieces.append((text[at : match.start()], False))
        pieces.append((match.group(0), True))
        at = match.end()
    if at < len(text):
        pieces.append((text[at:], False))
    return pieces


def _is_marked(node: nodes.Node) -> bool:
    parent = node.parent
    return isinstance(parent, nodes.inline) and LANG_CLASS in parent.get("classes", [])


def _skipped(node: nodes.Node) -> bool:
    parent = node.parent
    while parent is not None:
        if isinstance(parent, SKIPPED):
            return True
        parent = parent.parent
    return False


def mark_chinese(tree: nodes.Node) -> int:
    """Wrap every run of Chinese characters under tree; returns how many were wrapped."""
    marked = 0
    for text in list(tree.findall(nodes.Text)):
        if not CJK_RUN.search(text) or _is_marked(text) or _skipped(text):
            continue
        replacement = [
            nodes.inline(piece, piece, classes=[LANG_CLASS]) if chinese else nodes.Text(piece)
            for piece, chinese in split_runs(str(text))
        ]
        text.parent.replace(text, replacement)
        marked += sum(isinstance(node, nodes.inline) for node in replacement)
    return marked


def chinese_edition(config) -> bool:
    """The Chinese edition is Chinese throughout (``<html lang="zh-CN">``): nothing to mark,
    and its fonts are the reader's own (``book_languages``)."""
    return config.language == "zh_CN"


class MarkChinese(SphinxTransform):
    # After MyST, myst-nb and smart quotes, before Sphinx collects titles (doctree-read, 880).
    default_priority = 870

    def apply(self, **kwargs) -> None:
        if not chinese_edition(self.config):
            mark_chinese(self.document)


class MarkChineseInOutputs(SphinxPostTransform):
    """Notebook outputs (Markdown ones included) join the page only as it is written."""

    default_priority = 300  # after myst-nb picks each output's form (4) and hides cells (199)

    def run(self, **kwargs) -> None:
        if not chinese_edition(self.config):
            mark_chinese(self.document)


def marked_html(text: str) -> str:
    """Plain text as HTML, each Chinese run in <span lang="zh-CN">."""
    lang = LANG_CLASS.removeprefix("language-")
    return "".join(
        f'<span lang="{lang}">{html.escape(piece)}</span>' if chinese else html.escape(piece)
        for piece, chinese in split_runs(text)
    )


def mark_print_title(app, pagename, templatename, context, doctree) -> None:
    if context.get("pagetitle") and not chinese_edition(app.config):
        context["pagetitle"] = marked_html(context["pagetitle"])


PRE_BLOCK = re.compile(r"(<pre\b[^>]*>)(.*?)(</pre>)", re.S)
TAG = re.compile(r"(<[^>]*>)")


def marked_pre(body: str) -> str:
    """Page HTML with each run of Chinese inside <pre> wrapped in <span lang="zh-CN"> (the text
    between tags is already escaped, and a run of Chinese holds no & or <)."""
    lang = LANG_CLASS.removeprefix("language-")

    def mark(text: str) -> str:
        return CJK_RUN.sub(lambda run: f'<span lang="{lang}">{run.group(0)}</span>', text)

    def block(match: re.Match) -> str:
        pieces = TAG.split(match.group(2))  # odd pieces are tags
        inner = "".join(p if i % 2 else mark(p) for i, p in enumerate(pieces))
        return match.group(1) + inner + match.group(3)

    return PRE_BLOCK.sub(block, body)


def mark_code(app, pagename, templatename, context, doctree) -> None:
    if context.get("body") and not chinese_edition(app.config):
        context["body"] = marked_pre(context["body"])


def setup(app):
    app.add_transform(MarkChinese)
    app.add_post_transform(MarkChineseInOutputs)
    # After sphinx-book-theme sets the title (at the default priority, 500).
    app.connect("html-page-context", mark_print_title, priority=600)
    app.connect("html-page-context", mark_code)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
