"""Chinese text is marked lang="zh-CN" on every page, and drawn upright with the Chinese font
the site ships (not a font of the reader's machine).

``check_chinese`` runs on every page in ``test_site.py``, which loads each page once for
all of its per-page checks."""

import functools

import pytest

from tests.site.conftest import SITE

FAMILY = "Book Noto Sans SC"
# What the site marks as Chinese: Han, CJK punctuation, full-width forms (_ext/book_cjk.py).
CJK = r"\u2e80-\u2fdf\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\ufe30-\ufe4f\uff00-\uffef"


@functools.cache
def shipped_characters(weight: int) -> set[str]:
    from fontTools.ttLib import TTFont

    font = TTFont(SITE / "_static" / "fonts" / f"noto-sans-sc-book-{weight}.woff2")
    return {chr(code) for code in font.getBestCmap()}


UNMARKED_JS = r"""() => {
  const chinese = new RegExp('[CJK]');
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const unmarked = [];
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (!chinese.test(node.data) || node.parentElement.closest('script, style')) continue;
    const marked = node.parentElement.closest('[lang]');
    if (!marked || !marked.lang.startsWith('zh')) unmarked.push(node.data.trim().slice(0, 40));
  }
  return unmarked;
}""".replace("CJK", CJK)

STYLE_JS = """() => [...document.querySelectorAll('[lang="zh-CN"]')].map(el => {
  const style = getComputedStyle(el);
  return {text: el.textContent, family: style.fontFamily, style: style.fontStyle,
          weight: Number(style.fontWeight), synthesis: style.fontSynthesis,
          shown: el.getClientRects().length > 0};
})"""


def check_chinese(page, path: str) -> None:
    """On a loaded page: every piece of Chinese is marked, upright, in the shipped font (the
    bold face for bold text), and that font has loaded."""
    assert page.evaluate(UNMARKED_JS) == [], f"{path}: Chinese without lang=zh-CN"
    spans = page.evaluate(STYLE_JS)
    for span in spans:
        assert span["family"].startswith(f'"{FAMILY}"'), span
        assert span["style"] == "normal", f"{path}: slanted Chinese {span}"
        # Bold text (600 and up) is drawn from the bold face, the rest from the regular one.
        weight = 700 if span["weight"] >= 600 else 400
        missing = set(span["text"]) - shipped_characters(weight)
        assert not missing or not span["shown"], (
            f"{path}: {''.join(sorted(missing))} not in the {weight} font: "
            "run `python scripts/make_cjk_font.py`"
        )
    if any(span["shown"] for span in spans):
        page.evaluate("() => document.fonts.ready.then(() => true)")
        faces = page.evaluate(
            "() => [...document.fonts].filter(f => f.family.replace(/\"/g, '') === "
            f"'{FAMILY}').map(f => [f.weight, f.status])"
        )
        assert ["400", "loaded"] in faces, f"{path}: the shipped font did not load: {faces}"


def _platform_fonts(page, selector: str) -> list[dict]:
    """The fonts Chromium actually drew a node's text with (DevTools' "Rendered Fonts")."""
    cdp = page.context.new_cdp_session(page)
    cdp.send("DOM.enable")
    cdp.send("CSS.enable")
    root = cdp.send("DOM.getDocument")["root"]["nodeId"]
    node = cdp.send("DOM.querySelector", {"nodeId": root, "selector": selector})["nodeId"]
    return cdp.send("CSS.getPlatformFontsForNode", {"nodeId": node})["fonts"]


@pytest.mark.parametrize(
    "path, selector",
    [
        ("book/q07_masks.html", "main p em [lang='zh-CN']"),  # the subtitle, in emphasis
        ("book/glossary.html", "main section h1 [lang='zh-CN']"),  # a bold heading
    ],
)
def test_chinese_is_rendered_with_the_web_font(page, site_url, path, selector):
    page.goto(f"{site_url}/{path}", wait_until="networkidle")
    page.evaluate("() => document.fonts.ready.then(() => true)")
    fonts = _platform_fonts(page, selector)
    assert fonts, f"{path}: {selector} not drawn"
    assert all(f["isCustomFont"] and "CJK SC" in f["familyName"] for f in fonts), fonts
