"""pytest's hooks for the notebooks (``pytest --nbval book``).

A chapter's saved outputs hold nothing on stderr, so anything a cell writes there fails
nbval; nbval itself only says "Unexpected output fields: {'stderr'}". This hook puts what the
cell wrote, and for matplotlib's font fallback the likely cause, in front of that message.
"""

import os

import pytest

FONT_HINT = (
    "matplotlib drew with a fallback font, so the figure is not the one the book saved. "
    "Its font list is stale or incomplete: run the check through make, which keeps the list "
    "in .venv/state (MPLCONFIGDIR={where}), or delete fontlist-*.json there."
)


def stderr_report(path: str, cell: int, outputs) -> str | None:
    """What a cell wrote to stderr, as a message naming the notebook and cell; None if nothing."""
    text = "".join(
        out.get("text", "")
        for out in outputs or []
        if out.get("output_type") == "stream" and out.get("name") == "stderr"
    )
    if not text:
        return None
    message = f"{path} cell {cell} wrote to stderr while it ran:\n{text.rstrip()}"
    if "findfont" in text:
        where = os.environ.get("MPLCONFIGDIR", "unset: ~/.cache/matplotlib is used")
        message += "\n" + FONT_HINT.format(where=where)
    return message


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.when != "call" or not report.failed or not hasattr(item, "test_outputs"):
        return
    message = stderr_report(item.fspath.basename, item.cell_num, item.test_outputs)
    if message:
        report.longrepr = f"{message}\n\n{report.longrepr}"
