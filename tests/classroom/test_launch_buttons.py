"""Launch buttons appear exactly when repository.url is set (no dead buttons otherwise).

Builds a one-chapter book with the real _config.yml, twice: with and without a URL.
"""

import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
JB = str(Path(sys.executable).parent / "jupyter-book")


def _build(tmp: Path, url: str) -> str:
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    config["repository"]["url"] = url
    config["execute"]["execute_notebooks"] = "off"
    config["sphinx"]["local_extensions"] = {"attention_qa_build": str(ROOT / "_ext")}
    (tmp / "_config.yml").write_text(yaml.safe_dump(config, allow_unicode=True))
    (tmp / "_toc.yml").write_text("format: jb-book\nroot: intro\nchapters:\n  - file: chapter\n")
    shutil.copytree(ROOT / "_static", tmp / "_static")
    (tmp / "intro.md").write_text("# Intro\n")
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# Chapter")])
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nbformat.write(nb, tmp / "chapter.ipynb")
    subprocess.run([JB, "build", str(tmp), "-W", "-q"], check=True, capture_output=True)
    return (tmp / "_build" / "html" / "chapter.html").read_text()


@pytest.mark.parametrize("url", ["https://github.com/example/attention-qa", ""])
def test_launch_buttons_follow_repository_url(tmp_path, url):
    page = _build(tmp_path, url)
    for service in ("mybinder.org", "colab.research.google.com"):
        assert (service in page) == bool(url), f"{service} button with url={url!r}"
    if url:
        assert "mybinder.org/v2/gh/example/attention-qa/main?urlpath=lab/tree/chapter.ipynb" in page
