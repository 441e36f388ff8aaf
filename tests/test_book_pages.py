"""The last step of every page (_ext/book_pages.py): the search index loads on the search page
only, since the book does not turn on the theme's search-as-you-type."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "_ext"))
import book_pages  # noqa: E402

HEAD = """<head>
    <script src="../_static/sphinx_highlight.js?v=dc90522c"></script>
    <script src="../_static/searchtools.js"></script>
    <script src="../_static/language_data.js"></script>
    <script src="../searchindex.js"></script>
  </head>"""


def test_a_chapter_page_loads_no_search_index():
    page = book_pages.drop_search_scripts(HEAD, "book/q04_why_scale_by_sqrt_dk")
    assert "searchindex.js" not in page and "searchtools.js" not in page
    assert "language_data.js" not in page
    assert "sphinx_highlight.js" in page  # highlighting the searched words still works


def test_the_search_page_keeps_it():
    assert book_pages.drop_search_scripts(HEAD, "search") == HEAD


def test_the_theme_does_not_search_as_you_type():
    """The scripts are dropped because nothing on a page uses them: the theme's inline search
    does only with search_as_you_type, which the book leaves off."""
    config = (Path(__file__).resolve().parents[1] / "_config.yml").read_text()
    assert "search_as_you_type" not in config
