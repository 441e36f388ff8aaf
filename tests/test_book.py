"""Every chapter keeps the house anatomy and links to its neighbours."""

import re
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
SECTIONS = [
    "## Short answer",
    "## Why",
    "## See it",
    "## Check it",
    "## Common mistakes",
    "## Exercise",
    "## Summary",
]


def chapters_in_toc_order() -> list[str]:
    return re.findall(r"file:\s*book/(q\d\d_\w+)", (ROOT / "_toc.yml").read_text())


CHAPTERS = chapters_in_toc_order()


def test_toc_lists_every_chapter_once_and_only_existing_ones():
    on_disk = sorted(p.stem for p in (ROOT / "book").glob("q*.ipynb"))
    assert sorted(CHAPTERS) == on_disk


@pytest.mark.parametrize("stem", CHAPTERS)
def test_anatomy(stem):
    cells = nbformat.read(ROOT / "book" / f"{stem}.ipynb", as_version=4).cells
    title = cells[0].source.splitlines()
    assert title[0].startswith(f"# {stem[:3]} · "), title[0]
    assert any(re.search(r"[\u4e00-\u9fff]", line) for line in title[1:]), "no Chinese subtitle"
    headings = [
        line.strip()
        for c in cells
        if c.cell_type == "markdown"
        for line in c.source.splitlines()
        if line.startswith("## ")
    ]
    positions = [next((i for i, h in enumerate(headings) if h == s), None) for s in SECTIONS]
    missing = [s for s, p in zip(SECTIONS, positions, strict=True) if p is None]
    assert not missing, f"{stem} lacks {missing}"
    assert positions == sorted(positions), f"{stem}: sections out of order {headings}"


@pytest.mark.parametrize("stem", CHAPTERS)
def test_the_short_answer_is_sayable_in_thirty_seconds(stem):
    """At most 80 words (about 30 seconds spoken); what does not fit belongs under Why."""
    cells = nbformat.read(ROOT / "book" / f"{stem}.ipynb", as_version=4).cells
    short = next(c.source for c in cells if c.source.startswith("## Short answer"))
    words = re.findall(r"\S+", short.removeprefix("## Short answer"))
    assert len(words) <= 80, f"{stem}: the short answer has {len(words)} words"


@pytest.mark.parametrize("index", range(len(CHAPTERS)), ids=CHAPTERS)
def test_links_to_neighbours(index):
    stem = CHAPTERS[index]
    cells = nbformat.read(ROOT / "book" / f"{stem}.ipynb", as_version=4).cells
    summary = "\n".join(c.source for c in cells if c.cell_type == "markdown").split("## Summary")[
        -1
    ]
    neighbours = CHAPTERS[max(index - 1, 0) : index] + CHAPTERS[index + 1 : index + 2]
    for other in neighbours:
        assert f"{{doc}}`{other}`" in summary, f"{stem}'s summary does not link to {other}"


def test_colour_maps_are_colour_blind_safe():
    """Named colour maps must be perceptually uniform ones that survive colour blindness."""
    safe = {"viridis", "cividis", "magma", "inferno", "plasma"}
    sources = list((ROOT / "src").rglob("*.py")) + list((ROOT / "book").glob("*.ipynb"))
    used = {
        name
        for path in sources
        for name in re.findall(r"""(?:cmap=|colormaps\[)["']([A-Za-z_]+)["']""", path.read_text())
    }
    assert used, "no named colour map found: the pattern is out of date"
    assert used <= safe, f"unsafe colour maps: {sorted(used - safe)}"


def test_static_figures_keep_matplotlib_text_size():
    """Chapters draw their figures at matplotlib's 10 pt, which the site tests scale to the
    column (tests/site/test_reader.py): a smaller font there would go unmeasured."""
    sizes = []
    for path in (ROOT / "book").glob("*.ipynb"):
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.cell_type == "code":
                sizes += [
                    (path.stem, float(size))
                    for size in re.findall(r"(?:fontsize|labelsize|font\.size\W+)=?\s*(\d+)",
                                           cell.source)
                ]
    assert [s for s in sizes if s[1] < 10] == []
