"""Full explorer panels put into the site at build time (_ext/book_frames.py): the right
builder for each saved panel, rendered once and then read from the cache."""

import re
import sys
from pathlib import Path

import nbformat
import pytest
from sphinx.errors import ExtensionError

from attention_qa.explorers import BY_CHAPTER
from attention_qa.explorers.attention_bugs import attention_bug_explorer

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "_ext"))

import book_frames  # noqa: E402

DOCNAME = "book/q06_implement_self_attention"


def test_every_page_maps_to_its_chapter_key():
    stems = [p.stem for p in (ROOT / "book").glob("*.ipynb")]
    keys = {book_frames.chapter_key(f"book/{stem}") for stem in stems}
    assert keys == set(BY_CHAPTER)


@pytest.mark.parametrize("path", sorted((ROOT / "book").glob("*.ipynb")), ids=lambda p: p.stem)
def test_every_saved_panel_is_found_among_its_pages_builders(path):
    """The saved default-only panels name, by id, an explorer the build can rebuild."""
    ids = [
        found
        for cell in nbformat.read(path, as_version=4).cells
        for output in cell.get("outputs", [])
        for found in book_frames.PANEL_ID.findall(output.get("data", {}).get("text/html", ""))
    ]
    builders = BY_CHAPTER[book_frames.chapter_key(f"book/{path.stem}")]
    assert ids == [builder().uid for builder in builders]


def test_the_full_panel_is_the_explorers_and_is_rendered_once(tmp_path):
    explorer = attention_bug_explorer()
    html = book_frames.full_panel(DOCNAME, explorer.uid, tmp_path)
    assert html == explorer.to_html(all_frames=True)
    assert book_frames.DEFAULT_ONLY not in html
    (cached,) = tmp_path.iterdir()
    assert re.fullmatch(r"attention_qa\.explorers\.attention_bugs\.attention_bug_explorer-\w{16}"
                        r"\.html", cached.name)  # fmt: skip

    def not_again():
        raise AssertionError("rendered again although cached")

    not_again.__module__ = attention_bug_explorer.__module__
    not_again.__name__ = attention_bug_explorer.__name__
    assert book_frames.cached_panel(not_again, tmp_path) == html


def test_a_panel_no_builder_makes_stops_the_build_with_its_page(tmp_path):
    with pytest.raises(ExtensionError, match=r"q06_implement_self_attention.*aqa-0000000000"):
        book_frames.full_panel(DOCNAME, "aqa-0000000000", tmp_path)


def test_pages_with_explorers_are_read_again_when_the_package_changes():
    env = type("Env", (), {})()
    env.found_docs = {"book/intro", "book/q04_why_scale_by_sqrt_dk", "book/playground"}
    first = book_frames.outdated_with_the_package(None, env, set(), set(), set())
    assert sorted(first) == ["book/playground", "book/q04_why_scale_by_sqrt_dk"]
    assert book_frames.outdated_with_the_package(None, env, set(), set(), set()) == []
    env.aqa_frames_fingerprint = "an older package"
    assert len(book_frames.outdated_with_the_package(None, env, set(), set(), set())) == 2


def test_a_font_the_pictures_need_and_matplotlib_lacks_stops_the_build(monkeypatch):
    from attention_qa.panel import i18n

    book_frames.require_fonts("zh_CN")  # the machine that builds the book has them
    monkeypatch.setitem(i18n.FONTS, "zh_CN", ["DejaVu Sans", "No Such Font SC"])
    with pytest.raises(ExtensionError, match="'No Such Font SC', which matplotlib cannot find"):
        book_frames.require_fonts("zh_CN")
