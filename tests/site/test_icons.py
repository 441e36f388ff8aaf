"""The theme's icons and buttons, without Font Awesome's 1.5 MB script (_ext/book_icons.py)."""

import pytest

from benchmarks.site_weight import Transfers
from tests.site.conftest import SITE

ICON_CLASSES = ".fa, .fa-solid, .fa-regular, .fa-brands, .fas, .far, .fab"
ICONS_JS = """() => [...document.querySelectorAll('ICON_CLASSES')]
  .filter(i => i.getClientRects().length)
  .map(i => {
    const before = getComputedStyle(i, '::before');
    const box = i.getBoundingClientRect();
    return {
      icon: [...i.classList].filter(c => c.startsWith('fa-') && !['fa-solid', 'fa-lg'].includes(c))
        .join(' '),
      button: (i.closest('button, a, label') || i).className,
      content: before.content,
      font: before.fontFamily,
      weight: before.fontWeight,
      width: box.width,
      height: box.height,
    };
  })""".replace("ICON_CLASSES", ICON_CLASSES)


def _codepoint(content: str) -> int | None:
    text = content.strip("\"'")
    return ord(text) if len(text) == 1 else None


def test_theme_icons_are_drawn_without_font_awesome_script(page, site_url):
    """Search, menu, colour mode, full screen, download and the sidebar toggles keep their
    icons; each one's character is in the icon font the site serves, which has loaded."""
    from fontTools.ttLib import TTFont

    transfers = Transfers(page)
    page.goto(f"{site_url}/book/q07_masks.html", wait_until="networkidle")
    page.evaluate("() => document.fonts.ready.then(() => true)")
    icons = page.evaluate(ICONS_JS)
    shown = {icon["icon"].split()[0] for icon in icons}
    for needed in ("fa-magnifying-glass", "fa-bars", "fa-download", "fa-expand", "fa-list"):
        assert needed in shown, f"no {needed} icon on the page: {sorted(shown)}"
    assert {"fa-sun", "fa-moon", "fa-circle-half-stroke"} & shown, sorted(shown)

    font_file = SITE / "_static/vendor/fontawesome/webfonts/fa-solid-900.woff2"
    in_font = set(TTFont(font_file).getBestCmap())
    for icon in icons:
        point = _codepoint(icon["content"])
        assert point is not None, f"{icon['icon']} draws nothing: {icon}"
        assert point in in_font, f"{icon['icon']} (U+{point:04X}) is not in {font_file.name}"
        assert "Font Awesome 6 Free" in icon["font"] and icon["width"] > 4, icon
    assert page.evaluate("document.fonts.check('900 16px \"Font Awesome 6 Free\"', '\\uf002')")
    loaded = transfers.by_url(site_url)
    assert not [name for name in loaded if "fontawesome.js" in name], sorted(loaded)
    assert font_file.stat().st_size < 20_000, "the icon font holds more than the icons used"
    assert not (SITE / "_static/scripts/fontawesome.js").exists()


TOGGLED = {
    "primary": "#pst-primary-sidebar.pst-sidebar-hidden, #pst-primary-sidebar-modal[open]",
    "secondary": "#pst-secondary-sidebar.pst-sidebar-hidden, #pst-secondary-sidebar-modal[open]",
}


def test_theme_buttons_still_work(page, site_url):
    page.goto(f"{site_url}/book/q04_why_scale_by_sqrt_dk.html", wait_until="networkidle")
    before = page.evaluate("document.documentElement.dataset.mode")
    page.locator("button.theme-switch-button:visible").first.click()
    assert page.evaluate("document.documentElement.dataset.mode") != before

    page.locator("button.search-button__button:visible").first.click()
    assert page.locator("#pst-search-dialog input[type=search]").is_visible()
    page.keyboard.press("Escape")

    page.locator(".dropdown-download-buttons button:visible").first.click()
    assert page.locator(".dropdown-download-buttons .dropdown-menu.show").is_visible()
    page.keyboard.press("Escape")


# On a wide screen the contents (secondary sidebar) are always shown, with no toggle.
@pytest.mark.parametrize("side, width", [("primary", 1280), ("primary", 390), ("secondary", 390)])
def test_sidebar_toggles_work(page, site_url, side, width):
    page.set_viewport_size({"width": width, "height": 900})
    page.goto(f"{site_url}/book/q04_why_scale_by_sqrt_dk.html", wait_until="networkidle")
    page.locator(f"button.{side}-toggle:visible").first.click()
    page.wait_for_timeout(300)
    assert page.evaluate(f"!!document.querySelector('{TOGGLED[side]}')"), (
        f"the {side} sidebar toggle did nothing at {width} px"
    )
