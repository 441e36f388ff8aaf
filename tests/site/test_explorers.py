"""Every explorer on every built page answers every one of its controls, by keyboard alone."""

import pytest

from tests.site.conftest import SITE, built_pages

PAGES_WITH_EXPLORERS = [
    path
    for path in (built_pages() if SITE.exists() else [])
    if "aqa-explorer" in (SITE / path).read_text()
]


def _state(explorer):
    return (
        explorer.get_attribute("data-aqa-frame"),
        explorer.locator("img.aqa-frame").get_attribute("alt"),
    )


@pytest.mark.parametrize("path", PAGES_WITH_EXPLORERS)
def test_each_control_changes_the_frame_by_keyboard(page, site_url, path):
    page.goto(f"{site_url}/{path}", wait_until="networkidle")
    explorers = page.locator(".aqa-explorer")
    assert explorers.count() >= 1
    for e in range(explorers.count()):
        explorer = explorers.nth(e)
        total = int(explorer.get_attribute("data-aqa-frames"))
        controls = explorer.locator("[data-aqa-control]")
        for c in range(controls.count()):
            control = controls.nth(c)
            before = _state(explorer)
            control.focus()
            is_select, at_end = control.evaluate(
                "el => el.tagName === 'SELECT' ? [true, el.selectedIndex === el.options.length - 1]"
                " : [false, Number(el.value) === Number(el.max)]"
            )
            if is_select:
                page.keyboard.press("ArrowUp" if at_end else "ArrowDown")
            else:
                page.keyboard.press("ArrowLeft" if at_end else "ArrowRight")
            after = _state(explorer)
            label = control.evaluate("el => el.labels[0].textContent")
            assert after != before, f"{path}: explorer {e}, control {label!r} did not respond"
            assert 0 <= int(after[0]) < total
        assert page.console_errors == [], page.console_errors
