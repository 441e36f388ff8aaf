"""Which files make each chapter, read from the code: the map in CONTRIBUTING.md.

Usage: python scripts/chapter_map.py [--check]
  --check exits 1 (and says so) when the map in CONTRIBUTING.md is stale, instead of writing it.

For every chapter notebook: the lesson modules it imports (``from attention_qa import
costs``, ``from attention_qa.costs import …``), its explorers (``explorers.BY_CHAPTER``, by
the module each builder lives in), its checker (each ``check_*`` it calls, by the module that
defines it), the unit tests of those modules (``tests/test_<module>.py`` and the tests that
name the checker) and its translation file.
"""

import ast
import re
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
CONTRIBUTING = ROOT / "CONTRIBUTING.md"
BEGIN = "<!-- chapter map: written by scripts/chapter_map.py, do not edit by hand -->"
END = "<!-- end of chapter map -->"
NOT_LESSONS = {"explorers", "checks", "panel"}


def lesson_modules(code: str) -> set[str]:
    """The package's lesson modules a chapter's code imports."""
    magic = re.compile(r"^(\s*)[%!].*$", re.M)  # %pip … → pass, keeping the indentation
    tree = ast.parse(magic.sub(r"\1pass", code))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "attention_qa":
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("attention_qa."):
            found.add(node.module.split(".")[1])
        elif isinstance(node, ast.Import):
            found |= {
                a.name.split(".")[1] for a in node.names if a.name.startswith("attention_qa.")
            }
    return {
        m for m in found if m not in NOT_LESSONS and (ROOT / f"src/attention_qa/{m}.py").exists()
    }


def chapter_row(notebook: Path) -> list[str]:
    from attention_qa import checks, explorers

    chapter = notebook.stem.split("_")[0]
    code = "\n".join(
        c.source for c in nbformat.read(notebook, as_version=4).cells if c.cell_type == "code"
    )
    lessons = sorted(lesson_modules(code))
    panels = [
        b.__module__.rsplit(".", 1)[1] + "." + b.__name__
        for b in explorers.BY_CHAPTER.get(chapter, [])
    ]
    checkers = sorted(
        {
            getattr(checks, name).__module__.split(".", 2)[2] + "." + name
            for name in re.findall(r"\b(check_\w+)\(", code)
            if hasattr(checks, name)
        }
    )
    tests = {f"test_{m}" for m in lessons if (ROOT / f"tests/test_{m}.py").exists()}
    for module in {b.__module__.rsplit(".", 1)[1] for b in explorers.BY_CHAPTER.get(chapter, [])}:
        tests |= (
            {f"test_explorers_{module}"}
            if (ROOT / f"tests/test_explorers_{module}.py").exists()
            else set()
        )
    for name in (c.rsplit(".", 1)[1] for c in checkers):
        tests |= {p.stem for p in (ROOT / "tests").rglob("test_*.py") if name in p.read_text()}
    po = ROOT / "locales/zh_CN/LC_MESSAGES/book" / f"{notebook.stem}.po"

    def cell(items) -> str:
        return ", ".join(f"`{i}`" for i in items) or "—"

    return [
        f"[{chapter}](book/{notebook.name})",
        cell(lessons),
        cell(panels),
        cell(checkers),
        cell(sorted(tests)),
        f"`{po.relative_to(ROOT / 'locales/zh_CN/LC_MESSAGES')}`" if po.exists() else "—",
    ]


def chapter_map() -> str:
    sys.path.insert(0, str(ROOT / "src"))
    rows = [chapter_row(nb) for nb in sorted((ROOT / "book").glob("q[0-9][0-9]_*.ipynb"))]
    head = [
        "chapter",
        "lesson modules (`attention_qa.`)",
        "explorer (`explorers.`)",
        "checker (`checks.`)",
        "tests (`tests/`)",
        "translation (`locales/zh_CN/LC_MESSAGES/`)",
    ]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def with_map(text: str) -> str:
    start, end = text.index(BEGIN) + len(BEGIN), text.index(END)
    return text[:start] + "\n" + chapter_map() + "\n" + text[end:]


def main(argv: list[str]) -> int:
    text = CONTRIBUTING.read_text()
    new = with_map(text)
    if "--check" in argv:
        if new != text:
            print("CONTRIBUTING.md's chapter map is stale: run `python scripts/chapter_map.py`")
            return 1
        return 0
    CONTRIBUTING.write_text(new)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
