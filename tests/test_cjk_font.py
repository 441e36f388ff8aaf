"""The site's Chinese font (a cut of Noto Sans CJK SC) covers every Chinese character in
the book, and ships with its licence. After adding Chinese to a chapter, run
`python scripts/make_cjk_font.py`."""

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("make_cjk_font", ROOT / "scripts/make_cjk_font.py")
make_cjk_font = importlib.util.module_from_spec(spec)
spec.loader.exec_module(make_cjk_font)


@pytest.mark.parametrize(
    "weight, needed",
    [(400, make_cjk_font.book_characters), (700, make_cjk_font.bold_characters)],
    ids=["regular", "bold"],
)
def test_the_committed_font_covers_every_chinese_character(weight, needed):
    characters = needed()
    assert characters, "the book has no Chinese?"
    missing = characters - make_cjk_font.font_characters(make_cjk_font.font_path(weight))
    assert not missing, (
        f"{''.join(sorted(missing))} not in {make_cjk_font.font_path(weight).name}: "
        "run `python scripts/make_cjk_font.py`"
    )


def test_the_font_is_small_and_licensed():
    for weight in (400, 700):
        assert make_cjk_font.font_path(weight).stat().st_size <= 150_000
    licence = (make_cjk_font.FONTS / "OFL.txt").read_text()
    assert "SIL OPEN FONT LICENSE Version 1.1" in licence and "Adobe" in licence
