"""Every page loads cleanly and offline; maths is typeset; explorers respond."""

import re

import pytest

from tests.site.conftest import SITE, built_pages

PAGES = built_pages() if SITE.exists() else ["index.html"]


@pytest.mark.parametrize("path", PAGES)
def test_page_loads_offline_without_errors(page, site_url, path):
    page.goto(f"{site_url}/{path}", wait_until="networkidle")
    assert page.console_errors == [], f"{path}: console errors {page.console_errors}"
    assert page.outside_requests == [], (
        f"{path}: requests outside 127.0.0.1 {page.outside_requests}"
    )


def test_maths_is_typeset(page, site_url):
    page.goto(f"{site_url}/book/q04_why_scale_by_sqrt_dk.html", wait_until="networkidle")
    page.wait_for_selector("mjx-container", timeout=20_000)
    assert page.locator("mjx-container").count() > 10
    # No raw TeX is left behind on the page.
    assert "\\sqrt{d_k}" not in page.inner_text("main")


def _figures(explorer) -> str:
    return explorer.locator(".aqa-figures").inner_text()


def test_q04_explorer_responds_to_d_k(page, site_url):
    page.goto(f"{site_url}/book/q04_why_scale_by_sqrt_dk.html", wait_until="networkidle")
    explorer = page.locator(".aqa-explorer").first
    assert explorer.get_attribute("data-aqa-frames") == "99"
    slider = explorer.locator("input[type=range]").first
    frame_before = explorer.get_attribute("data-aqa-frame")
    src_before = explorer.locator("img.aqa-frame").get_attribute("src")
    figures_before = _figures(explorer)
    alt_before = explorer.locator("img.aqa-frame").get_attribute("alt")

    # Unscaled, so that a larger d_k must saturate the softmax.
    explorer.locator("select").first.select_option(label="none")
    slider.focus()
    page.keyboard.press("End")  # d_k = 1024, by keyboard alone

    assert explorer.locator("output").first.inner_text() == "1024"
    assert explorer.get_attribute("data-aqa-frame") != frame_before
    assert explorer.locator("img.aqa-frame").get_attribute("src") != src_before
    figures_after = _figures(explorer)
    assert figures_after != figures_before
    max_weight = float(re.search(r"max weight\s+([0-9.]+)", figures_after).group(1))
    assert max_weight > 0.9, figures_after
    alt_after = explorer.locator("img.aqa-frame").get_attribute("alt")
    assert alt_after != alt_before and "d_k = 1024" in alt_after and "max weight" in alt_after
