"""Student notebooks: scaffolds in place of solutions, everything else still runs."""

import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
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


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda p: p.stem)
def test_student_copy_runs_except_for_the_exercise(chapter, tmp_path):
    nb = student_copy(chapter)
    assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code")
    assert not any(SOLUTION_TAG in c.metadata.get("tags", []) for c in nb.cells)
    NotebookClient(
        nb,
        timeout=900,  # only against a hang: on a busy machine a cell may take long
        kernel_name="python3",
        allow_errors=True,
        resources={"metadata": {"path": str(chapter.parent)}},
    ).execute()
    failures = [
        (i, o["ename"])
        for i, c in enumerate(nb.cells)
        if c.cell_type == "code"
        for o in c.outputs
        if o.output_type == "error"
    ]
    wrong = [(i, name) for i, name in failures if name != "NotImplementedError"]
    assert not wrong, f"{chapter.name}: cells failing with something else: {wrong}"
    assert failures, f"{chapter.name}: no cell reaches the scaffold, so the checker is not wired"
    exercise_cells = [i for i, c in enumerate(nb.cells) if "exercise" in c.metadata.get("tags", [])]
    assert not any(i in exercise_cells for i, _ in failures), "defining the scaffold must not fail"
