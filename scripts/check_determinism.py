"""Re-execute every notebook into a scratch folder and compare it with the saved one.

Usage: python scripts/check_determinism.py [NOTEBOOK ...]

Exits 1, naming each notebook and cell that came out different, when a re-run from a
fresh kernel does not reproduce the committed file byte for byte. `make determinism` runs it
under machine settings other than those `make execute` saved the notebooks with, so a
saved output that depends on the CPU's kernels or the thread count fails here. It prints
how long each notebook took, but no time decides anything (`make bench` reports times). It
never touches book/.
"""

import shutil
import sys
import tempfile
from pathlib import Path

import nbformat

sys.path.insert(0, str(Path(__file__).resolve().parent))
from execute_notebooks import ROOT, execute  # noqa: E402


def differing_cells(saved: Path, fresh: Path) -> list[int]:
    a = nbformat.read(saved, as_version=4).cells
    b = nbformat.read(fresh, as_version=4).cells
    if len(a) != len(b):
        return [-1]
    return [i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y]


def main(argv: list[str]) -> None:
    paths = [Path(p).resolve() for p in argv] or sorted((ROOT / "book").glob("*.ipynb"))
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        for path in paths:
            copy = Path(tmp) / path.name
            shutil.copy(path, copy)
            seconds = execute(copy, cwd=path.parent)
            same = copy.read_bytes() == path.read_bytes()
            cells = [] if same else differing_cells(path, copy)
            verdict = "same" if same else f"DIFFERENT in cells {cells}"
            print(f"{seconds:5.1f} s  {path.name}  {verdict}")
            if not same:
                failures.append(path.name)
    if failures:
        sys.exit(f"re-running changed {len(failures)} notebook(s): {', '.join(failures)}")


if __name__ == "__main__":
    main(sys.argv[1:])
