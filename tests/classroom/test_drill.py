"""The drill page is generated from the chapters, and must not go stale."""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
from make_drill import DRILL, FOLLOW_UPS, chapter_order, render  # noqa: E402


def test_drill_page_is_up_to_date():
    assert DRILL.read_text() == render(), "book/drill.md is stale: run `make drill`"


def test_drill_lists_every_chapter_with_both_languages():
    text = DRILL.read_text()
    for chapter in chapter_order():
        assert f"]({chapter.name})" in text
    assert text.count("<summary>Short answer</summary>") == len(chapter_order())
    asked_next = [c for c in chapter_order() if FOLLOW_UPS in c.read_text()]
    assert text.count("<summary>What they ask next</summary>") == len(asked_next)
    assert "为什么" in text
