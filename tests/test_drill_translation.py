"""The drill pages (book/drill_part*.md, made by scripts/make_drill.py) repeat the chapters'
short answers and follow-ups: each repeated sentence has the chapter's translation, which
``python scripts/translations.py drill`` copies over (the chapter is the source of truth)."""

import filecmp
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

import translations  # noqa: E402


def test_every_drill_entry_has_its_chapters_translation():
    chapters = translations.chapter_translations()
    different = [
        f"{path.name} entry {i} ({message_id[:60]!r}): chapter has {chapters[message_id][:50]!r}"
        for path, i, message_id in translations.drill_differences()
    ]
    assert not different, (
        f"{len(different)} drill entries differ from their chapter; run "
        "`python scripts/translations.py drill`\n" + "\n".join(different[:30])
    )


def test_the_drill_command_copies_the_chapter_and_is_idempotent(tmp_path, monkeypatch, capsys):
    locale = tmp_path / "LC_MESSAGES"
    shutil.copytree(translations.LOCALE, locale)
    monkeypatch.setattr(translations, "LOCALE", locale)
    chapter = locale / "book" / "q14_mqa_gqa.po"
    drills = sorted((locale / "book").glob("drill*.po"))
    in_drill = {m.id for path in drills for m in translations.messages(translations.load(path))}
    catalog = translations.load(chapter)
    entry = next(m for m in translations.messages(catalog) if m.id in in_drill)
    entry.string += "（改）"
    translations.save(chapter, catalog)

    assert translations.drill_differences() and translations.sync_drill() >= 1
    assert translations.drill_differences() == []
    original = ROOT / "locales" / "zh_CN" / "LC_MESSAGES" / "book"
    changed = [p for p in drills if not filecmp.cmp(p, original / p.name, shallow=False)]
    assert len(changed) >= 1
    for path in changed:
        strings = {m.id: m.string for m in translations.messages(translations.load(path))}
        assert strings.get(entry.id, entry.string) == entry.string
    before = {p: p.read_bytes() for p in drills}
    capsys.readouterr()
    assert translations.sync_drill() == 0 and capsys.readouterr().out == ""
    assert {p: p.read_bytes() for p in drills} == before


def test_an_unchanged_drill_file_is_left_byte_for_byte(tmp_path, monkeypatch):
    """The command writes only the files it changes, as sphinx-intl writes them (width 100)."""
    locale = tmp_path / "LC_MESSAGES"
    shutil.copytree(translations.LOCALE, locale)
    monkeypatch.setattr(translations, "LOCALE", locale)
    assert translations.sync_drill() == 0
    for path in sorted((locale / "book").glob("drill*.po")):
        original = ROOT / "locales" / "zh_CN" / "LC_MESSAGES" / "book" / path.name
        assert path.read_bytes() == original.read_bytes()
        again = tmp_path / path.name  # and a file it did write reads back to the same bytes
        translations.save(again, translations.load(path))
        assert again.read_bytes() == path.read_bytes()
