"""scripts/kernel_forks.py: a forked kernel is an ordinary kernel of the same settings, and a
kernel asked for under other settings is started the ordinary way."""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# Runs inside `kernel_forks.py run` (or not): executes one cell in a kernel of the python3
# spec under each thread count given, and prints what each kernel saw.
PROBE = r"""
import json, os, sys
import nbformat
from nbclient import NotebookClient

def probe(threads):
    os.environ["OMP_NUM_THREADS"] = threads
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(
        "import os, sys, json, torch\n"
        "import matplotlib, matplotlib.pyplot as plt\n"
        "print(json.dumps({'parent': os.getppid(), 'threads': torch.get_num_threads(),"
        " 'cwd': os.getcwd(), 'first_path': sys.path[0], 'backend': matplotlib.get_backend(),"
        " 'sum': float(torch.arange(10.0).softmax(0) @ torch.arange(10.0))}))\n"
        "plt.plot([0, 1])")]
    path = {"metadata": {"path": sys.argv[1]}}
    NotebookClient(nb, kernel_name="python3", resources=path).execute()
    seen = json.loads(nb.cells[0].outputs[0]["text"])
    shown = [sorted(o.get("data", {})) for o in nb.cells[0].outputs[1:]]  # the figure, inline
    return {**seen, "shown": shown, "server": os.getppid(), "probe": os.getpid()}

print(json.dumps([probe(threads) for threads in sys.argv[2:]]))
"""


def _probe(tmp_path, threads: list[str], forks: bool) -> list[dict]:
    """What a kernel saw under each thread count, started by a server of one thread."""
    script = tmp_path / "probe.py"
    script.write_text(PROBE)
    command = [sys.executable, str(script), str(tmp_path), *threads]
    if forks:
        command = [sys.executable, str(ROOT / "scripts" / "kernel_forks.py"), "run", *command]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    env.pop("ATTENTION_QA_KERNEL_FORKS", None)
    result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_a_forked_kernel_sees_what_an_ordinary_one_sees_and_other_settings_start_anew(tmp_path):
    forked, other = _probe(tmp_path, ["1", "2"], forks=True)
    (ordinary,) = _probe(tmp_path, ["1"], forks=False)
    assert forked["parent"] == forked["server"]  # forked from the server, not started anew
    assert ordinary["parent"] == ordinary["probe"]
    for key in ("threads", "cwd", "first_path", "backend", "shown", "sum"):
        assert forked[key] == ordinary[key], key
    assert forked["cwd"] == str(tmp_path)
    assert ["image/png", "text/plain"] in forked["shown"]
    # the server was started with one thread: a kernel of two is started the ordinary way,
    # the kernel command becoming the kernel
    assert other["parent"] == other["probe"]
    assert other["threads"] == 2


# Runs inside `kernel_forks.py run`: starts a kernel, has it start a child process, kills the
# kernel as nbval does at the end of a notebook (its kernel command, at once), and reports
# whether the kernel was forked, and whether it and its child are gone a moment later.
KILL = r"""
import json, os, time
from jupyter_client.manager import start_new_kernel

def parent(pid):
    with open(f"/proc/{pid}/stat") as f:
        return int(f.read().rsplit(")", 1)[1].split()[1])

def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"  # a zombie is only unreaped
    except FileNotFoundError:
        return False

manager, client = start_new_kernel(kernel_name="python3")
seen = []
client.execute_interactive(
    "import os, subprocess, sys\n"
    "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
    "print(os.getpid(), child.pid)",
    timeout=60, output_hook=lambda msg: seen.append(msg["content"].get("text", "")))
kernel, child = map(int, "".join(seen).split())
forked = parent(kernel) == os.getppid()
client.stop_channels()
manager.shutdown_kernel(now=True)
time.sleep(2)
print(json.dumps({"forked": forked, "kernel": alive(kernel), "child": alive(child)}))
"""


def _under_forks(tmp_path, script: str) -> dict:
    """What ``script`` printed last (JSON), run inside ``kernel_forks.py run``."""
    path = tmp_path / "script.py"
    path.write_text(script)
    command = [sys.executable, str(ROOT / "scripts" / "kernel_forks.py"), "run",
               sys.executable, str(path)]
    result = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_a_kernel_killed_by_jupyter_takes_what_it_started_with_it(tmp_path):
    seen = _under_forks(tmp_path, KILL)
    assert seen == {"forked": True, "kernel": False, "child": False}


# Runs inside `kernel_forks.py run`: starts a kernel, interrupts a cell that would sleep a
# minute (as Jupyter's stop button does: a signal to the kernel's process, here the kernel
# command, which passes it on), then runs another cell in the same kernel.
INTERRUPT = r"""
import json, os, time
from jupyter_client.manager import start_new_kernel

manager, client = start_new_kernel(kernel_name="python3")
seen = []
client.execute_interactive("import os; print(os.getppid())", timeout=60,
                           output_hook=lambda msg: seen.append(msg["content"].get("text", "")))
forked = int("".join(seen)) == os.getppid()
started = time.monotonic()
client.execute("import time; time.sleep(60)")
time.sleep(1)  # the cell is running
manager.interrupt_kernel()
reply = client.get_shell_msg(timeout=30)
interrupted = {"status": reply["content"]["status"], "ename": reply["content"].get("ename"),
               "seconds": time.monotonic() - started}
after = client.execute_interactive("1 + 1", timeout=30, output_hook=lambda msg: None)
client.stop_channels()
manager.shutdown_kernel(now=True)
print(json.dumps({"forked": forked, **interrupted, "after": after["content"]["status"]}))
"""


def test_interrupting_a_forked_kernel_stops_the_cell_and_keeps_the_kernel(tmp_path):
    seen = _under_forks(tmp_path, INTERRUPT)
    assert seen["forked"] is True
    assert (seen["status"], seen["ename"], seen["after"]) == ("error", "KeyboardInterrupt", "ok")
    assert seen["seconds"] < 50  # stopped, not slept out
