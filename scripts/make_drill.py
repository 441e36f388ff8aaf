"""Generate the interview drill from the chapters' Short answer and What they ask next
sections: book/drill.md, which lists the book's parts, and one page per part,
book/drill_partN.md, which the table of contents puts at the end of its part (one page for
all would outweigh a chapter).

Usage: python scripts/make_drill.py [--check]
  --check exits 1 (and says so) when a drill page is stale, instead of writing them.

Each chapter contributes its title, its Chinese question, its short answer and its
follow-up questions with their answers; a part's page lists them in book order, each folded
so a reader can answer first, then check. The fold and the links are the notebooks' own
plain HTML and Markdown (see open_anywhere.py). The parts are the table of contents'.

Every drill page links to the drill as an Anki deck (scripts/make_anki.py), which each
edition's build writes into its site's anki/ folder (_ext/book_anki.py). The link names the
English deck; the Chinese build points it at the Chinese one, so the translation keeps the
English link target as every translation does.
"""

import re
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
DRILL = ROOT / "book" / "drill.md"
FOLLOW_UPS = "## What they ask next"

# The deck in the site, relative to book/ (_ext/book_anki.py writes it; its name is
# make_anki.deck_file("en"), and the Chinese site's pages link to make_anki.deck_file("zh")).
ANKI_DECK = "../anki/attention-qa-en.apkg"
ANKI = (
    f"Drill on your phone or computer: [download the drill as an Anki deck]({ANKI_DECK}),\n"
    "a card for every short answer and follow-up, one subdeck per part. Importing a newer\n"
    "deck updates your cards and keeps their reviews.\n"
)

HEADER = f"""\
# Interview drill

Every question of the book, in English with the Chinese question beside it, its short
answer in English, and the questions an interviewer asks next, each with its answer, one
page per part of the book. Say your answer out loud first, then open the fold and compare;
the chapter link has the reasoning, the explorer and the checks. These pages are generated
from the chapters (`make drill`).

{ANKI}"""


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


def parts() -> list[tuple[str, list[Path]]]:
    """The table of contents' parts that hold chapters, as (caption, chapter paths)."""
    found = []
    for block in re.split(r"\n\s*- caption:\s*", (ROOT / "_toc.yml").read_text())[1:]:
        caption = block.splitlines()[0].strip().strip('"')
        stems = re.findall(r"file:\s*book/(q\d\d_\w+)", block)
        if stems:
            found.append((caption, [ROOT / "book" / f"{stem}.ipynb" for stem in stems]))
    return found


def chapter_order() -> list[Path]:
    """Chapters in the order of the table of contents."""
    return [path for _, chapters in parts() for path in chapters]


def part_page(number: int) -> Path:
    return ROOT / "book" / f"drill_part{number}.md"


def render() -> dict[Path, str]:
    """Every drill page's path and text: the index, then one page per part."""
    pages, index = {}, [HEADER]
    for number, (caption, chapters) in enumerate(parts(), start=1):
        page = part_page(number)
        titles = ", ".join(p.stem[:3] for p in chapters)
        index.append(f"- [{caption}]({page.name}): {titles}\n")
        pages[page] = f"# Drill · {caption}\n\n{ANKI}" + "".join(
            "\n" + chapter_entry(p) for p in chapters)
    return {DRILL: "\n".join([index[0], "".join(index[1:])]), **pages}


def main(argv: list[str]) -> None:
    pages = render()
    if "--check" in argv:
        stale = [p for p, text in pages.items() if not p.exists() or p.read_text() != text]
        if stale:
            sys.exit(f"{', '.join(p.name for p in stale)} stale: run `make drill`")
        return
    for path, text in pages.items():
        path.write_text(text)
        print(f"wrote {path.relative_to(ROOT)}")


if __name__ == "__main__":
    main(sys.argv[1:])
