"""A chapter in JupyterLab: opening and saving it leaves the file as it was, and after
Run All it shows no raw markup and a live panel that moves.

JupyterLab (the book's own, as `make lab` starts it) opens a copy of a chapter in Chromium;
its kernel starts, Lab fills in the notebook's metadata, and the notebook is saved. The file
must come back byte for byte: the saver (scripts/execute_notebooks.py) writes what Lab
writes. The one value that depends on the machine, ``language_info.version`` (the kernel's
Python), is set to this machine's before opening.
"""

import os
import platform
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
from built_site import chromium  # noqa: E402

CHAPTER = ROOT / "book" / "q04_why_scale_by_sqrt_dk.ipynb"
JUPYTER = str(Path(sys.executable).parent / "jupyter")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_for_port(port: int, lab: subprocess.Popen, seconds: float = 120) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        assert lab.poll() is None, "JupyterLab exited while starting"
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.5)
    pytest.fail(f"JupyterLab did not listen on port {port} within {seconds} s")


@pytest.fixture
def lab(tmp_path):
    port = _free_port()
    command = [
        JUPYTER, "lab", "--no-browser", f"--port={port}", "--ip=127.0.0.1",
        f"--ServerApp.root_dir={tmp_path}", "--IdentityProvider.token=",
        f"--LabApp.workspaces_dir={tmp_path / '.workspaces'}",
        f"--LabApp.user_settings_dir={tmp_path / '.settings'}",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
    ]  # fmt: skip
    if os.geteuid() == 0:
        command.append("--allow-root")
    log = (tmp_path / "lab.log").open("w")
    process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
    try:
        _wait_for_port(port, process)
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        process.wait(timeout=60)
        log.close()


def _open(page, url: str) -> None:
    """Open a notebook and wait until Lab has finished loading it (its spinner gone) and its
    kernel is connected and idle (the status bar says so; before that it says Unknown)."""
    page.goto(url)
    page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=120_000)
    page.wait_for_selector(".jp-NotebookPanel .jp-Spinner", state="detached", timeout=120_000)
    page.wait_for_function(
        """() => [...document.querySelectorAll('.jp-StatusBar-TextItem')]
                   .some(item => item.textContent.trim().endsWith('| Idle'))""",
        timeout=120_000,
    )


def test_opening_and_saving_in_lab_changes_nothing(lab, tmp_path):
    nb = nbformat.read(CHAPTER, as_version=4)
    nb.metadata.language_info.version = platform.python_version()
    copy = tmp_path / CHAPTER.name
    nbformat.write(nb, copy)
    before, written = copy.read_bytes(), copy.stat().st_mtime_ns
    with chromium() as browser:
        page = browser.new_page()
        _open(page, f"{lab}/lab/tree/{copy.name}")
        # Lab takes the shortcut once the notebook has settled: press until it has saved.
        deadline = time.monotonic() + 60
        while copy.stat().st_mtime_ns == written and time.monotonic() < deadline:
            page.keyboard.press("Control+s")
            page.wait_for_timeout(2000)
    assert copy.stat().st_mtime_ns != written, "JupyterLab did not save the notebook"
    assert copy.read_bytes() == before, f"saving in Lab changed {CHAPTER.name}: see {copy}"


# A cell waiting or running shows [*] in its prompt.
RUNNING = "[...document.querySelectorAll('.jp-InputPrompt')].some(p => p.textContent.includes('*'))"


def _run_all(page) -> None:
    """Run > Run All Cells, as a student does, until the cells are seen queued. The notebook
    is focused through the first cell's prompt, where no link or fold can take the click
    (clicking mid-notebook while Lab still lays it out can land on one)."""
    for _ in range(3):
        page.locator(".jp-Notebook .jp-Cell .jp-InputPrompt").first.click()
        page.keyboard.press("Escape")
        page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Run$")).click()
        page.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^Run All Cells$")).click()
        try:
            page.wait_for_function(f"() => {RUNNING}", timeout=30_000)
            return
        except PlaywrightTimeout:
            page.keyboard.press("Escape")  # a menu left open
    pytest.fail("Run All Cells did not start the notebook's cells")


def test_run_all_in_lab_shows_no_raw_markup_and_the_live_panel_moves(lab, tmp_path):
    """What a student sees after Run All: folded answers (no MyST source), no error output,
    and an explorer whose figure follows its slider and keeps its drawn size."""
    copy = tmp_path / CHAPTER.name
    copy.write_bytes(CHAPTER.read_bytes())
    with chromium() as browser:
        page = browser.new_page(viewport={"width": 1300, "height": 1000})
        _open(page, f"{lab}/lab/tree/{copy.name}?reset")
        _run_all(page)
        # The saved notebook has no widget output: a live panel appears only when it runs.
        try:
            page.wait_for_selector(".jupyter-widgets img", state="attached", timeout=300_000)
            page.wait_for_function(f"() => !({RUNNING})", timeout=300_000)
        except PlaywrightTimeout:
            page.screenshot(path=str(tmp_path / "lab.png"), full_page=True)
            log = (tmp_path / "lab.log").read_text()[-3000:]
            pytest.fail(f"no live panel after Run All (screenshot {tmp_path / 'lab.png'}):\n{log}")
        text = page.locator(".jp-Notebook").text_content()
        assert ":::" not in text and "{doc}" not in text and "{dropdown}" not in text
        assert page.locator("[data-mime-type='application/vnd.jupyter.stderr']").count() == 0
        image = page.locator(".jupyter-widgets img").first
        image.scroll_into_view_if_needed()
        page.wait_for_function(
            "img => img.complete && img.naturalWidth > 0", arg=image.element_handle()
        )
        natural, shown = image.evaluate("img => [img.naturalWidth, img.clientWidth]")
        assert shown <= natural, f"the live figure is stretched from {natural} to {shown} px"
        before = image.get_attribute("src")
        page.locator(".jupyter-widgets .noUi-handle").first.focus()
        page.keyboard.press("ArrowRight")
        page.wait_for_function(
            "([img, before]) => img.getAttribute('src') !== before",
            arg=[image.element_handle(), before],
            timeout=60_000,
        )
