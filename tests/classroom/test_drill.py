"""The drill pages are generated from the chapters, listed in the table of contents, and
must not go stale."""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
from make_drill import DRILL, FOLLOW_UPS, chapter_order, parts, render  # noqa: E402


def test_drill_pages_are_up_to_date_and_in_the_table_of_contents():
    pages = render()
    for path, text in pages.items():
        assert path.read_text() == text, f"{path.name} is stale: run `make drill`"
    toc = (ROOT / "_toc.yml").read_text()
    assert all(f"file: book/{path.stem}\n" in toc for path in pages)
    on_disk = sorted((ROOT / "book").glob("drill*.md"))
    assert on_disk == sorted(pages), "a drill page no part of the book has: run `make drill`"
    assert len(pages) == 1 + len(parts())


def test_drill_lists_every_chapter_with_both_languages():
    text = "".join(render().values())
    assert DRILL.read_text().count("](drill_part") == len(parts())
    for chapter in chapter_order():
        assert f"]({chapter.name})" in text
    assert text.count("<summary>Short answer</summary>") == len(chapter_order())
    asked_next = [c for c in chapter_order() if FOLLOW_UPS in c.read_text()]
    assert text.count("<summary>What they ask next</summary>") == len(asked_next)
    assert "为什么" in text
