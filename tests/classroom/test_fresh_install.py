"""The Colab situation: chapters run where attention_qa is not installed.

A fresh virtual environment gets the chapters' dependencies and a kernel, at the book's pins,
but not attention_qa, and its pip can reach nothing but a freshly built dist/ (no index, no
config file). Each chapter's setup cell must install the package from there, and then every
saved output must come out again (nbval, no lax mode) on that environment's kernel, under
the machine setting the notebooks were saved with.
"""

import json
import os
import subprocess
import sys
import tomllib
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
from make_dist import make_dist  # noqa: E402
from open_anywhere import version  # noqa: E402

# The first chapter, the playground (three explorers, every lesson module it shows) and a
# chapter that trains a model: together they import most of the package.
CHAPTERS = ["playground", "q01_what_is_attention", "q08_causal_training"]
KERNEL = "attention-qa-fresh"
SAVE_SETTING = {"ATEN_CPU_CAPABILITY": "default", "OMP_NUM_THREADS": "1"}


def _run(command: list[str], **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(command, check=True, capture_output=True, text=True, **kwargs)


@pytest.fixture(scope="module")
def fresh(tmp_path_factory):
    """(python, dist, jupyter_path): an environment with the dependencies only."""
    tmp = tmp_path_factory.mktemp("fresh")
    dist = tmp / "dist"
    make_dist(dist)
    env_dir = tmp / "venv"
    venv.create(env_dir, with_pip=True)
    python = str(env_dir / "bin" / "python")
    dependencies = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    pinned = ["-c", str(ROOT / "constraints.txt"), *dependencies, "ipykernel"]
    # --no-compile: a module is compiled when first imported; all of PyTorch up front is slower
    _run([python, "-m", "pip", "install", "--quiet", "--no-compile", *pinned])
    absent = "import importlib.util as u; assert u.find_spec('attention_qa') is None"
    _run([python, "-c", absent], cwd=tmp, env={"PATH": os.environ["PATH"]})
    spec = tmp / "jupyter" / "kernels" / KERNEL
    spec.mkdir(parents=True)
    argv = [python, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    (spec / "kernel.json").write_text(
        json.dumps({"argv": argv, "display_name": KERNEL, "language": "python"})
    )
    return python, dist, tmp / "jupyter"


def test_chapters_install_the_package_and_pass(fresh):
    python, dist, jupyter_path = fresh
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "PYTHON"))}
    env |= SAVE_SETTING | {
        "JUPYTER_PATH": str(jupyter_path),
        # its own font list: the book's venv's lists that venv's files, not this one's
        "MPLCONFIGDIR": str(jupyter_path.parent / "matplotlib"),
        "PIP_CONFIG_FILE": os.devnull,
        "PIP_NO_INDEX": "1",
        "PIP_FIND_LINKS": str(dist),
    }
    notebooks = [str(ROOT / "book" / f"{name}.ipynb") for name in CHAPTERS]
    nbval = [sys.executable, "-m", "pytest", "-q", "--nbval", f"--nbval-kernel-name={KERNEL}"]
    result = subprocess.run([*nbval, *notebooks], cwd=ROOT, env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    where = "import attention_qa, importlib.metadata as m; print(m.version('attention-qa'))"
    installed = _run([python, "-c", where], cwd=dist, env={"PATH": os.environ["PATH"]})
    assert installed.stdout.strip() == version(), "the setup cell installed another version"
