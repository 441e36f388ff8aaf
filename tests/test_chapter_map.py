"""CONTRIBUTING.md's map of which files make each chapter is read from the code
(scripts/chapter_map.py): it must be current, and it must find what a chapter is made of."""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import chapter_map  # noqa: E402


def test_the_chapter_map_in_contributing_is_current():
    text = chapter_map.CONTRIBUTING.read_text()
    assert chapter_map.with_map(text) == text, (
        "CONTRIBUTING.md's chapter map is stale: run `.venv/bin/python scripts/chapter_map.py`"
    )


def test_the_map_names_every_chapter_with_its_explorer_checker_and_translation():
    rows = chapter_map.chapter_map().splitlines()[2:]
    assert len(rows) == len(list((ROOT / "book").glob("q[0-9][0-9]_*.ipynb")))
    q14 = next(r for r in rows if r.startswith("| [q14]"))
    # q14's explorer lives in explorers/kv_cache.py, while the lesson module kv_cache.py is q29's
    assert "`kv_cache.kv_cache_explorer`" in q14 and "`multihead`" in q14
    assert "`book/q14_mqa_gqa.po`" in q14
    assert all(row.count("|") == 7 and "check_" in row for row in rows), "a chapter with no checker"


def test_lesson_modules_are_read_from_every_form_of_import():
    code = (
        "if x:\n    %pip install attention-qa\n"
        "from attention_qa import costs, measure\n"
        "from attention_qa.masks import (\n    causal_mask,\n)\n"
        "import attention_qa.positional as P\n"
        "from attention_qa.explorers.masks import mask_explorer\n"
    )
    assert chapter_map.lesson_modules(code) == {"costs", "measure", "masks", "positional"}
