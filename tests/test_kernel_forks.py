"""scripts/kernel_forks.py: a forked kernel is an ordinary kernel of the same settings, and a
kernel asked for under other settings is started the ordinary way."""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# Runs inside `kernel_forks.py run`: executes one cell in a kernel of the python3 spec,
# with the thread count given, and prints what the kernel saw.
PROBE = r"""
import json, os, sys
import nbformat
from nbclient import NotebookClient
os.environ["OMP_NUM_THREADS"] = sys.argv[1]
nb = nbformat.v4.new_notebook()
nb.cells = [nbformat.v4.new_code_cell(
    "import os, sys, json, torch\n"
    "print(json.dumps({'parent': os.getppid(), 'threads': torch.get_num_threads(),"
    " 'cwd': os.getcwd(), 'first_path': sys.path[0],"
    " 'sum': float(torch.arange(10.0).softmax(0) @ torch.arange(10.0))}))")]
NotebookClient(nb, kernel_name="python3", resources={"metadata": {"path": sys.argv[2]}}).execute()
seen = json.loads(nb.cells[0].outputs[0]["text"])
print(json.dumps({**seen, "server": os.getppid(), "probe": os.getpid()}))
"""


def _probe(tmp_path, threads: str, forks: bool) -> dict:
    script = tmp_path / "probe.py"
    script.write_text(PROBE)
    command = [sys.executable, str(script), threads, str(tmp_path)]
    if forks:
        command = [sys.executable, str(ROOT / "scripts" / "kernel_forks.py"), "run", *command]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    env.pop("ATTENTION_QA_KERNEL_FORKS", None)
    result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_a_forked_kernel_sees_what_an_ordinary_one_sees(tmp_path):
    forked = _probe(tmp_path, "1", forks=True)
    ordinary = _probe(tmp_path, "1", forks=False)
    assert forked["parent"] == forked["server"]  # forked from the server, not started anew
    assert ordinary["parent"] == ordinary["probe"]
    for key in ("threads", "cwd", "first_path", "sum"):
        assert forked[key] == ordinary[key], key
    assert forked["cwd"] == str(tmp_path)


def test_a_kernel_under_other_settings_is_started_the_ordinary_way(tmp_path):
    seen = _probe(tmp_path, "2", forks=True)  # the server was started with one thread
    assert seen["parent"] == seen["probe"]  # the kernel command became the kernel
    assert seen["threads"] == 2
