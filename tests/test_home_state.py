"""The checks read nothing from the home directory: a chapter passes nbval with a stale
matplotlib font list and a meddling IPython profile in $HOME, as make runs it.

`make` keeps matplotlib's, IPython's and Jupyter's per-user state in .venv/state (the
Makefile's MPLCONFIGDIR, IPYTHONDIR and JUPYTER_* variables). The test builds a home whose
font list lacks every font but DejaVu Sans, shows that matplotlib reading it falls back
(so the trap is real), then runs one explorer chapter under nbval with that home.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHAPTER = ROOT / "book" / "q09_generation_kv_cache.ipynb"  # its explorer draws mathtext (cmb10)
STATE = ("MPLCONFIGDIR", "IPYTHONDIR", "JUPYTER_CONFIG_DIR", "JUPYTER_DATA_DIR")
FIND_CMB10 = (
    "from matplotlib.font_manager import FontProperties, findfont; "
    "findfont(FontProperties(family='cmb10'))"
)


def _run(args, env, **kwargs):
    return subprocess.run(args, env=env, capture_output=True, text=True, cwd=ROOT, **kwargs)


@pytest.fixture(scope="module")
def stale_home(tmp_path_factory):
    """A home directory left behind by another environment: a truncated font list in
    ~/.cache/matplotlib, and an IPython startup file that prints to stderr."""
    home = tmp_path_factory.mktemp("home")
    env = {k: v for k, v in os.environ.items() if k not in STATE}
    env |= {"HOME": str(home), "XDG_CACHE_HOME": str(home / ".cache"),
            "XDG_CONFIG_HOME": str(home / ".config")}  # fmt: skip
    _run([sys.executable, "-c", "import matplotlib.font_manager"], env, check=True)
    (fontlist,) = (home / ".cache" / "matplotlib").glob("fontlist-*.json")
    listing = json.loads(fontlist.read_text())
    listing["ttflist"] = [f for f in listing["ttflist"] if f["name"] == "DejaVu Sans"]
    fontlist.write_text(json.dumps(listing))
    startup = home / ".ipython" / "profile_default" / "startup"
    startup.mkdir(parents=True)
    (startup / "00-noise.py").write_text("import sys; print('from ~/.ipython', file=sys.stderr)")
    return env


def test_the_stale_home_would_change_the_figures(stale_home):
    result = _run([sys.executable, "-c", FIND_CMB10], stale_home)
    assert "findfont: Font family ['cmb10'] not found" in result.stderr, result.stderr


def test_a_chapter_passes_nbval_with_the_stale_home(stale_home):
    made = {name: os.environ.get(name, "") for name in STATE}
    outside = [name for name, value in made.items() if not value.startswith(str(ROOT))]
    assert not outside, f"run through make, which sets {outside} inside the checkout"
    env = stale_home | made | {"ATEN_CPU_CAPABILITY": "default", "OMP_NUM_THREADS": "1"}
    nbval = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--nbval"]
    result = _run([*nbval, str(CHAPTER)], env)
    assert result.returncode == 0, result.stdout[-4000:]
