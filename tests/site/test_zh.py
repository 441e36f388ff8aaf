"""The Chinese edition (``_build/html/zh``), built from the same pages and the translations in
``locales/zh_CN``: a twin for every English page, linked both ways; Chinese throughout but for
code, outputs, formulas and the works the Sources cite; drawn in the reader's own fonts;
searchable in Chinese. The reader, accessibility and explorer checks of ``test_every_page``
and the weights of ``test_weight`` run on its pages too."""

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from tests.site.conftest import SITE, ZH_SITE, built_pages
from tests.site.test_search import search

ENGLISH_PAGES = built_pages() if SITE.exists() else []
CJK = re.compile(r"[\u3400-\u9fff\u3000-\u303f\uff00-\uffef]")
WORD = re.compile(r"\b[A-Za-z]{2,}\b")
SWITCH = re.compile(r'<a class="btn aqa-language" href="([^"]+)" hreflang="([^"]+)"')


def twin(path: str) -> str:
    return f"zh/{path}"


def switch_target(page: Path) -> tuple[Path, str]:
    found = SWITCH.search(page.read_text())
    assert found, f"{page}: no link to the other edition"
    return (page.parent / found.group(1)).resolve(), found.group(2)


@pytest.fixture(scope="module", autouse=True)
def chinese_site_built():
    if not (ZH_SITE / "index.html").exists():
        pytest.fail(f"no Chinese site at {ZH_SITE}: run `make book` first")


def test_every_page_has_a_chinese_twin_and_each_links_to_the_other():
    for path in ENGLISH_PAGES:
        english, chinese = SITE / path, SITE / twin(path)
        assert chinese.exists(), f"{path} has no Chinese page"
        if path == "index.html":  # the root only sends the reader on to the intro
            continue
        assert switch_target(english) == (chinese.resolve(), "zh-CN"), path
        assert switch_target(chinese) == (english.resolve(), "en"), twin(path)


class Prose(HTMLParser):
    """The text of each paragraph, list item, cell, heading and summary of a page's article,
    leaving out code, printed output, formulas, explorer panels and the Sources list."""

    BLOCKS = {"p", "li", "td", "th", "h1", "h2", "h3", "h4", "summary", "dt", "dd"}
    SKIPPED_CLASSES = {"highlight", "output", "cell_output", "math", "aqa-explorer", "aqa-measured"}
    SKIPPED_TAGS = {"pre", "code", "svg", "script", "style", "mjx-container"}
    VOID = {"br", "img", "hr", "input", "meta", "link", "source", "wbr", "use", "path"}

    def __init__(self):
        super().__init__()
        self.stack: list[tuple[str, bool]] = []  # (tag, skipped)
        self.in_article = 0
        self.blocks: list[list[str]] = []
        self.heading = ""
        self.in_sources = False

    @property
    def skipping(self) -> bool:
        return any(skipped for _, skipped in self.stack)

    def handle_starttag(self, tag, attrs):
        if tag in self.VOID:
            return
        attrs = dict(attrs)
        classes = set((attrs.get("class") or "").split())
        skipped = tag in self.SKIPPED_TAGS or bool(classes & self.SKIPPED_CLASSES)
        if tag == "article":
            self.in_article += 1
        in_cell = any(t in ("td", "th") for t, _ in self.stack)  # a cell's <p> is the cell
        self.stack.append((tag, skipped))
        if tag in self.BLOCKS and self.in_article and not self.skipping and not in_cell:
            self.blocks.append([tag])

    def handle_endtag(self, tag):
        while self.stack:
            open_tag, _ = self.stack.pop()
            if open_tag == tag:
                break
        if tag == "article":
            self.in_article -= 1
        if tag == "h2" and self.blocks and self.blocks[-1][0] == "h2":
            self.in_sources = "参考文献" in "".join(self.blocks[-1][1:])

    def handle_data(self, data):
        if self.in_article and not self.skipping and self.blocks and not self.in_sources:
            self.blocks[-1].append(data)


def english_paragraphs(page_html: str, cells: bool = True) -> list[str]:
    """Blocks of the article (table cells too, if ``cells``) with several English words and
    not one Chinese character."""
    parser = Prose()
    parser.feed(page_html)
    found = []
    for tag, *texts in parser.blocks:
        if tag == "td" and not cells:
            continue
        text = " ".join("".join(texts).split())
        if not CJK.search(text) and len(WORD.findall(text)) >= 6:
            found.append(f"<{tag}> {text[:100]}")
    return found


@pytest.mark.parametrize("path", [p for p in ENGLISH_PAGES if p != "index.html"])
def test_the_chinese_page_is_in_chinese_and_in_the_readers_fonts(path):
    page_html = (SITE / twin(path)).read_text()
    assert '<html lang="zh-CN"' in page_html
    assert "zh.css" in page_html and "cjk.css" not in page_html, "the English font's stylesheet"
    assert ".woff2" not in page_html
    # the glossary's English column stays English, by design
    left = english_paragraphs(page_html, cells=not path.endswith("glossary.html"))
    assert not left, f"{twin(path)}: paragraphs in English\n" + "\n".join(left)


def test_the_check_for_english_paragraphs_finds_them():
    page_html = (
        "<article><h2>为什么</h2>"
        "<p>这一段是中文，含 $d_k$ 与 <code>softmax over the keys of it</code>。</p>"
        "<p>This paragraph was left in English by a stale translation file.</p>"
        '<div class="cell_output"><pre>printed output stays in English always</pre></div>'
        "<h2>参考文献</h2><ul><li>Vaswani et al. (2017). Attention Is All You Need.</li></ul>"
        "</article>"
    )
    assert english_paragraphs(page_html) == [
        "<p> This paragraph was left in English by a stale translation file."
    ]


@pytest.mark.parametrize(
    "query, expected",
    [
        ("掩码", {"book/q07_masks.html", "book/glossary.html"}),
        ("填充掩码", {"book/q07_masks.html"}),
        ("注意力", {"book/q01_what_is_attention.html", "book/q10_multi_head_attention.html"}),
        ("缩放点积注意力", {"book/q02_formula_and_shapes.html"}),
    ],
)
def test_chinese_search_finds_words_inside_compounds(page, site_url, query, expected):
    found = {r["page"] for r in search(page, f"{site_url}/zh", query)}
    assert expected <= found, f"{query!r}: found {sorted(found)}"


def test_the_chinese_page_draws_with_the_readers_chinese_font(page, site_url):
    page.goto(f"{site_url}/zh/book/q04_why_scale_by_sqrt_dk.html", wait_until="networkidle")
    family = page.evaluate("() => getComputedStyle(document.body).fontFamily")
    assert "Noto Sans CJK SC" in family and "Microsoft YaHei" in family, family
    assert not [url for url in page.requested if ".woff2" in url and "noto-sans-sc" in url]
