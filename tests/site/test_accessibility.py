"""axe-core on every built page: no serious or critical violations."""

from pathlib import Path

import pytest

from tests.site.conftest import SITE, built_pages

AXE = Path(__file__).resolve().parents[2] / "node_modules" / "axe-core" / "axe.min.js"
PAGES = built_pages() if SITE.exists() else ["index.html"]


@pytest.mark.parametrize("path", PAGES)
def test_no_serious_or_critical_violations(page, site_url, path):
    """axe-core's serious and critical findings, and code blocks that scroll sideways.

    A block that scrolls needs a keyboard tab stop, and whether it scrolls depends on the
    fonts a machine has (axe passes on one machine and not on another): code and outputs
    wrap instead, so that no block scrolls on any machine.
    """
    if not AXE.exists():
        pytest.fail(f"{AXE} is missing: run `npm ci` (make does it)")
    page.goto(f"{site_url}/{path}", wait_until="networkidle")
    page.add_script_tag(path=str(AXE))
    result = page.evaluate("async () => await axe.run(document, {resultTypes: ['violations']})")
    serious = [
        f"{v['id']} ({v['impact']}): {v['nodes'][0]['html'][:120]}"
        for v in result["violations"]
        if v["impact"] in ("serious", "critical")
    ]
    assert not serious, f"{path}: " + "; ".join(serious)
    scrolling = page.evaluate(
        "() => [...document.querySelectorAll('pre')]"
        ".filter(pre => pre.scrollWidth > pre.clientWidth + 1)"
        ".map(pre => pre.textContent.slice(0, 60))"
    )
    assert not scrolling, f"{path}: code blocks that scroll sideways: {scrolling}"


