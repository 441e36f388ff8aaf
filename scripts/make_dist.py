"""Build the attention-qa distribution, a wheel and an sdist, and check it: `make dist`.

Usage: python scripts/make_dist.py [OUT_DIR]   (default: dist/)

`build` makes the sdist first and the wheel from it, so a file the sdist leaves out fails
here. It builds with the pinned setuptools of the environment (`--no-isolation`), so the
result does not depend on whatever setuptools an index offers that day, and it needs no
network. `twine check --strict` then checks both files as PyPI would (metadata, README).
The version is `attention_qa.__version__`.
"""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def make_dist(out_dir: Path) -> list[Path]:
    """Build into ``out_dir`` (earlier builds of the package there are removed); the files."""
    out_dir.mkdir(parents=True, exist_ok=True)
    for old in [*out_dir.glob("attention_qa-*.whl"), *out_dir.glob("attention_qa-*.tar.gz")]:
        old.unlink()
    build = [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out_dir), str(ROOT)]
    subprocess.run(build, check=True, stdout=subprocess.DEVNULL)
    files = sorted(out_dir.glob("attention_qa-*"))
    twine = [sys.executable, "-m", "twine", "check", "--strict", *map(str, files)]
    subprocess.run(twine, check=True)
    return files


if __name__ == "__main__":
    make_dist(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "dist")
