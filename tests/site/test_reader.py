"""What a reader sees, on a phone and a desktop, in light and dark mode.

Every explorer is driven through every value of every control: it never shows a message
unless the message is its lesson, its panel keeps its height, and every frame it fetches
loads. Text in explorer frames and static figures stays at least 9 CSS px at 390 px and
1300 px; no page scrolls sideways on a phone; printed output comes in one block; the panel
follows dark mode; the site works opened from a folder. The per-page checks run on each
page's one load in ``test_every_page.py``.
"""

import pytest

from attention_qa.panel.legibility import DESKTOP_COLUMN_PX, MIN_TEXT_CSS_PX, PHONE_COLUMN_PX
from tests.site.conftest import SITE, built_pages

# index.html only redirects to the first page.
PAGES = [p for p in (built_pages() if SITE.exists() else []) if p != "index.html"]
PAGES_WITH_EXPLORERS = [p for p in PAGES if "aqa-explorer" in (SITE / p).read_text()]
WIDTHS = [390, 1300]
# The room legibility.py assumes an explorer figure has at each width (its checks of every
# frame, without a browser, rely on it).
ASSUMED_COLUMN_PX = {390: PHONE_COLUMN_PX, 1300: DESKTOP_COLUMN_PX}
# Static figures are drawn at matplotlib's 10 pt and 100 dpi (tests/test_book.py keeps them
# there); their text in image pixels:
STATIC_FIGURE_TEXT_PX = 10 * 100 / 72


def _open(browser, url, width, dark=False):
    context = browser.new_context(
        viewport={"width": width, "height": 900}, color_scheme="dark" if dark else "light"
    )
    if dark:
        context.add_init_script("localStorage.setItem('mode', 'dark');")
    page = context.new_page()
    page.errors = []
    page.on("pageerror", lambda err: page.errors.append(str(err)))
    page.goto(url, wait_until="load")
    return context, page


def check_layout(page, path: str, width: int) -> None:
    """At the page's current width: no sideways scroll, text in figures at least 9 CSS px,
    and explorer figures given the room legibility.py assumes."""
    overflow = page.evaluate(
        "document.documentElement.scrollWidth - document.documentElement.clientWidth"
    )
    assert overflow <= 0, f"{path} scrolls {overflow} px sideways at {width} px"
    sizes = page.evaluate(
        """(staticPx) => Array.from(document.querySelectorAll(
               '.aqa-explorer img.aqa-frame, div.cell_output img')).map(img => {
             const px = img.dataset.textPx ? Number(img.dataset.textPx) : staticPx;
             return [img.alt.slice(0, 60), px * img.clientWidth / img.naturalWidth];
           })""",
        STATIC_FIGURE_TEXT_PX,
    )
    small = [(alt, round(px, 1)) for alt, px in sizes if px < MIN_TEXT_CSS_PX]
    assert small == [], f"{path} at {width} px: text under 9 px in {small}"
    room = page.evaluate(
        """() => Array.from(document.querySelectorAll('.aqa-explorer img.aqa-frame'), img => {
             const box = img.parentElement, style = getComputedStyle(box);
             return box.clientWidth - parseFloat(style.paddingLeft)
               - parseFloat(style.paddingRight);
           })"""
    )
    assert min(room, default=ASSUMED_COLUMN_PX[width]) >= ASSUMED_COLUMN_PX[width], (
        f"{path} at {width} px: an explorer figure has {min(room)} px, but "
        f"attention_qa.panel.legibility assumes {ASSUMED_COLUMN_PX[width]} px"
    )


def _drive(page, explorer):
    """Set every value of every control, one control at a time; what each shows."""
    return explorer.evaluate(
        """async (root) => {
             const seen = [];
             const inputs = Array.from(root.querySelectorAll('[data-aqa-control]'));
             const img = root.querySelector('img.aqa-frame');
             for (const input of inputs) {
               const count = input.tagName === 'SELECT' ? input.options.length
                                                        : Number(input.max) + 1;
               for (let k = 0; k < count; k++) {
                 input.value = String(k);
                 input.dispatchEvent(new Event('input', {bubbles: true}));
                 const message = root.querySelector('.aqa-message');
                 if (!message.hidden) {
                   seen.push({message: message.textContent, height: root.offsetHeight,
                              alt: img.alt, figures: []});
                   continue;
                 }
                 await img.decode().catch(() => null);
                 const figures = Array.from(root.querySelectorAll('.aqa-figures li'),
                                            li => li.textContent);
                 seen.push({message: null, height: root.offsetHeight,
                            loaded: img.complete && img.naturalWidth > 0, src: img.src,
                            alt: img.alt, figures: figures});
               }
             }
             return seen;
           }"""
    )


def check_drive(page, path: str) -> None:
    """Every explorer, driven through every value of every control, never dead-ends, keeps
    its height, loads every frame it shows and describes it in the picture's alt text."""
    explorers = page.locator(".aqa-explorer")
    for e in range(explorers.count()):
        explorer = explorers.nth(e)
        keeps_errors = explorer.evaluate(
            "root => JSON.parse(root.querySelector('script.aqa-frames').textContent).keep"
        )
        seen = _drive(page, explorer)
        messages = [s["message"] for s in seen if s["message"] is not None]
        if not keeps_errors:
            assert messages == [], f"{path}: explorer {e} dead-ends: {messages[:2]}"
        heights = {s["height"] for s in seen}
        assert max(heights) - min(heights) <= 24, f"{path}: explorer {e} jumps: {heights}"
        assert all(s["loaded"] for s in seen if s["message"] is None), path
        assert all("/_frames/" in s["src"] for s in seen if s["message"] is None), path
        title = explorer.locator(".aqa-title").inner_text()
        opener = explorer.evaluate(  # " at " in English, "（" in Chinese
            "root => JSON.parse(root.querySelector('script.aqa-frames').textContent).w.open"
        )
        for s in seen:  # the alt text the script composes: the setting, then what it shows
            assert s["alt"].startswith(f"{title}{opener}"), (path, s["alt"])
            shown = [s["message"]] if s["message"] is not None else s["figures"]
            assert all(item in s["alt"] for item in shown), (path, s["alt"], shown)


def _luminance(rgb: str) -> float:
    channels = [int(c) / 255 for c in rgb[rgb.index("(") + 1 : rgb.index(")")].split(",")[:3]]
    linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def _contrast(a: str, b: str) -> float:
    high, low = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


@pytest.mark.parametrize("path", PAGES_WITH_EXPLORERS[:1] + ["book/q04_why_scale_by_sqrt_dk.html"])
def test_the_panel_follows_dark_mode_with_readable_contrast(browser, site_url, path):
    context, page = _open(browser, f"{site_url}/{path}", 1300, dark=True)
    try:
        assert page.evaluate("document.documentElement.dataset.theme") == "dark"
        colours = page.locator(".aqa-explorer").first.evaluate(
            """root => {
                 const style = getComputedStyle(root);
                 const select = root.querySelector('select') || root;
                 const body = getComputedStyle(document.body);
                 return [style.backgroundColor, style.color,
                         getComputedStyle(select).backgroundColor,
                         getComputedStyle(select).color, body.backgroundColor,
                         getComputedStyle(root.parentElement).backgroundColor];
               }"""
        )
        panel_bg, panel_fg, select_bg, select_fg, page_bg, frame_bg = colours
        # No light plate around the panel (the theme puts one under every HTML output).
        assert frame_bg == "rgba(0, 0, 0, 0)", f"the panel sits on a {frame_bg} plate"
        assert _luminance(panel_bg) < 0.1, f"the panel stays light on a dark page: {panel_bg}"
        assert _contrast(panel_bg, panel_fg) >= 7, colours
        assert _contrast(select_bg, select_fg) >= 4.5, colours
    finally:
        context.close()


def test_printed_output_comes_in_one_block_per_stream():
    """Several print calls in a cell make one block, as in Jupyter (nb_merge_streams)."""
    split = []
    for path in PAGES:
        html = (SITE / path).read_text()
        for cell in html.split('<div class="cell_output')[1:]:
            cell = cell.split('<div class="cell')[0]
            if cell.count("output stream highlight-myst-ansi") > 1 or cell.count(
                'class="output stream'
            ) > cell.count("stderr") + 1:
                split.append(path)
    assert split == [], sorted(set(split))


@pytest.mark.parametrize("edition", ["", "zh"])
def test_the_site_works_opened_from_a_folder(browser, edition):
    """file://, no server: the explorer's frames are relative files and load; the link to
    the other edition leads to its page."""
    url = (SITE / edition / "book" / "q04_why_scale_by_sqrt_dk.html").as_uri()
    context = browser.new_context(viewport={"width": 1300, "height": 900})
    page = context.new_page()
    try:
        page.goto(url, wait_until="load")
        other = page.evaluate("() => document.querySelector('a.aqa-language').href")
        twin = SITE / ("" if edition else "zh") / "book" / "q04_why_scale_by_sqrt_dk.html"
        assert other == twin.as_uri(), other
        explorer = page.locator(".aqa-explorer").first
        before = explorer.get_attribute("data-aqa-frame")
        explorer.locator("input[type=range]").first.focus()
        page.keyboard.press("ArrowRight")
        assert explorer.get_attribute("data-aqa-frame") != before
        img = explorer.locator("img.aqa-frame")
        img.evaluate("img => img.decode()")
        assert img.evaluate("img => img.src.startsWith('file:') && img.naturalWidth > 0")
    finally:
        context.close()


@pytest.mark.parametrize("dark", [False, True], ids=["light", "dark"])
def test_a_token_without_its_span_keeps_its_colour(browser, site_url, dark):
    """The build drops the span of a token drawn in the code's own colour (names,
    punctuation): the bare text must come out in exactly the colour its span gave it."""
    context, page = _open(browser, f"{site_url}/book/q04_why_scale_by_sqrt_dk.html", 1300, dark)
    try:
        bare, spanned, output, body = page.evaluate(
            """() => {
                 const pre = document.querySelector('.cell_input div.highlight > pre');
                 const probe = document.createElement('span');
                 probe.className = 'n';
                 pre.appendChild(probe);
                 const out = document.querySelector('div.output div.highlight > pre');
                 return [getComputedStyle(pre).color, getComputedStyle(probe).color,
                         getComputedStyle(out).color,
                         getComputedStyle(document.querySelector('article p')).color];
               }"""
        )
        assert bare == spanned, (bare, spanned)
        assert output == body, (output, body)  # printed output keeps the text colour
    finally:
        context.close()
