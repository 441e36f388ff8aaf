"""Every page of the built site, loaded once: all the checks that look at a whole page run on
that one load, in order, so that a page costs one visit however many checks it has. The
pages are loaded one after another in one tab (``tab``), as a reader goes from page to page.

1. it loads with no console error, no request outside 127.0.0.1 and no missing file
   (``test_site``), checked when the visit ends, so that it covers every request the page
   made while the other checks ran (frames fetched by the explorers included);
2. its Chinese is marked and drawn in the shipped font (``test_chinese``; a page of the
   Chinese edition is Chinese throughout, in the reader's fonts: ``test_zh``);
3. no code block scrolls, and on a page of the English site axe-core finds nothing serious
   (``test_accessibility``; a page of the Chinese edition has its twin's elements, classes
   and stylesheets, and keeps every name a screen reader reads: ``test_zh_parity``; axe runs
   on three of them, ``ZH_AXE``, without the colour-contrast rule);
4. at 1300 px and then at 390 px (a phone) it never scrolls sideways and the text in its
   figures stays legible (``test_reader``);
5. back at 1300 px, each explorer, driven through every value of every control, never
   dead-ends, keeps its height and loads every frame (``test_reader``); then, back at its
   defaults, it answers every control by keyboard (``test_explorers``). Every frame's own
   content is checked without a browser, from the explorers themselves
   (``tests/test_explorers_all.py``).
"""

import pytest

from tests.site.conftest import SITE, built_pages, forget, leave, zh_pages
from tests.site.test_accessibility import check_axe, check_code_wraps
from tests.site.test_chinese import check_chinese
from tests.site.test_explorers import check_keyboard
from tests.site.test_handouts import check_printed_question
from tests.site.test_reader import WIDTHS, check_drive, check_layout
from tests.site.test_site import check_offline_without_errors

PAGES = (built_pages() + zh_pages()) if SITE.exists() else ["index.html"]
# Chinese pages axe runs on too (its colour-contrast rule aside: the colours are the English
# twin's), for what only the rendered page shows: the front page, a chapter with explorers and
# folded answers, the glossary's table
ZH_AXE = ("zh/book/intro.html", "zh/book/q04_why_scale_by_sqrt_dk.html", "zh/book/glossary.html")
DESKTOP = max(WIDTHS)


def _resize(page, width: int) -> None:
    """Narrow or widen the window, and wait until the page has handled it (a resize event
    is dispatched with the next frame; the explorers re-measure their room then)."""
    page.set_viewport_size({"width": width, "height": 900})
    page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")


RESET_JS = """() => document.querySelectorAll('.aqa-explorer [data-aqa-control]').forEach(el => {
  if (el.tagName === 'SELECT') {
    el.selectedIndex = [...el.options].findIndex(option => option.defaultSelected);
  } else {
    el.value = el.defaultValue;
  }
  el.dispatchEvent(new Event('input', {bubbles: true}));
})"""


@pytest.mark.parametrize("path", PAGES)
def test_page(tab, site_url, path, tmp_path):
    page = tab
    page.set_viewport_size({"width": DESKTOP, "height": 900})
    forget(page)  # what the pages before this one did is theirs
    # "load" waits for every image and stylesheet; the fonts come after layout. (Waiting
    # for "networkidle" instead would cost half a second of silence on every page.)
    page.goto(f"{site_url}/{path}", wait_until="load")
    chinese = path.startswith("zh/")  # its English twin's structure (test_zh_parity)
    if path in ("index.html", "zh/index.html"):  # the root only sends the reader to the intro
        page.wait_for_url(f"{site_url}/{path.replace('index', 'book/intro')}", wait_until="load")
        if not chinese:
            check_axe(page, path)
        leave(page)
        check_offline_without_errors(page, path)
        return
    page.evaluate("() => document.fonts.ready.then(() => true)")
    if not chinese:
        check_chinese(page, path)
    if not chinese or path in ZH_AXE:
        check_axe(page, path, contrast=not chinese)
    check_code_wraps(page, path)
    for width in sorted(WIDTHS, reverse=True):
        _resize(page, width)
        check_layout(page, path, width)
    _resize(page, DESKTOP)  # and back, as a reader turns a tablet: the panels follow
    if "aqa-explorer" in (SITE / path).read_text():
        check_drive(page, path)
        page.evaluate(RESET_JS)  # every control back to its default, as the page loaded
        check_keyboard(page, path)
    check_printed_question(page, path, tmp_path)
    leave(page)
    check_offline_without_errors(page, path)


def test_zh_pages_axe_runs_on_are_pages_of_the_book():
    assert set(ZH_AXE) <= set(PAGES), set(ZH_AXE) - set(PAGES)
