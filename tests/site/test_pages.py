"""Size budgets, from what the build and the repository already hold."""

import re
from pathlib import Path

import pytest

from tests.site.conftest import SITE

ROOT = Path(__file__).resolve().parents[2]
MB = 1_000_000
NOTEBOOKS = sorted((ROOT / "book").glob("*.ipynb"))


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.name)
def test_committed_notebook_under_1_mb(notebook):
    assert notebook.stat().st_size <= MB, f"{notebook.name}: {notebook.stat().st_size / MB:.2f} MB"


def test_every_built_page_under_3_mb_and_each_edition_under_60_mb():
    pages = {p: p.stat().st_size for p in SITE.rglob("*.html")}
    assert pages, "no built pages"
    heavy = {str(p.relative_to(SITE)): round(s / MB, 2) for p, s in pages.items() if s > 3 * MB}
    assert not heavy, f"pages over 3 MB: {heavy}"
    chinese = SITE / "zh"
    files = [p for p in SITE.rglob("*") if p.is_file()]
    for edition, inside in (("English", False), ("Chinese", True)):
        total = sum(p.stat().st_size for p in files if p.is_relative_to(chinese) == inside)
        assert total <= 60 * MB, f"the {edition} edition is {total / MB:.1f} MB"


def test_every_chapter_is_in_the_book():
    toc = (ROOT / "_toc.yml").read_text()
    for notebook in NOTEBOOKS:
        assert f"book/{notebook.stem}" in toc, f"{notebook.name} is missing from _toc.yml"
        assert (SITE / "book" / f"{notebook.stem}.html").exists(), f"{notebook.name} was not built"


def test_every_image_has_alt_text_that_describes_it():
    """Alt text must say what a figure shows; a file name or nothing is not a description."""
    bare = []
    for page in SITE.rglob("*.html"):
        for tag in re.findall(r"<img\b[^>]*>", page.read_text()):
            alt = re.search(r'\balt="([^"]*)"', tag)
            if alt is None or len(alt.group(1)) < 20 or alt.group(1).endswith(".png"):
                bare.append(f"{page.relative_to(SITE)}: {tag[:100]}")
    assert not bare, "images without a description:\n" + "\n".join(bare)
