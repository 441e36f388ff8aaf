"""One Chinese term per concept, and the panels' controls named as the Chinese panel shows
them. The terms and their forbidden variants are one table, ``TERMS`` in
scripts/translations.py, which the glossary page shows; the entries where a variant is the
right word are listed one by one, with a reason, in ``TERM_EXCEPTIONS``."""

import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

import translations  # noqa: E402

FILES = sorted(translations.LOCALE.rglob("*.po"))
BOOK = translations.LOCALE / "book"


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_no_translation_uses_a_forbidden_variant(path):
    found = translations.term_report([path])
    assert not found, (
        f"{len(found)} forbidden variants (see TERMS in scripts/translations.py):\n"
        + "\n".join(found[:30])
    )


def test_the_check_catches_a_planted_variant(tmp_path):
    """Each kind of variant, planted in a copy of a real chapter, is named with its file and
    entry; the term itself, its glosses and the listed exceptions are not."""
    source = BOOK / "q07_masks.po"
    planted = tmp_path / source.name
    shutil.copy(source, planted)
    catalog = translations.load(planted)
    entry = translations.messages(catalog)[3]
    entry.string += "得分；K/V 缓存；受访存限制；独热；缩小 4 倍；tile"
    translations.save(planted, catalog)
    found = translations.term_report([planted])
    assert len(found) == 6, found
    assert all(line.startswith("q07_masks.po entry 3 (") for line in found)
    for variant in ["得分", "K/V 缓存", "受访存限制", "独热", "缩小 4 倍", "tile"]:
        assert any(line.endswith(f"{variant!r}") for line in found), variant
    # 拐点 counts only where the English speaks of the ridge
    assert not translations.term_problems({"q07_masks"}, "a turning point", "拐点")
    assert translations.term_problems({"q33"}, "the ridge point", "拐点") == ["拐点"]

    ok = {"q07_masks"}
    assert not translations.term_problems(ok, "the prompt", "提示词（prompt）")
    assert translations.term_problems(ok, "the prompt", "提示") == ["提示"]
    assert not translations.term_problems(ok, "a hint", "提示")  # 提示 is also a hint
    assert not translations.term_problems(ok, "prefill", "预填充（prefill）")
    assert not translations.term_problems(ok, "in tiles", "以块（tile）计，每块")
    assert not translations.term_problems(ok, "x", "`prefill` 与 `tile`")  # code is code
    assert not translations.term_problems(ok, "how many times more", "是多少倍？")
    assert not translations.term_problems(ok, "router", "路由器（门控网络）")
    assert translations.term_problems(ok, "router", "门控网络") == ["门控网络"]


def test_an_exception_covers_only_its_own_entry():
    where, start, variant, _ = translations.TERM_EXCEPTIONS[0]
    assert not translations.term_problems({where}, start + " …", variant)
    assert translations.term_problems({where}, "Another sentence", variant) == [variant]
    assert translations.term_problems({"q01_what_is_attention"}, start, variant) == [variant]


@pytest.mark.parametrize(
    "exception", translations.TERM_EXCEPTIONS, ids=lambda e: f"{e[0]}:{e[1][:30]}"
)
def test_every_exception_names_one_entry_that_needs_it(exception):
    """No loose or stale exception: its start names exactly one entry of its catalogue, whose
    translation uses the variant, and it gives a reason."""
    where, start, variant, why = exception
    assert start and why
    entries = [
        m for m in translations.messages(translations.load(BOOK / f"{where}.po"))
        if m.id.startswith(start)
    ]
    assert len(entries) == 1, f"{where}: {start!r} names {len(entries)} entries"
    assert variant in entries[0].string, f"{where}: {start!r} no longer uses {variant}"


def test_the_glossary_shows_the_table_the_check_uses():
    glossary = (ROOT / "book" / "glossary.md").read_text()
    assert translations.glossary_table() in glossary, (
        "book/glossary.md: paste `python scripts/translations.py glossary`"
    )
    router = "| 混合专家，专家，路由器（门控网络） |"
    assert router in glossary


def test_chapters_name_panel_controls_by_their_chinese_labels():
    found = translations.control_problems()
    assert not found, "\n".join(found)


def test_the_control_check_catches_an_english_label(tmp_path):
    """The q07 text quoting the option "padding + causal" must quote the panel's “填充 + 因果”."""
    (tmp_path / "book").mkdir()
    shutil.copy(translations.EXPLORERS, tmp_path / "explorers.po")
    chapter = tmp_path / "book" / "q07_masks.po"
    shutil.copy(BOOK / "q07_masks.po", chapter)
    assert translations.control_problems(tmp_path) == []
    catalog = translations.load(chapter)
    entry = next(m for m in translations.messages(catalog) if '"padding + causal"' in m.id)
    assert "“填充 + 因果”" in entry.string
    entry.string = entry.string.replace("“填充 + 因果”", "“padding + causal”（填充 + 因果）")
    translations.save(chapter, catalog)
    found = translations.control_problems(tmp_path)
    assert len(found) == 1 and found[0].startswith("q07_masks.po entry ")
    assert '"padding + causal" is “填充 + 因果”' in found[0]
