"""Light pages: what a reader's browser transfers.

The weights are bytes over the network as Chromium counts them (benchmarks/site_weight.py):
a chapter opened with an empty cache, then the next chapter with the cache warm. Images
written into a page (explorer frames inlined as base64) arrive inside its HTML and count
with it; a failure says how much of the page they are.
"""

import pytest

from benchmarks.site_weight import (
    FIRST_VISIT_BUDGET,
    NEXT_PAGE_BUDGET,
    chapters,
    visit,
)
from tests.site.conftest import SITE

KB = 1000
READING_ORDER = chapters() if (SITE / "index.html").exists() else []
PAGES = [
    (path, READING_ORDER[(i + 1) % len(READING_ORDER)]) for i, path in enumerate(READING_ORDER)
]


def _report(result: dict, which: str) -> str:
    sizes = result["first_visit"] if which == "first" else result["next_page_transfers"]
    page = result["page"] if which == "first" else result["next_page"]
    inline = result["inline_data_bytes" if which == "first" else "next_inline_data_bytes"]
    heaviest = sorted(sizes.items(), key=lambda kv: -kv[1])[:6]
    return (
        f"{page}: its HTML is {sizes.get(page, 0) / KB:.0f} kB, of which {inline / KB:.0f} kB "
        "are images inlined as base64 (explorer frames); heaviest transfers: "
        + ", ".join(f"{name} {size / KB:.0f} kB" for name, size in heaviest)
    )


@pytest.mark.parametrize("path, following", PAGES, ids=[p for p, _ in PAGES])
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
