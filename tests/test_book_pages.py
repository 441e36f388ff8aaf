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


STYLESHEET = """\
html[data-theme="light"] .highlight { background: #fefefe; color: #080808 }
html[data-theme="light"] .highlight .k { color: #6730C5 } /* Keyword */
html[data-theme="light"] .highlight .n { color: #080808 } /* Name */
html[data-theme="light"] .highlight .p { color: #080808 } /* Punctuation */
html[data-theme="light"] .highlight .gs { color: #080808; font-weight: bold } /* Strong */
html[data-theme="dark"] .highlight { background: #2b2b2b; color: #F8F8F2 }
html[data-theme="dark"] .highlight .k { color: #DCC6E0 } /* Keyword */
html[data-theme="dark"] .highlight .n { color: #F8F8F2 } /* Name */
html[data-theme="dark"] .highlight .p { color: #FFFFFF } /* Punctuation */
html[data-theme="dark"] .highlight .gs { color: #F8F8F2; font-weight: bold } /* Strong */
"""


def test_a_token_is_plain_only_where_every_mode_draws_it_as_the_code_around_it():
    # .p differs from the code's colour in dark mode; .gs sets more than a colour
    assert book_pages.plain_token_classes(STYLESHEET) == {"n"}


def test_the_theme_draws_names_and_punctuation_as_the_code_around_them():
    from pydata_sphinx_theme.pygments import get_pygments_stylesheet

    plain = book_pages.plain_token_classes(
        get_pygments_stylesheet("a11y-high-contrast-light", "a11y-high-contrast-dark"))
    assert {"n", "p", "w"} <= plain and not {"k", "o", "mi", "s1", "c1"} & plain


def test_plain_tokens_lose_their_span_in_code_blocks_only():
    code = ('<div class="highlight"><pre><span></span><span class="k">def</span> '
            '<span class="nf">f</span><span class="p">(</span><span class="n">x</span>'
            '<span class="p">):</span></pre></div>')
    page = f'<p><span class="n">kept</span></p>{code}'
    out = book_pages.unwrap_plain_tokens(page, frozenset({"n", "p"}))
    assert out == ('<p><span class="n">kept</span></p><div class="highlight"><pre><span></span>'
                   '<span class="k">def</span> <span class="nf">f</span>(x):</pre></div>')


def test_the_code_colour_is_read_from_color_not_background_color():
    sheet = ('html[data-theme="light"] .highlight { color: #000000; background-color: #ffffff }\n'
             'html[data-theme="light"] .highlight .x { color: #ffffff }\n'
             'html[data-theme="light"] .highlight .n { color: #000000 }\n')
    assert book_pages.plain_token_classes(sheet) == {"n"}
