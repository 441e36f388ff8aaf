"""Every explorer on a page answers every one of its controls, by keyboard alone (run on
each page's one load in ``test_every_page.py``)."""


def _state(explorer):
    return (
        explorer.get_attribute("data-aqa-frame"),
        explorer.locator("img.aqa-frame").get_attribute("alt"),
    )


def check_keyboard(page, path: str) -> None:
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
