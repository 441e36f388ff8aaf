"""Re-execute every notebook into a scratch folder and compare it with the saved one; in the
same kernel, run each chapter's student copy from its exercise on.

Usage: python scripts/check_determinism.py [NOTEBOOK ...]

Exits 1, naming each notebook and cell that came out different, when a re-run from a
fresh kernel does not reproduce the committed file byte for byte. `make determinism` runs it
under machine settings other than those `make execute` saved the notebooks with, so a
saved output that depends on the CPU's kernels or the thread count fails here. It prints
how long each notebook took, but no time decides anything (`make bench` reports times). It
never touches book/.

The student copy (``make_student.student_copy``) is the chapter with each solution replaced
by a scaffold; the cells before the first solution are the chapter's own. So when the re-run
reaches the first solution, the kernel holds exactly what the student copy's kernel would
hold there, and the student copy's cells from there to the end run first (kept out of the
kernel's history, errors allowed); then the chapter's own cells run on, as they would have.
The student copy passes when every failing cell failed with the scaffold's
NotImplementedError, at least one did (the checker is wired to the student's function), and
no exercise cell itself failed (defining the scaffold works). This runs each chapter once
for both checks instead of twice; a chapter whose later cells depend on what the student's
cells left behind (unseeded randomness, state changed in place) would come out different
here, and fail, rather than pass.
"""

import shutil
import sys
import tempfile
from pathlib import Path

import nbformat
from nbclient import NotebookClient

sys.path.insert(0, str(Path(__file__).resolve().parent))
from execute_notebooks import ROOT, execute  # noqa: E402
from make_student import SOLUTION_TAG, student_copy  # noqa: E402

SCAFFOLD_ERROR = "NotImplementedError"


class WithStudentCopy(NotebookClient):
    """Runs ``student``'s cells from the first solution on, once, just before the chapter's
    own first solution cell; the student cells keep their outputs for ``student_problems``."""

    def __init__(self, nb, student, **options):
        super().__init__(nb, **options)
        self.student = student
        self.first_solution = next(
            (i for i, c in enumerate(nb.cells) if SOLUTION_TAG in c.metadata.get("tags", [])),
            None,
        )
        if self.first_solution is not None:
            prefix = zip(nb.cells[: self.first_solution], student.cells, strict=False)
            assert all(a.source == b.source for a, b in prefix), "the copies differ before it"

    async def async_execute_cell(self, cell, cell_index, execution_count=None, **kwargs):
        if cell_index == self.first_solution:
            await self._run_student_cells()
        return await super().async_execute_cell(cell, cell_index, execution_count, **kwargs)

    async def _run_student_cells(self):
        own_cells, executed = list(self.nb.cells), self.code_cells_executed
        self.allow_errors = True
        try:
            for index in range(self.first_solution, len(self.student.cells)):
                cell = self.student.cells[index]
                await super().async_execute_cell(cell, index, store_history=False)
        finally:
            self.allow_errors = False
            self.nb.cells[:] = own_cells  # nbclient stores each executed cell in nb.cells
            self.code_cells_executed = executed


def student_problems(student) -> list[str]:
    """What is wrong with a student copy's run (cells numbered as in the notebook)."""
    failures = [
        (index, output["ename"])
        for index, cell in enumerate(student.cells)
        if cell.cell_type == "code"
        for output in cell.get("outputs", [])
        if output.output_type == "error"
    ]
    problems = [f"cell {i} failed with {name}" for i, name in failures if name != SCAFFOLD_ERROR]
    if not failures:
        problems.append("no cell reaches the scaffold, so the checker is not wired to it")
    problems += [
        f"cell {i}, which defines the scaffold, failed"
        for i, _ in failures
        if "exercise" in student.cells[i].metadata.get("tags", [])
    ]
    return problems


def differing_cells(saved: Path, fresh: Path) -> list[int]:
    a = nbformat.read(saved, as_version=4).cells
    b = nbformat.read(fresh, as_version=4).cells
    if len(a) != len(b):
        return [-1]
    return [i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y]


def check(path: Path, folder: Path) -> list[str]:
    """Re-run ``path`` in ``folder`` (with its student copy); what went wrong, if anything."""
    copy = folder / path.name
    shutil.copy(path, copy)
    cells = nbformat.read(path, as_version=4).cells
    has_exercise = any(SOLUTION_TAG in c.metadata.get("tags", []) for c in cells)
    student = student_copy(path)

    def client(nb, **options):
        return WithStudentCopy(nb, student, **options)

    seconds = execute(copy, cwd=path.parent, client=client)
    problems = []
    if copy.read_bytes() != path.read_bytes():
        problems.append(f"DIFFERENT in cells {differing_cells(path, copy)}")
    if has_exercise:
        problems += [f"student copy: {p}" for p in student_problems(student)]
    verdict = "; ".join(problems) or ("same; student copy runs" if has_exercise else "same")
    print(f"{seconds:5.1f} s  {path.name}  {verdict}", flush=True)
    return problems


def main(argv: list[str]) -> None:
    paths = [Path(p).resolve() for p in argv] or sorted((ROOT / "book").glob("*.ipynb"))
    with tempfile.TemporaryDirectory() as tmp:
        failures = [path.name for path in paths if check(path, Path(tmp))]
    if failures:
        sys.exit(f"{len(failures)} notebook(s) failed: {', '.join(failures)}")


if __name__ == "__main__":
    main(sys.argv[1:])
