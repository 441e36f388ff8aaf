"""Pages load cleanly and offline, with no missing file (checked on each page's one load in
``test_every_page.py``); maths is typeset at build time (no MathJax script); q04's explorer
responds."""

import re

import pytest


def check_offline_without_errors(page, path: str) -> None:
    """On a loaded page: no console error, no request outside 127.0.0.1, no missing file."""
    assert page.console_errors == [], f"{path}: console errors {page.console_errors}"
    assert page.outside_requests == [], (
        f"{path}: requests outside 127.0.0.1 {page.outside_requests}"
    )
    # Favicon included: a browser asks for /favicon.ico when a page names no icon.
    assert page.failed_responses == [], f"{path}: missing files {page.failed_responses}"


MATHS_JS = """() => {
  const formulas = [...document.querySelectorAll('.math mjx-container[jax=SVG]')];
  const used = formulas.flatMap(f => [...f.querySelectorAll('use')])
    .map(use => use.getAttribute('href'));
  const svg = formulas[0].querySelector('svg');
  return {
    count: formulas.length,
    blocks: document.querySelectorAll('div.math mjx-container[display=true]').length,
    unresolved: used.filter(href => !document.querySelector(href)),
    withoutMathml: formulas.filter(f => !f.querySelector('mjx-assistive-mml math')).length,
    hiddenSvg: formulas.every(f => f.querySelector('svg').getAttribute('aria-hidden') === 'true'),
    fill: getComputedStyle(svg).fill,
    color: getComputedStyle(svg).color,
    width: svg.getBoundingClientRect().width,
  };
}"""


@pytest.mark.parametrize("mode", ["light", "dark"])
def test_maths_is_typeset_without_mathjax(page, site_url, mode):
    """Every formula is SVG drawn in the text colour (so dark mode recolours it), each glyph
    it points at is on the page, MathML beside it is read by screen readers, and no MathJax
    script is loaded."""
    page.context.add_init_script(f"localStorage.setItem('mode', '{mode}')")
    page.goto(f"{site_url}/book/q04_why_scale_by_sqrt_dk.html", wait_until="networkidle")
    assert page.evaluate("document.documentElement.dataset.theme") == mode
    maths = page.evaluate(MATHS_JS)
    assert maths["count"] > 50 and maths["blocks"] >= 1, maths
    assert maths["unresolved"] == [], maths["unresolved"][:5]
    assert maths["withoutMathml"] == 0 and maths["hiddenSvg"], maths
    assert maths["fill"] == maths["color"] and maths["width"] > 5, maths
    brightness = sum(map(int, re.findall(r"\d+", maths["fill"])[:3])) / 3
    assert (brightness > 128) == (mode == "dark"), maths["fill"]
    assert not [url for url in page.requested if "mathjax" in url.lower()]
    assert page.evaluate("typeof window.MathJax") == "undefined"
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


def test_a_request_outside_is_recorded_and_gets_nowhere(page, site_url):
    page.goto(f"{site_url}/book/intro.html", wait_until="load")
    failures = []
    page.on("requestfailed", lambda request: failures.append((request.url, request.failure)))
    outside = ["http://example.com/x.js", "https://93.184.216.34/x.png"]  # a name, an address
    for url in outside:  # no-cors: only a failed connection rejects it, not the answer's origin
        answer = page.evaluate(f"fetch('{url}', {{mode: 'no-cors'}}).then(() => 'answered', "
                               "() => 'failed')")
        assert answer == "failed", url
    assert page.outside_requests == outside
    # refused by the proxy that is not there: never sent, never waited for
    assert failures == [(url, "net::ERR_PROXY_CONNECTION_FAILED") for url in outside]
    with pytest.raises(AssertionError, match="outside 127.0.0.1"):
        page.console_errors = []  # the failed requests' own lines in the console aside
        check_offline_without_errors(page, "book/intro.html")
