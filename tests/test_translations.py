"""The Chinese edition's translation files (locales/zh_CN/LC_MESSAGES): every entry of every
page and of the explorers' table translated, none fuzzy, and none losing a formula, a code
span, a link, a tag or a number's place. The strict Chinese build fails on a paragraph whose
entry is missing (``_ext/book_languages.untranslated``); these name the file and entry."""

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(ROOT / "_ext"))

import book_languages  # noqa: E402
import translations  # noqa: E402

FILES = sorted(translations.LOCALE.rglob("*.po"))
PAGES = sorted((ROOT / "book").glob("*.ipynb")) + sorted((ROOT / "book").glob("*.md"))


def test_every_page_has_its_translation_file():
    have = {p.stem for p in (translations.LOCALE / "book").glob("*.po")}
    assert {p.stem for p in PAGES} <= have
    assert translations.EXPLORERS in FILES


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_every_entry_is_translated_and_none_is_fuzzy(path):
    left = [
        f"entry {i} ({'fuzzy' if m.fuzzy else 'empty'}): {m.id[:70]!r}"
        for i, m in enumerate(translations.messages(translations.load(path)))
        if translations.pending(m)
    ]
    assert not left, f"{path.name}: {len(left)} not translated\n" + "\n".join(left[:20])


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_no_translation_loses_a_formula_code_link_or_number(path, capsys):
    assert translations.check([path]) == 0, capsys.readouterr().out


def test_the_check_catches_what_a_translation_loses():
    source = "Divide by $\\sqrt{d_k}$ in `sdpa` ([q04](q04.ipynb)), {0} heads, **bold**."
    good = "在 `sdpa` 中除以 $\\sqrt{d_k}$（[q04](q04.ipynb)），{0} 个头，**粗体**。"
    assert translations.problems(source, good) == []
    assert translations.problems(source, good.replace("$\\sqrt{d_k}$", "√dₖ"))  # a formula
    assert translations.problems(source, good.replace("`sdpa`", "sdpa"))  # code
    assert translations.problems(source, good.replace("(q04.ipynb)", "(q05.ipynb)"))  # link
    assert translations.problems(source, good.replace("{0}", "8"))  # a number's place
    assert translations.problems(source, good.replace("**粗体**", "**粗体"))  # bold left open
    # ** inside code is not bold
    assert translations.problems("`d**-0.5`", "`d**-0.5`") == []


@pytest.mark.parametrize(
    "pagename, language, link",
    [
        ("book/q04_x", None, "../zh/book/q04_x.html"),
        ("book/q04_x", "zh_CN", "../../book/q04_x.html"),
        ("index", None, "zh/index.html"),
        ("index", "zh_CN", "../index.html"),
    ],
)
def test_each_page_links_to_itself_in_the_other_edition(pagename, language, link):
    assert book_languages.other_edition(pagename, language) == link
    page = '<div class="article-header-buttons">\n<button></button>'
    switched = book_languages.language_switch(page, pagename, language)
    assert f'href="{link}"' in switched and switched.count("aqa-language") == 1
