"""Execute the book's notebooks in place, so that their saved outputs are the ones nbval checks.

Usage: python scripts/execute_notebooks.py [NOTEBOOK ...]   (default: every book/*.ipynb)

Each notebook runs top to bottom on a fresh kernel from its own folder. Widget state is
not stored and metadata is reduced to the kernel and language, which keeps the files lean
and a re-run byte-identical. The time each notebook took is printed.
"""

import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent
KERNELSPEC = {"display_name": "Python 3", "language": "python", "name": "python3"}


def lean_metadata(nb) -> None:
    nb.metadata = nbformat.from_dict(
        {"kernelspec": KERNELSPEC, "language_info": {"name": "python"}}
    )
    for cell in nb.cells:
        tags = cell.metadata.get("tags")
        cell.metadata = nbformat.from_dict({"tags": tags} if tags else {})
        cell.pop("id", None)


def execute(path: Path) -> float:
    nb = nbformat.read(path, as_version=4)
    lean_metadata(nb)
    start = time.perf_counter()
    NotebookClient(
        nb,
        timeout=180,
        kernel_name="python3",
        resources={"metadata": {"path": str(path.parent)}},
        store_widget_state=False,
    ).execute()
    seconds = time.perf_counter() - start
    lean_metadata(nb)  # execution adds metadata of its own
    nb.nbformat, nb.nbformat_minor = 4, 4
    nbformat.write(nb, path)
    return seconds


def main(argv: list[str]) -> None:
    paths = [Path(p) for p in argv] or sorted((ROOT / "book").glob("*.ipynb"))
    for path in paths:
        print(f"{execute(path):6.1f} s  {path.relative_to(ROOT) if path.is_absolute() else path}")


if __name__ == "__main__":
    main(sys.argv[1:])
