"""Each Chinese page has its English twin's structure: the same folded answers (folded, with
their summaries), tables, figures, maths, explorers, headings, list items and code blocks,
and no markup leaking through translation as text (a stray ``::`` where a folded answer
was, a Markdown fence, a MyST directive). Read from the built files, no browser.

And everything that has a name for a screen reader in English has one in Chinese: each link,
heading, summary, button, label and table header keeps some text (or an image's alt text),
and each alt text and aria-label stays non-empty. With the same elements, classes and
stylesheets, that is what the translation could change of what axe checks on the English
page, so the page tests run axe on the English pages only."""

import re
from collections import Counter
from html.parser import HTMLParser

import pytest

from tests.site.conftest import SITE, ZH_SITE, built_pages

ENGLISH_PAGES = built_pages() if SITE.exists() else []

# what is counted in the article: a name for the report → does this start tag count?
PARTS = {
    "folded answers": lambda tag, a: tag == "details",
    "answers shown unfolded": lambda tag, a: tag == "details" and "open" in a,
    "summaries": lambda tag, a: tag == "summary",
    "tables": lambda tag, a: tag == "table",
    "table cells": lambda tag, a: tag in ("td", "th"),
    "figures": lambda tag, a: tag == "img",
    "inline maths": lambda tag, a: tag == "span" and "math" in a.get("class", "").split(),
    "display maths": lambda tag, a: tag == "div" and "math" in a.get("class", "").split(),
    "explorers": lambda tag, a: "aqa-explorer" in a.get("class", "").split(),
    "headings": lambda tag, a: re.fullmatch(r"h[1-6]", tag) is not None,
    "list items": lambda tag, a: tag == "li",
    "code blocks": lambda tag, a: tag == "pre",
    "links": lambda tag, a: tag == "a" and "href" in a,
}
# elements a screen reader names by their text: each must keep some in translation
NAMED = {"title", "a", "h1", "h2", "h3", "h4", "h5", "h6", "summary", "button", "label", "th"}
# text that only markup left untranslated or mangled produces
LEAKS = re.compile(r"^\s*::\s*$|```|^\s*:::|\{[a-z-]+\}`|</?(details|summary)>", re.M)


class Structure(HTMLParser):
    """Counts the parts of a page's article and collects its text, outside code."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.depth = 0  # inside <article>
        self.code = 0  # inside <pre>
        self.counts = Counter()
        self.texts: list[str] = []
        self.naming: list[list] = []  # the named elements open here: [tag, has a name yet]
        self.mark = 0  # inside a heading's "#" link, which names nothing

    def handle_starttag(self, tag, attrs):
        attrs = {k: v or "" for k, v in attrs}
        if tag in NAMED:
            self.naming.append([tag, False])
        self.mark += "headerlink" in attrs.get("class", "").split()
        for key in ("alt", "aria-label"):  # anywhere on the page, the sidebars too
            if attrs.get(key, "").strip():
                self.counts[f"non-empty {key} texts"] += 1
                self._named()
        if tag == "article":
            self.depth += 1
        if not self.depth:
            return
        self.code += tag == "pre"
        for name, counts in PARTS.items():
            self.counts[name] += counts(tag, attrs)
        for key in ("alt", "aria-label", "title"):
            if key in attrs and tag not in ("a",):
                self.texts.append(attrs[key])

    def handle_endtag(self, tag):
        if tag == "article":
            self.depth -= 1
        self.code -= tag == "pre" and self.code > 0
        if tag in NAMED and self.naming and self.naming[-1][0] == tag:
            self.mark -= self.mark > 0 and tag == "a"
            _, named = self.naming.pop()
            self.counts[f"<{tag}> with a name" if named else f"<{tag}> without a name"] += 1

    def handle_data(self, data):
        if data.strip() and not self.mark:
            self._named()
        if self.depth and not self.code:
            self.texts.append(data)

    def _named(self) -> None:
        for element in self.naming:
            element[1] = True


def structure(html: str) -> Structure:
    parsed = Structure()
    parsed.feed(html)
    return parsed


def _in_order(name: str) -> tuple:
    return (list(PARTS).index(name) if name in PARTS else len(PARTS), name)


def differences(english_html: str, chinese_html: str) -> list[str]:
    """What the Chinese page lacks or adds, in words."""
    english, chinese = structure(english_html), structure(chinese_html)
    found = [
        f"{name}: {english.counts[name]} in English, {chinese.counts[name]} in Chinese"
        for name in sorted(set(english.counts) | set(chinese.counts), key=_in_order)
        if english.counts[name] != chinese.counts[name]
    ]
    for text in chinese.texts:
        if LEAKS.search(text) and not LEAKS.search(" ".join(english.texts)):
            found.append(f"markup printed as text: {text.strip()[:80]!r}")
    return found


@pytest.fixture(scope="module", autouse=True)
def chinese_site_built():
    if not (ZH_SITE / "index.html").exists():
        pytest.fail(f"no Chinese site at {ZH_SITE}: run `make book` first")


@pytest.mark.parametrize("path", ENGLISH_PAGES)
def test_zh_page_has_the_structure_of_its_english_twin(path):
    english = (SITE / path).read_text()
    chinese = (SITE / "zh" / path).read_text()
    found = differences(english, chinese)
    assert not found, f"zh/{path} differs from {path}:\n" + "\n".join(found)


ENGLISH = """<article class="bd-article"><h2>See it</h2><p>Predict.</p>
<details><summary>Answer</summary><p>It is <span class="math">x</span>.</p></details>
<table><tr><td>a</td></tr></table><pre>print(1)</pre></article>"""


def test_zh_parity_check_names_what_differs():
    right = ENGLISH.replace("Answer", "答案").replace("Predict.", "先预测。")
    assert differences(ENGLISH, right) == []
    # the bug this test was written for: the folded answer's opening tag replaced by "::"
    unfolded = right.replace("<details><summary>答案</summary>", "<p>::</p>")
    assert differences(ENGLISH, unfolded) == [
        "folded answers: 1 in English, 0 in Chinese",
        "summaries: 1 in English, 0 in Chinese",
        "<summary> with a name: 1 in English, 0 in Chinese",
        "markup printed as text: '::'",
    ]
    opened = right.replace("<details>", "<details open>")
    assert differences(ENGLISH, opened) == ["answers shown unfolded: 0 in English, 1 in Chinese"]
    no_maths = right.replace('<span class="math">x</span>', "x")
    assert differences(ENGLISH, no_maths) == ["inline maths: 1 in English, 0 in Chinese"]
    fence = right.replace("先预测。", "先预测。```python")
    assert differences(ENGLISH, fence) == ["markup printed as text: '先预测。```python'"]


def test_zh_parity_check_finds_a_name_lost_in_translation():
    english = ('<title>Masks</title><nav><a href="a.html"><img alt="Home"></a></nav><article>'
               '<h2>See it<a class="headerlink" href="#see-it">#</a></h2>'
               '<p><a href="#x">the figure</a></p><button aria-label="Copy"></button></article>')
    right = english.replace("Home", "首页").replace("See it", "演示").replace("the figure", "图")
    right = right.replace("Masks", "掩码")
    right = right.replace("Copy", "复制")
    assert differences(english, right) == []
    assert differences(english, right.replace("演示", " ")) == [  # its "#" link names nothing
        "<h2> with a name: 1 in English, 0 in Chinese",
        "<h2> without a name: 0 in English, 1 in Chinese",
    ]
    assert differences(english, right.replace("掩码", "")) == [
        "<title> with a name: 1 in English, 0 in Chinese",
        "<title> without a name: 0 in English, 1 in Chinese",
    ]
    assert differences(english, right.replace('alt="首页"', 'alt=""')) == [
        "<a> with a name: 2 in English, 1 in Chinese",
        "<a> without a name: 1 in English, 2 in Chinese",  # the first: the heading's "#"
        "non-empty alt texts: 1 in English, 0 in Chinese",
    ]
    assert differences(english, right.replace('aria-label="复制"', 'aria-label=""')) == [
        "<button> with a name: 1 in English, 0 in Chinese",
        "<button> without a name: 0 in English, 1 in Chinese",
        "non-empty aria-label texts: 1 in English, 0 in Chinese",
    ]
