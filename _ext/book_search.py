"""Search that reads Chinese, and snippets without TeX.

* The index is Sphinx's Chinese one (``html_search_language: zh`` in ``_config.yml``):
  jieba cuts Chinese prose into words, so 掩码 finds 填充掩码 and 因果掩码; English words
  are indexed and stemmed as before. ``quiet_jieba`` keeps jieba's progress lines out of
  the build log, and warns (so ``-W`` fails) when jieba is missing. ``fast_latin_terms``
  makes the index's test "is this Latin word one the pages use?" a set lookup: Sphinx keeps
  those words in a list that grows with every paragraph and searches it for every word, which
  took half a minute per build; the index it writes is the same.
* ``extend_search_page`` loads ``search-page.js`` on the search page only: it cuts a
  Chinese query into the index's words (填充掩码 → 填充, 掩码), and shows each formula in
  a result's snippet by its plain reading (``book_math``'s ``data-text``), not as TeX. The
  script lives in ``_ext/static/``, because jupyter-book links every script in ``_static/``
  into every page.
"""

from __future__ import annotations

import logging
from pathlib import Path

from sphinx.util import logging as sphinx_logging

logger = sphinx_logging.getLogger(__name__)
STATIC = Path(__file__).resolve().parent / "static"


def quiet_jieba(app, config) -> None:
    try:
        import jieba
    except ImportError:
        logger.warning("jieba is not installed: Chinese search would not find 掩码 in 填充掩码")
        return
    jieba.setLogLevel(logging.WARNING)


class _Terms(set):
    """Sphinx's list of the Latin words seen so far, as a set (it only extends and tests it)."""

    def extend(self, words) -> None:
        self.update(words)


def fast_latin_terms(app, config) -> None:
    from sphinx.search.zh import SearchChinese

    if not isinstance(SearchChinese.latin_terms, _Terms):
        SearchChinese.latin_terms = _Terms(SearchChinese.latin_terms)


def add_static_folder(app, config) -> None:
    config.html_static_path.append(str(STATIC))


def extend_search_page(app, pagename, templatename, context, doctree) -> None:
    if pagename == "search":
        # The builder's own list: Sphinx restores it before the next page, so no other page
        # gets the script (app.add_js_file would register it for every page).
        app.builder.add_js_file("search-page.js", defer="defer")


def setup(app):
    app.connect("config-inited", quiet_jieba)
    app.connect("config-inited", fast_latin_terms)
    app.connect("config-inited", add_static_folder)
    app.connect("html-page-context", extend_search_page)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
