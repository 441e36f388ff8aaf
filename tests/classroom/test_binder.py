"""Binder's environment (binder/) stays the book's: same Python, same pins, CPU PyTorch."""

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BINDER = ROOT / "binder"
CPU_INDEX = "https://download.pytorch.org/whl/cpu"


def _name(requirement: str) -> str:
    return re.sub(r"[-_.]+", "-", re.split(r"[=<>!~\[ ;]", requirement, maxsplit=1)[0]).lower()


def _pins(path: Path) -> dict[str, str]:
    lines = [line.strip() for line in path.read_text().splitlines()]
    pins = [line for line in lines if line and not line.startswith(("#", "-"))]
    assert all("==" in pin for pin in pins), f"{path.name}: every requirement must be pinned"
    return {_name(pin): pin.split("==")[1] for pin in pins}


def test_binder_runs_the_python_the_book_needs():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    lowest = re.fullmatch(r">=(\d+\.\d+)", project["requires-python"]).group(1)
    makefile = re.search(r"version_info\[:2\] == \((\d+), (\d+)\)", (ROOT / "Makefile").read_text())
    assert (BINDER / "runtime.txt").read_text().strip() == f"python-{lowest}"
    assert lowest == ".".join(makefile.groups())


def test_binder_pins_the_package_dependencies_as_the_book_does():
    """Each dependency of attention_qa at the version of constraints.txt; PyTorch as its CPU
    build, from PyTorch's CPU index (the default build brings several GB of CUDA)."""
    dependencies = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    book = _pins(ROOT / "constraints.txt")
    binder = _pins(BINDER / "requirements.txt")
    assert sorted(binder) == sorted(_name(d) for d in dependencies)
    expected = {name: book[name] for name in binder} | {"torch": book["torch"] + "+cpu"}
    assert binder == expected
    assert f"--extra-index-url {CPU_INDEX}" in (BINDER / "requirements.txt").read_text()


def test_binder_installs_the_package_itself():
    post_build = BINDER / "postBuild"
    assert post_build.stat().st_mode & 0o111, "postBuild must be executable"
    commands = [line.split() for line in post_build.read_text().splitlines()]
    assert ["pip", "install", "--no-cache-dir", "--no-deps", "."] in commands
