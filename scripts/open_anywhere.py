"""Make every notebook in book/ read and run the same wherever it is opened.

Usage: python scripts/open_anywhere.py [--check]
  --check exits 1 (and names the notebooks) when one would change, instead of writing.

JupyterLab, Colab, VS Code and GitHub render a notebook's Markdown without the book's MyST
extensions, so the notebooks keep to what all of them show:
- a folded answer is HTML, ``<details><summary>Answer</summary> … </details>``, which the
  site renders too (styled in ``_static/details.css``), instead of ``:::{dropdown}``;
- a link to another chapter is a Markdown link to its notebook file,
  ``[q03 · …](q03_step_by_step.ipynb)``, which Jupyter follows between files and the site
  turns into a link to the chapter's page, instead of ``{doc}`q03_step_by_step```;
- the cell after the title installs the book's helpers where they are missing (Colab, a
  fresh environment): it pins the release in ``attention_qa.__version__``, the site leaves
  it out (tag ``remove-cell``), and its output, pip's log, is not compared.

The site's own Markdown pages (intro, glossary, teachers' guide) are read on GitHub and in
editors too, so their ``{doc}`` links become Markdown links the same way.

Running it again changes nothing, so it can be re-run after a merge brings in notebooks
written the old way; then ``make execute`` saves their outputs. It fails on any other markup
that a plain Markdown renderer would show raw.
"""

import ast
import re
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
BOOK = ROOT / "book"
SETUP_TAGS = ["remove-cell", "nbval-ignore-output"]
SETUP_TEMPLATE = """\
# Installs the book's helpers where they are missing (Colab, a fresh environment).
import importlib.util

if importlib.util.find_spec("attention_qa") is None:
    %pip install --quiet attention-qa=={version}"""

DROPDOWN = re.compile(r"^:::\{dropdown\}[ \t]*(.*?)[ \t]*\n(.*?)\n:::[ \t]*$", re.M | re.S)
DOC_ROLE = re.compile(r"\{doc\}`(?:([^`<]*?)\s*<([^`>]+)>|([^`]+))`")
# What a renderer without MyST shows as it is written: roles, directives and colon fences
# (a role right after a backtick is a code span's text, as in `{x}`).
RAW_MYST = re.compile(r"(?<!`)\{[\w:.-]+\}`[^`]*`|^\s*(?:```+|:::+)\s*\{[^}]*\}.*$", re.M)


def version() -> str:
    """``__version__`` from the package's source, the one place the version is written."""
    init = (ROOT / "src" / "attention_qa" / "__init__.py").read_text()
    for node in ast.parse(init).body:
        if isinstance(node, ast.Assign) and node.targets[0].id == "__version__":
            return node.value.value
    raise ValueError("src/attention_qa/__init__.py sets no __version__")


def setup_source() -> str:
    return SETUP_TEMPLATE.format(version=version())


def raw_myst(text: str) -> list[str]:
    """The pieces of ``text`` a plain Markdown renderer would show raw."""
    return [m.group(0).strip() for m in RAW_MYST.finditer(text)]


def page_file(stem: str) -> str:
    """The file of the page ``stem``: a chapter's notebook, or one of the site's Markdown pages."""
    notebook = BOOK / f"{stem}.ipynb"
    return notebook.name if notebook.exists() else f"{stem}.md"


def title(stem: str) -> str:
    """A page's title, the first line of its first cell or of its file, as the site shows it."""
    path = BOOK / page_file(stem)
    if path.suffix == ".md":
        first = path.read_text()
    else:
        first = nbformat.read(path, as_version=4).cells[0].source
    return first.splitlines()[0].lstrip("#").strip()


def _details(match: re.Match) -> str:
    summary, body = match.group(1) or "Answer", match.group(2).strip("\n")
    return f"<details>\n<summary>{summary}</summary>\n\n{body}\n\n</details>"


def _link(match: re.Match) -> str:
    text, target = (match.group(1), match.group(2)) if match.group(2) else (None, match.group(3))
    target = target.strip().removesuffix(".ipynb").removesuffix(".md")
    return f"[{text or title(target)}]({page_file(target)})"


def open_markdown(text: str) -> str:
    return DOC_ROLE.sub(_link, DROPDOWN.sub(_details, text))


def _is_setup(cell) -> bool:
    return cell.cell_type == "code" and cell.metadata.get("tags") == SETUP_TAGS


def transform(nb) -> None:
    """Rewrite ``nb`` in place; a second call changes nothing."""
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            cell.source = open_markdown(cell.source)
    setup = next((c for c in nb.cells if _is_setup(c)), None)
    if setup is None:
        setup = nbformat.v4.new_code_cell(metadata={"tags": list(SETUP_TAGS)})
        setup.pop("id", None)  # the notebooks are nbformat 4.4, whose cells have no id
    else:
        nb.cells.remove(setup)
    if setup.source != setup_source():
        setup.source = setup_source()
        setup.outputs, setup.execution_count = [], None
    nb.cells.insert(1, setup)


def open_page(text: str) -> str:
    """A site-only Markdown page (intro, glossary, teachers' guide): GitHub and editors show
    it too, so its links are Markdown links as well; its directives stay (the site's own)."""
    return DOC_ROLE.sub(_link, text)


def main(argv: list[str]) -> None:
    check = "--check" in argv
    opened, left = {}, []  # path -> the text it should have
    for path in sorted(BOOK.glob("*.md")):
        opened[path] = open_page(path.read_text())
    for path in sorted(BOOK.glob("*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        transform(nb)
        left += [
            f"{path.name}: {piece}"
            for cell in nb.cells
            if cell.cell_type == "markdown"
            for piece in raw_myst(cell.source)
        ]
        opened[path] = nbformat.writes(nb).rstrip("\n") + "\n"  # as nbformat.write saves it
    changed = [path for path, after in opened.items() if after != path.read_text()]
    if not check:
        for path in changed:
            path.write_text(opened[path])
    names = ", ".join(path.name for path in changed)
    if left:
        sys.exit("markup a plain Markdown renderer shows raw:\n" + "\n".join(left))
    if check and changed:
        sys.exit(f"not yet open anywhere: {names}: run scripts/open_anywhere.py")
    print(f"{'would change' if check else 'changed'}: {names or 'nothing'}")


if __name__ == "__main__":
    main(sys.argv[1:])
