"""The site's search: Chinese words found inside compounds, English as before, and result
snippets in plain text (no TeX)."""

import re
from urllib.parse import quote

import pytest

from tests.site.test_chinese import UNMARKED_JS

RESULTS_JS = """() => [...document.querySelectorAll('#search-results ul.search li')].map(li => ({
  page: li.querySelector('a').getAttribute('href').split('#')[0],
  snippet: (li.querySelector('p.context') || {textContent: ''}).textContent,
}))"""
# TeX left in text: \\( \\) \\[ \\] or a command such as \\frac, \\sqrt, \\operatorname.
TEX = re.compile(r"\\[()\[\]]|\\[A-Za-z]{2,}\b|\$\$")


def search(page, site_url, query: str) -> list[dict]:
    page.goto(f"{site_url}/search.html?q={quote(query)}", wait_until="networkidle")
    page.wait_for_function(  # the summary in English, or in the Chinese edition
        "() => /found \\d+ page|did not match|匹配到 \\d+ 页|没有匹配到/.test("
        "document.querySelector('#search-results .search-summary')?.textContent || '')",
        timeout=30_000,
    )
    count = page.locator("#search-results ul.search li").count()
    if count:  # snippets arrive one page at a time, after the list
        page.wait_for_function(
            f"() => document.querySelectorAll('#search-results p.context').length >= {count}",
            timeout=30_000,
        )
    return page.evaluate(RESULTS_JS)


@pytest.mark.parametrize(
    "query, expected",
    [
        ("掩码", {"book/q07_masks.html", "book/glossary.html"}),
        ("填充掩码", {"book/q07_masks.html"}),
        ("因果掩码", {"book/q07_masks.html"}),
        ("KV cache", {"book/q09_generation_kv_cache.html", "book/glossary.html"}),
        ("causal mask", {"book/q07_masks.html", "book/q08_causal_training.html"}),
    ],
)
def test_search_finds_the_right_pages(page, site_url, query, expected):
    found = {result["page"] for result in search(page, site_url, query)}
    assert expected <= found, f"{query!r}: found {sorted(found)}"
    assert page.evaluate(UNMARKED_JS) == [], "Chinese in the results without lang=zh-CN"


@pytest.mark.parametrize("query", ["d_k", "softmax", "variance", "attention formula", "掩码"])
def test_snippets_are_plain_text(page, site_url, query):
    results = search(page, site_url, query)
    assert results, f"nothing found for {query!r}"
    tex = {r["page"]: TEX.findall(r["snippet"]) for r in results if TEX.search(r["snippet"])}
    assert not tex, f"{query!r}: snippets with TeX {tex}"
    assert page.console_errors == [], page.console_errors
