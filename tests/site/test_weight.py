"""Light pages: what a reader's browser transfers.

The weights are bytes over the network as Chromium counts them (benchmarks/site_weight.py):
a chapter opened with an empty cache, then the next chapter with the cache warm. Images
written into a page (explorer frames inlined as base64) arrive inside its HTML and count
with it; a failure says how much of the page they are.

What differs from one chapter's transfer to another's is the chapter itself: its HTML and
the pictures it shows on arrival (everything else, the theme, the scripts, the search index,
is the same for every page of an edition). So the browser measures, in each edition, the
chapters that carry the most of their own, each opened first and each arrived at from the
chapter before it; the other pages are checked, from the files, to carry less than the
lightest of those (``make bench`` measures every page in the browser).
"""

import functools
import re

import pytest

from benchmarks.site_weight import (
    FIRST_VISIT_BUDGET,
    NEXT_PAGE_BUDGET,
    chapters,
    visit,
)
from tests.site.conftest import SITE

KB = 1000
MEASURED = 3  # per edition
IMAGE_SRC = re.compile(r'<img\b[^>]*\bsrc="([^"]+)"')


def reading_order(edition: str) -> list[str]:
    if not (SITE / edition / "index.html").exists():
        return []
    return [f"{edition}/{p}" if edition else p for p in chapters(SITE / edition)]


@functools.cache  # read once: the sorting and both tests ask again
def own_bytes(path: str) -> int:
    """A chapter's own weight on arrival: its HTML and the files its <img> tags show."""
    page = SITE / path
    html = page.read_text()
    pictures = {
        (page.parent / src).resolve()
        for src in IMAGE_SRC.findall(html)
        if not src.startswith(("data:", "http"))
    }
    return page.stat().st_size + sum(p.stat().st_size for p in pictures if p.exists())


def heaviest(order: list[str]) -> list[str]:
    return sorted(order, key=own_bytes, reverse=True)[:MEASURED]


def pairs() -> list[tuple[str, str]]:
    """(opened first, arrived at next) for each measured chapter, in both roles."""
    found = []
    for edition in ("", "zh"):
        order = reading_order(edition)
        for path in heaviest(order):
            i = order.index(path)
            found += [(path, order[(i + 1) % len(order)]), (order[i - 1], path)]
    return found


PAIRS = pairs()


def _report(result: dict, which: str) -> str:
    sizes = result["first_visit"] if which == "first" else result["next_page_transfers"]
    page = result["page"] if which == "first" else result["next_page"]
    inline = result["inline_data_bytes" if which == "first" else "next_inline_data_bytes"]
    heaviest_transfers = sorted(sizes.items(), key=lambda kv: -kv[1])[:6]
    return (
        f"{page}: its HTML is {sizes.get(page, 0) / KB:.0f} kB, of which {inline / KB:.0f} kB "
        "are images inlined as base64 (explorer frames); heaviest transfers: "
        + ", ".join(f"{name} {size / KB:.0f} kB" for name, size in heaviest_transfers)
    )


@pytest.mark.parametrize("path, following", PAIRS, ids=[f"{p}->{f}" for p, f in PAIRS])
def test_first_visit_and_next_page_weigh_little(browser, site_url, path, following):
    result = visit(browser, site_url, path, following)
    assert result["failed"] == [], result["failed"]
    first, after = result["first_visit_bytes"], result["next_page_bytes"]
    assert first <= FIRST_VISIT_BUDGET, (
        f"first visit {first / KB:.0f} kB > {FIRST_VISIT_BUDGET / KB:.0f} kB. "
        + _report(result, "first")
    )
    assert after <= NEXT_PAGE_BUDGET, (
        f"next page {after / KB:.0f} kB > {NEXT_PAGE_BUDGET / KB:.0f} kB. "
        + _report(result, "next")
    )


@pytest.mark.parametrize("edition", ["", "zh"], ids=["en", "zh"])
def test_the_chapters_not_measured_carry_less_than_those_measured(edition):
    order = reading_order(edition)
    assert order, f"no built site for {edition or 'English'}"
    measured = heaviest(order)
    lightest = min(own_bytes(p) for p in measured)
    heavier = [p for p in order if p not in measured and own_bytes(p) > lightest]
    assert heavier == [], heavier
