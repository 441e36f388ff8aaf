"""Every chapter keeps the house anatomy and links to its neighbours, and every notebook
opens the same in JupyterLab, Colab, VS Code and GitHub as in the site."""

import copy
import re
import sys
from pathlib import Path

import nbformat
import pytest
from ipykernel.ipkernel import IPythonKernel

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
from execute_notebooks import kernelspec  # noqa: E402
from open_anywhere import open_page, raw_myst, setup_source, transform  # noqa: E402

NOTEBOOKS = sorted((ROOT / "book").glob("*.ipynb"))
SECTIONS = [
    "## Short answer",
    "## Why",
    "## See it",
    "## Check it",
    "## Common mistakes",
    "## Exercise",
    "## What they ask next",
    "## Summary",
    "## Sources",
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
    assert headings[-1] == "## Sources", f"{stem}: Sources must be the last section"


@pytest.mark.parametrize("stem", CHAPTERS)
def test_a_chapter_takes_only_its_panel_from_an_explorer_module(stem):
    """Explorers are thin panels over lesson modules: a chapter imports the panel itself
    (``*_explorer``) from ``attention_qa.explorers`` and every constant or helper it computes
    with from a lesson module."""
    source = (ROOT / "book" / f"{stem}.ipynb").read_text()
    imported = re.findall(r"from attention_qa\.explorers[\w.]* import ([\w, ]+)", source)
    names = [name.strip() for group in imported for name in group.split(",")]
    assert all(name.endswith("_explorer") for name in names), f"{stem} imports {names}"


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
        assert f"]({other}.ipynb)" in summary, f"{stem}'s summary does not link to {other}"


def test_raw_markup_is_recognised():
    """What a renderer without MyST prints as written is found; what all of them render is not."""
    shown_raw = [
        "see {doc}`q03_step_by_step`",
        "{math}`x^2`",
        ":::{dropdown} Answer\nyes\n:::",
        "```{note}\nhi\n```",
        "  ::::{admonition} Tip",
    ]
    rendered = [
        "$\\sqrt{d_k}$ and $$QK^\\top$$",
        "<details>\n<summary>Answer</summary>\n\nyes\n\n</details>",
        "[q03](q03_step_by_step.ipynb)",
        "```python\nx = 1\n```",
        "`{x}` is a set, `d[k]` an item",
    ]
    assert all(raw_myst(text) for text in shown_raw)
    assert not any(raw_myst(text) for text in rendered)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_no_markup_shows_raw_outside_the_site(path):
    """Roles, directives and colon fences show as raw text in JupyterLab, Colab, VS Code and
    GitHub; answers fold with <details>, links are Markdown links to notebook files."""
    cells = nbformat.read(path, as_version=4).cells
    raw = [piece for c in cells if c.cell_type == "markdown" for piece in raw_myst(c.source)]
    assert not raw, f"{path.name} shows raw outside the site: {raw}"


@pytest.mark.parametrize("path", sorted((ROOT / "book").glob("*.md")), ids=lambda p: p.stem)
def test_site_pages_link_with_markdown_links(path):
    """GitHub and editors show the intro, glossary and teachers' guide as plain Markdown: a
    {doc} role would print raw there, a Markdown link to the page's file works in both."""
    text = path.read_text()
    assert open_page(text) == text, f"{path.name}: run scripts/open_anywhere.py"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_is_open_anywhere(path):
    """scripts/open_anywhere.py has nothing left to do: answers in <details>, links to files,
    and right after the title the setup cell that pins attention_qa.__version__."""
    nb = nbformat.read(path, as_version=4)
    opened = copy.deepcopy(nb)
    transform(opened)
    assert opened == nb, f"{path.name}: run scripts/open_anywhere.py, then make execute"
    assert nb.cells[1].source == setup_source()


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_no_saved_output_is_a_warning(path):
    """A warning (a font fallback, a deprecation) never sits silently in a saved output: it
    would show in the site, and nbval on a machine without it would fail with no word why."""
    cells = nbformat.read(path, as_version=4).cells
    written = [
        f"cell {index}: {output.text.strip()[:200]}"
        for index, cell in enumerate(cells)
        for output in cell.get("outputs", [])
        if output.output_type == "stream"
        and (output.name == "stderr" or re.search(r"\w+Warning:|findfont", output.text))
    ]
    assert not written, f"{path.name} saved warnings: {written}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_saved_with_the_metadata_jupyterlab_writes(path):
    """Opening a notebook in Lab and saving it must change nothing: the file carries exactly the
    kernelspec and language_info Lab fills in, in nbformat 4.4 (cells without ids), which
    Lab keeps. Only language_info.version, the kernel's Python, may name another 3.11.x."""
    nb = nbformat.read(path, as_version=4)
    assert (nb.nbformat, nb.nbformat_minor) == (4, 4)
    assert set(nb.metadata) == {"kernelspec", "language_info"}
    assert nb.metadata.kernelspec == kernelspec()
    language_info = dict(nb.metadata.language_info)
    version = language_info.pop("version")
    expected = dict(IPythonKernel.language_info)
    assert language_info == {k: v for k, v in expected.items() if k != "version"}
    assert version.rsplit(".", 1)[0] == expected["version"].rsplit(".", 1)[0]
    assert not any("id" in cell for cell in nb.cells)


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
