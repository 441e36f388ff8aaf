"""Predict, then reveal: every chapter asks for a prediction before its first explorer."""

from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]
CHAPTERS = sorted((ROOT / "book").glob("q*.ipynb"))


def _is_prediction(cell) -> bool:
    text = cell.source
    return cell.cell_type == "markdown" and "Predict" in text and "<details>" in text


def _shows_explorer(cell) -> bool:
    return cell.cell_type == "code" and any(
        "aqa-explorer" in output.get("data", {}).get("text/html", "") for output in cell.outputs
    )


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda p: p.stem)
def test_prediction_prompt_before_the_first_explorer(chapter):
    cells = nbformat.read(chapter, as_version=4).cells
    predictions = [i for i, c in enumerate(cells) if _is_prediction(c)]
    explorers = [i for i, c in enumerate(cells) if _shows_explorer(c)]
    assert explorers, f"{chapter.name} shows no explorer"
    assert predictions, f"{chapter.name} has no prediction prompt with a folded answer"
    assert predictions[0] < explorers[0], (
        f"{chapter.name}: the first prediction comes after the explorer"
    )
