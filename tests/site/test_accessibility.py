"""axe-core on every built page: no serious or critical violations (run on each page's one
load in ``test_every_page.py``)."""

from pathlib import Path

import pytest

AXE = Path(__file__).resolve().parents[2] / "node_modules" / "axe-core" / "axe.min.js"


def check_axe(page, path: str, contrast: bool = True) -> None:
    """axe-core's serious and critical findings, and code blocks that scroll sideways.

    A block that scrolls needs a keyboard tab stop, and whether it scrolls depends on the
    fonts a machine has (axe passes on one machine and not on another): code and outputs
    wrap instead, so that no block scrolls on any machine. ``contrast=False`` leaves out
    axe's colour-contrast rule (half its time), for a page whose colours are its twin's: a
    page of the Chinese edition has its English twin's elements, classes and stylesheets.
    """
    if not AXE.exists():
        pytest.fail(f"{AXE} is missing: run `npm ci` (make does it)")
    page.add_script_tag(path=str(AXE))
    rules = "{}" if contrast else "{'color-contrast': {enabled: false}}"
    result = page.evaluate(
        f"async () => await axe.run(document, {{resultTypes: ['violations'], rules: {rules}}})"
    )
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


