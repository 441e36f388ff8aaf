"""The last step of every page: what can only be done once the theme has written it all.

Sphinx renders each page's template (body, sidebar, header) in one go, and has no event
after that. ``finish_pages`` (``builder-inited``) wraps the builder's template renderer so
that each HTML page passes through ``finish_page`` on its way to disk, in whichever process
writes it:

* the page's maths glyph outlines go in once, right after ``<body>`` (``book_math``); the
  sidebar's formulas are known only now;
* the Font Awesome script tag goes (``book_icons``);
* the link to the same page in the other edition joins the header's buttons
  (``book_languages``);
* the search index and its tools load on the search page only: the theme adds them to every
  page for its search-as-you-type, which the book does not turn on (the search box sends the
  query to the search page), so every other page would download the whole index for nothing
  (309 kB in English, 428 kB in Chinese, a fifth of a chapter's first-visit budget);
* in highlighted code, a token whose colour is the code's own colour in both colour modes
  (names, punctuation, spaces, in the theme's styles) loses its ``<span>``: it looks the same
  and the page is lighter (a fifth of q35's code, 53 kB).
"""

from __future__ import annotations

import re
from collections import defaultdict

import book_icons
import book_languages
import book_math

BODY_TAG = re.compile(r"<body\b[^>]*>")
SEARCH_SCRIPTS = re.compile(
    r'[ \t]*<script src="[^"]*(?:_static/searchtools\.js|_static/language_data\.js|searchindex\.js)'
    r'(?:\?[^"]*)?"></script>\n?'
)


def drop_search_scripts(page_html: str, pagename: str) -> str:
    """The page without the search index and its tools, unless it is the search page."""
    return page_html if pagename == "search" else SEARCH_SCRIPTS.sub("", page_html)


MODE_BASE = re.compile(
    r'html\[data-theme="(\w+)"\] \.highlight \{[^}]*?(?<![\w-])color: (#\w+)\s*[;}]'
)
MODE_TOKEN = re.compile(r'html\[data-theme="(\w+)"\] \.highlight \.([\w-]+) \{ color: (#\w+) \}')
CODE_BLOCK = re.compile(r'<div class="highlight"><pre>.*?</pre></div>', re.S)


def plain_token_classes(stylesheet: str) -> frozenset[str]:
    """The highlighting classes drawn exactly as the code around them: in every colour mode
    of ``stylesheet`` (the theme's pygments.css), their one rule sets the block's own colour."""
    base = dict(MODE_BASE.findall(stylesheet))  # mode → the code's colour
    colours = defaultdict(dict)  # class → mode → its colour, where colour is all it sets
    for mode, name, colour in MODE_TOKEN.findall(stylesheet):
        colours[name][mode] = colour
    return frozenset(name for name, by_mode in colours.items() if base and by_mode == base)


def unwrap_plain_tokens(page_html: str, plain: frozenset[str]) -> str:
    """Each highlighted code block without the ``<span>`` of its ``plain`` tokens."""
    if not plain:
        return page_html
    span = re.compile(r'<span class="(?:%s)">([^<]*)</span>' % "|".join(map(re.escape, plain)))
    return CODE_BLOCK.sub(lambda block: span.sub(r"\1", block.group(0)), page_html)


def finish_page(page_html: str, pagename: str = "", language: str | None = None,
                plain_tokens: frozenset[str] = frozenset()) -> str:
    page_html = book_icons.drop_icon_script(page_html)
    page_html = unwrap_plain_tokens(page_html, plain_tokens)
    if pagename:
        page_html = drop_search_scripts(page_html, pagename)
        page_html = book_languages.language_switch(page_html, pagename, language)
    page_html, defs = book_math.share_glyphs(page_html)
    if defs:
        body = BODY_TAG.search(page_html)
        if body:
            page_html = page_html[: body.end()] + "\n" + defs + page_html[body.end() :]
    return page_html


def theme_stylesheet(app) -> str:
    """The pygments.css the theme writes when the build ends, written now."""
    from pydata_sphinx_theme.pygments import get_pygments_stylesheet

    options = app.builder.theme.get_options(app.config.html_theme_options)
    return get_pygments_stylesheet(options["pygments_light_style"],
                                   options["pygments_dark_style"])


def finish_pages(app) -> None:
    if app.builder.format != "html":
        return
    templates = app.builder.templates
    render = templates.render
    plain = plain_token_classes(theme_stylesheet(app))

    def render_and_finish(template: str, context: dict) -> str:
        output = render(template, context)
        if not template.endswith(".html"):
            return output
        return finish_page(output, context.get("pagename", ""), app.config.language, plain)

    templates.render = render_and_finish


def setup(app):
    app.connect("builder-inited", finish_pages)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
