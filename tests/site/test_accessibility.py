"""axe-core on every page of the English site: no serious or critical violations; and on
every page of both editions, no code block that scrolls sideways (run on each page's one load
in ``test_every_page.py``). A page of the Chinese edition has its English twin's elements,
classes and stylesheets (``test_zh_parity.py``), and what translation could change of what
axe checks, a name for a screen reader left empty, is checked there, from the files; axe
runs on three Chinese pages (``test_every_page.ZH_AXE``)."""

from pathlib import Path

import pytest

AXE = Path(__file__).resolve().parents[2] / "node_modules" / "axe-core" / "axe.min.js"


def check_axe(page, path: str, contrast: bool = True) -> None:
    """axe-core's serious and critical findings (``contrast=False``: but colour contrast, for
    a page whose colours are its English twin's)."""
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


def check_code_wraps(page, path: str) -> None:
    """No code block scrolls sideways. A block that scrolls needs a keyboard tab stop, and
    whether it scrolls depends on the fonts a machine has (axe passes on one machine and not
    on another): code and outputs wrap instead, so that no block scrolls on any machine."""
    scrolling = page.evaluate(
        "() => [...document.querySelectorAll('pre')]"
        ".filter(pre => pre.scrollWidth > pre.clientWidth + 1)"
        ".map(pre => pre.textContent.slice(0, 60))"
    )
    assert not scrolling, f"{path}: code blocks that scroll sideways: {scrolling}"


