"""Write student copies of the chapters: each solution replaced by a scaffold.

Usage: python scripts/make_student.py [OUT_DIR]   (default: student/)

A code cell tagged ``solution`` keeps its function and class signatures and docstrings;
each body becomes ``raise NotImplementedError(<hint>)``. Outputs and execution counts are
cleared, so students start from a clean notebook. New chapters are picked up by name
(``book/q*.ipynb``), with no list to keep up to date.
"""

import ast
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
SOLUTION_TAG = "solution"


def _scaffold_function(node: ast.FunctionDef, source: str, indent: str) -> list[str]:
    lines = source.splitlines()
    body_start = node.body[0]
    has_doc = isinstance(body_start, ast.Expr) and isinstance(body_start.value, ast.Constant)
    head_end = node.body[0].end_lineno if has_doc else node.body[0].lineno - 1
    head = lines[node.lineno - 1 - len(node.decorator_list) : head_end]
    hint = f"write {node.name}: the exercise above says what it must do"
    return head + [f'{indent}    raise NotImplementedError("{hint}")', ""]


def scaffold(source: str) -> str:
    """The solution's definitions with their bodies replaced by NotImplementedError."""
    tree = ast.parse(source)
    out: list[str] = ["# Your turn: replace each `raise NotImplementedError` with your code."]
    lines = source.splitlines()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            out += _scaffold_function(node, source, "")
        elif isinstance(node, ast.ClassDef):
            out += lines[node.lineno - 1 : node.lineno]
            for item in node.body:
                if isinstance(item, ast.FunctionDef):
                    out += _scaffold_function(item, source, "    ")
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            out += lines[node.lineno - 1 : node.end_lineno] + [""]
    return "\n".join(out).rstrip() + "\n"


def student_copy(path: Path) -> nbformat.NotebookNode:
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        if SOLUTION_TAG in cell.metadata.get("tags", []):
            cell.source = scaffold(cell.source)
            cell.metadata["tags"] = ["exercise"]
        cell.outputs = []
        cell.execution_count = None
    return nb


def main(argv: list[str]) -> None:
    out_dir = Path(argv[0]) if argv else ROOT / "student"
    out_dir.mkdir(parents=True, exist_ok=True)
    for path in sorted((ROOT / "book").glob("q*.ipynb")):
        nbformat.write(student_copy(path), out_dir / path.name)
        print(f"wrote {out_dir / path.name}")


if __name__ == "__main__":
    main(sys.argv[1:])
