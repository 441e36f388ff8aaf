"""Generate book/drill.md, the interview drill, from the chapters' Short answer and What
they ask next sections.

Usage: python scripts/make_drill.py [--check]
  --check exits 1 (and says so) when book/drill.md is stale, instead of writing it.

Each chapter contributes its title, its Chinese question, its short answer and its
follow-up questions with their answers; the page lists them in book order, each part folded
so a reader can answer first, then check. The
fold and the links are the notebooks' own plain HTML and Markdown (see open_anywhere.py).
"""

import re
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
DRILL = ROOT / "book" / "drill.md"
FOLLOW_UPS = "## What they ask next"

HEADER = """\
# Interview drill

Every question of the book, in English with the Chinese question beside it, its short
answer in English, and the questions an interviewer asks next, each with its answer. Say
your answer out loud first, then open the fold and compare; the chapter link has the
reasoning, the explorer and the checks. This page is generated from the chapters
(`make drill`).
"""


def section(path: Path, markdown: list[str], heading: str, required: bool = True) -> str:
    """The prose of a chapter's ``## heading`` section: its Markdown cells up to the next
    section (the code cells that compute an answer stay in the chapter); "" for a section
    that is not required and absent."""
    start = next((i for i, m in enumerate(markdown) if m.lstrip().startswith(heading)), None)
    if start is None:
        if required:
            raise ValueError(f"{path.name} has no '{heading}' section")
        return ""
    body = [re.sub(rf"^{heading}\s*", "", markdown[start].strip())]
    for cell in markdown[start + 1 :]:
        if cell.lstrip().startswith("## "):
            break
        body.append(cell.strip())
    return "\n\n".join(part for part in body if part)


def chapter_entry(path: Path) -> str:
    nb = nbformat.read(path, as_version=4)
    markdown = [c.source for c in nb.cells if c.cell_type == "markdown"]
    title_cell = markdown[0].strip().splitlines()
    title = title_cell[0].lstrip("# ").strip()
    chinese = next((line.strip("* ") for line in title_cell[1:] if line.strip()), "")
    answer = section(path, markdown, "## Short answer")
    follow_ups = section(path, markdown, FOLLOW_UPS, required=False)
    parts = [f"## {title}\n\n*{chinese}*\n", fold("Short answer", answer)]
    if follow_ups:
        parts.append(fold("What they ask next", follow_ups))
    parts.append(f"Read the chapter: [{title}]({path.name})\n")
    return "\n".join(parts)


def fold(summary: str, body: str) -> str:
    return f"<details>\n<summary>{summary}</summary>\n\n{body}\n\n</details>\n"


def chapter_order() -> list[Path]:
    """Chapters in the order of the table of contents."""
    toc = (ROOT / "_toc.yml").read_text()
    stems = re.findall(r"file:\s*book/(q\d\d_\w+)", toc)
    return [ROOT / "book" / f"{stem}.ipynb" for stem in stems]


def render() -> str:
    return HEADER + "".join("\n" + chapter_entry(p) for p in chapter_order())


def main(argv: list[str]) -> None:
    text = render()
    if "--check" in argv:
        if not DRILL.exists() or DRILL.read_text() != text:
            sys.exit("book/drill.md is stale: run `make drill`")
        return
    DRILL.write_text(text)
    print(f"wrote {DRILL.relative_to(ROOT)}")


if __name__ == "__main__":
    main(sys.argv[1:])
