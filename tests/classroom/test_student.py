"""Student notebooks: scaffolds in place of solutions, everything else still runs.

Every chapter's student copy is run by the determinism check (`make determinism`), in the
same kernel as the chapter's re-run, from the first solution on; here that combined run is
checked on small chapters made to pass and to fail."""

import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
from check_determinism import check  # noqa: E402
from execute_notebooks import execute  # noqa: E402
from make_student import SOLUTION_TAG, scaffold, student_copy  # noqa: E402
from open_anywhere import setup_source  # noqa: E402

CHAPTERS = sorted((ROOT / "book").glob("q*.ipynb"))


def _has_solution(path: Path) -> bool:
    nb = nbformat.read(path, as_version=4)
    return any(SOLUTION_TAG in c.metadata.get("tags", []) for c in nb.cells)


def test_scaffold_keeps_signatures_and_raises():
    source = 'import torch\n\n\ndef f(x):\n    """Doc."""\n    return x + 1\n'
    namespace = {}
    exec(scaffold(source), namespace)
    with pytest.raises(NotImplementedError, match="write f"):
        namespace["f"](1)
    assert "def f(x):" in scaffold(source) and '"""Doc."""' in scaffold(source)
    assert "return x + 1" not in scaffold(source)


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda p: p.stem)
def test_every_chapter_has_an_exercise(chapter):
    assert _has_solution(chapter), f"{chapter.name} has no cell tagged {SOLUTION_TAG!r}"


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda p: p.stem)
def test_student_copy_keeps_the_setup_cell(chapter):
    """A student may open the copy in Colab, where only the setup cell installs the helpers."""
    assert student_copy(chapter).cells[1].source == setup_source()


def _chapter(tmp_path: Path, solution: str, after: list[str]) -> Path:
    """A small chapter saved as `make execute` saves one: a setup, a solution, later cells."""
    nb = nbformat.v4.new_notebook()
    solution_cell = nbformat.v4.new_code_cell(solution)
    solution_cell.metadata["tags"] = [SOLUTION_TAG]
    nb.cells = [
        nbformat.v4.new_markdown_cell("# q99 · A chapter"),
        nbformat.v4.new_code_cell("import random\nrandom.seed(0)\nscale = 2"),
        solution_cell,
        *(nbformat.v4.new_code_cell(source) for source in after),
    ]
    path = tmp_path / "book" / "q99_chapter.ipynb"
    path.parent.mkdir()
    nbformat.write(nb, path)
    execute(path)
    return path


def _problems(tmp_path: Path, solution: str, after: list[str]) -> list[str]:
    path = _chapter(tmp_path, solution, after)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    return check(path, scratch)


CHECKER = "assert double(3) == 6\nprint('right')"


def test_the_rerun_runs_the_student_copy_and_stays_byte_identical(tmp_path):
    solution = "def double(x):\n    \"\"\"Twice x.\"\"\"\n    return scale * x"
    later = "random.seed(1)\nprint(random.random())"  # a later cell that seeds what it draws
    assert _problems(tmp_path, solution, [CHECKER, later]) == []


def test_a_later_cell_needing_what_only_the_solution_defined_fails_the_student_copy(tmp_path):
    solution = "def double(x):\n    return scale * x\n\n\nTABLE = [1, 2]"
    problems = _problems(tmp_path, solution, [CHECKER, "print(TABLE)"])
    assert problems == ["student copy: cell 4 failed with NameError"]


def test_a_checker_that_never_calls_the_function_fails_the_student_copy(tmp_path):
    solution = "def double(x):\n    return scale * x"
    problems = _problems(tmp_path, solution, ["print('right')"])
    assert problems == [
        "student copy: no cell reaches the scaffold, so the checker is not wired to it"
    ]


def test_a_later_cell_drawing_unseeded_randomness_fails_rather_than_passing(tmp_path):
    """The student's cells draw from the same generator first, so the chapter's own draw
    differs from the saved one: the re-run says so."""
    solution = "def double(x):\n    return scale * x"
    problems = _problems(tmp_path, solution, [CHECKER, "print(random.random())"])
    assert problems == ["DIFFERENT in cells [4]"]
