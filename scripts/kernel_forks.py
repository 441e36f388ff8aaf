"""Start notebook kernels by forking one that has already imported PyTorch and matplotlib.

`make test` runs every chapter three times (nbval under two machine settings, the
determinism check under a third), each in a new kernel, and a new kernel spends two to three
seconds of processor time importing PyTorch, NumPy, matplotlib and the book's checkers before
the chapter's first line: some 140 kernels, five minutes of the two cores. So each of those
stages runs under

    python scripts/kernel_forks.py run CMD ...

which imports those modules once (in this process, the *server*, under the stage's own
machine settings), then runs CMD with a ``python3`` kernel spec of its own first on the
kernel search path. That spec's command (``kernel_forks.py kernel -f FILE``) asks the server
for a kernel; the server forks, and the child, with the kernel command's working folder,
environment, standard streams and ``sys.path``, becomes an ordinary ipykernel (as
``python -m ipykernel_launcher -f FILE`` would). The kernel command stays alive as the
kernel's process for Jupyter: it passes signals on (interrupt, terminate, kill) to the
kernel's process group, exits with the kernel's status, and when it is killed outright the
kernel's group is killed with it (the kernel watches a pipe from it).

A forked kernel starts as a new one would: nothing has run in the server but imports, a
chapter's own ``import torch`` binds the module as before, and the generators a new process
seeds from the system's entropy (Python's, NumPy's and PyTorch's global ones) are seeded
again so in each kernel. What a library reads once, when it is loaded (the thread count,
PyTorch's CPU capability, MKL's code path, matplotlib's folders, the locale, Python's start-up
settings), is the server's: so the server forks only for a kernel command whose environment
has the same values of those variables, and otherwise the kernel command starts an ordinary
kernel itself; so does a kernel command with no server to ask. matplotlib's backend is read
when it is imported too: the server imports it under the inline backend ipykernel gives its
kernels. One difference stays: the kernels of one stage share the server's hash seed (the
order in which a set of strings is walked), where new interpreters would draw one each.
"""

from __future__ import annotations

import importlib.util
import json
import os
import random
import select
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

SOCKET_VARIABLE = "ATTENTION_QA_KERNEL_FORKS"
# Read when a library loads or the interpreter starts, so they must match the server's.
PREFIXES = ("OMP_", "KMP_", "GOMP_", "MKL_", "OPENBLAS_", "ATEN_", "TORCH_", "PYTORCH_", "NPY_",
            "NUMPY_", "MPL", "PYTHON", "LD_", "LANG", "LC_", "HOME", "XDG_", "TZ")
# What every chapter imports first.
PRELOAD = ("numpy", "torch", "matplotlib.pyplot", "attention_qa.checks")
# matplotlib reads MPLBACKEND when it is imported, and ipykernel sets it to this in its kernel
# where it is unset: the server imports matplotlib under what the kernel will have.
INLINE_BACKEND = "module://matplotlib_inline.backend_inline"
HERE = str(Path(__file__).resolve().parent)
STREAMS = 3  # stdin, stdout, stderr; then the read end of the kernel command's pipe
# What the kernel command passes on to the kernel (interrupt, terminate, hang up, quit)
FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT)


def _startup_settings(env) -> dict:
    return {k: v for k, v in env.items() if k.startswith(PREFIXES)}


# A message: 4 bytes of length, then JSON; descriptors ride with its first bytes.


def _send(conn: socket.socket, message: dict, fds=()) -> None:
    body = json.dumps(message).encode()
    socket.send_fds(conn, [struct.pack(">I", len(body)) + body], list(fds))


def _receive(conn: socket.socket) -> tuple[dict | None, list[int]]:
    """One message and the descriptors sent with it; (None, ...) at the end of the stream.
    Reads exactly one message, so the next one stays for the next call."""
    head, fds, _, _ = socket.recv_fds(conn, 4, STREAMS + 1)
    head = _fill(conn, head, 4)
    if head is None:
        return None, fds
    body = _fill(conn, b"", struct.unpack(">I", head)[0])
    return (None if body is None else json.loads(body)), fds


def _fill(conn: socket.socket, data: bytes, size: int) -> bytes | None:
    while len(data) < size:
        more = conn.recv(size - len(data))
        if not more:
            return None
        data += more
    return data


# ----- the kernel command: what Jupyter starts -------------------------------------------


def kernel(argv: list[str]) -> int:
    """Ask the server for a kernel and stand in for it; or start an ordinary one."""
    ordinary = [sys.executable, "-m", "ipykernel_launcher", *argv]
    path = os.environ.get(SOCKET_VARIABLE)
    if not path:
        os.execv(sys.executable, ordinary)
    pending: list[int] = []  # signals that came before the kernel did
    for signum in FORWARDED:
        signal.signal(signum, lambda s, _f: pending.append(s))
    alive, watch = os.pipe()  # the kernel watches `alive`: end of file when this process ends
    conn = socket.socket(socket.AF_UNIX)
    try:
        conn.connect(path)
        request = {"argv": argv, "cwd": os.getcwd(), "env": dict(os.environ)}
        _send(conn, request, fds=[0, 1, 2, alive])
        answer, _ = _receive(conn)
    except (OSError, ValueError):
        answer = None
    os.close(alive)
    if not answer or "pid" not in answer:  # no server, or other settings: start it here
        conn.close()
        os.close(watch)
        for signum in FORWARDED:
            signal.signal(signum, signal.SIG_DFL)
        os.execv(sys.executable, ordinary)
    group = answer["pid"]  # the kernel leads its own process group
    for signum in FORWARDED:
        signal.signal(signum, lambda s, _f: _forward(group, s))
    for signum in pending:
        _forward(group, signum)
    try:
        ended, _ = _receive(conn)  # the server says when the kernel has exited
    except (OSError, ValueError):
        ended = None
    status = int(ended["status"]) if ended else 1
    if status < 0:  # ended by a signal: end the same way
        signal.signal(-status, signal.SIG_DFL)
        os.kill(os.getpid(), -status)
    return status


def _forward(group: int, signum: int) -> None:
    try:
        os.killpg(group, signum)
    except ProcessLookupError:
        pass


# ----- the server ---------------------------------------------------------------------


def _become_kernel(request: dict, fds: list[int]) -> None:
    """In the forked child: take the kernel command's streams, folder, environment and
    path, then run ipykernel as ``python -m ipykernel_launcher`` would. Never returns."""
    status = 1
    try:
        streams, alive = fds[:STREAMS], fds[STREAMS]
        for target, fd in enumerate(streams):
            if fd != target:
                os.dup2(fd, target)
                os.close(fd)
        os.setsid()  # its own session and process group, as Jupyter gives a kernel
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        # `python -m ipykernel_launcher` starts with the launcher's path as argv[0] and
        # without this script's folder on sys.path (IPython puts the working folder back)
        sys.path.remove(HERE)
        sys.argv = [importlib.util.find_spec("ipykernel_launcher").origin, *request["argv"]]
        _reseed()
        signal.signal(signal.SIGINT, signal.default_int_handler)  # as in a new interpreter
        for signum in (signal.SIGTERM, signal.SIGCHLD):
            signal.signal(signum, signal.SIG_DFL)
        threading.Thread(target=_end_with_command, args=(alive,), daemon=True).start()
        from ipykernel import kernelapp

        kernelapp.launch_new_instance()
        status = 0
    except SystemExit as stop:
        status = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
    except BaseException:
        import traceback

        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(status)


def _reseed() -> None:
    """Seed from the system's entropy what a new interpreter would."""
    import numpy as np
    import torch

    random.seed()
    np.random.seed()
    torch.seed()


def _end_with_command(alive: int) -> None:
    """When the kernel command is gone (killed, not asked to shut down), so is the kernel,
    with everything it started, as when Jupyter kills a kernel's process group."""
    while os.read(alive, 1):
        pass
    os.killpg(0, signal.SIGKILL)


def _serve_one(conn: socket.socket, settings: dict, kernels: dict, server: socket.socket) -> None:
    conn.settimeout(30)  # a kernel command sends its request at once
    request, fds = _receive(conn)
    if request is None or len(fds) != STREAMS + 1 or _startup_settings(request["env"]) != settings:
        for fd in fds:
            os.close(fd)
        _send(conn, {"refused": "other startup settings"})
        conn.close()
        return
    pid = os.fork()
    if pid == 0:
        try:
            for inherited in (conn, server, *kernels.values()):  # the server's, not the kernel's
                inherited.close()
            _become_kernel(request, fds)
        finally:
            os._exit(1)  # never back into the server's loop
    for fd in fds:
        os.close(fd)
    kernels[pid] = conn
    _send(conn, {"pid": pid})


def _reap(kernels: dict) -> None:
    """Tell each kernel command whose kernel has exited how it exited."""
    for pid in list(kernels):
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            conn = kernels.pop(pid)
            try:
                _send(conn, {"status": os.waitstatus_to_exitcode(status)})
            except OSError:
                pass  # its kernel command is gone
            conn.close()


def run(command: list[str]) -> int:
    """Run ``command`` with kernels forked from this process.

    One thread does everything (accept, fork, reap), so that a fork copies no other
    thread's half-held lock."""
    from jupyter_client.kernelspec import KernelSpecManager

    settings = _startup_settings(os.environ)  # as the kernel commands will have them
    os.environ.setdefault("MPLBACKEND", INLINE_BACKEND)
    for name in PRELOAD:
        __import__(name)
    if "MPLBACKEND" not in settings:  # the command and its kernel commands start without it
        del os.environ["MPLBACKEND"]
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # the clean-up below runs
    with tempfile.TemporaryDirectory(prefix="aqa-kernels-") as scratch:
        spec_dir = Path(scratch) / "kernels" / "python3"
        spec_dir.mkdir(parents=True)
        # the installed python3 spec, started through this script
        spec = KernelSpecManager().get_kernel_spec("python3").to_dict()
        spec["argv"] = [sys.executable, str(Path(__file__).resolve()), "kernel",
                        "-f", "{connection_file}"]
        (spec_dir / "kernel.json").write_text(json.dumps(spec))
        path = str(Path(scratch) / "server.sock")
        server = socket.socket(socket.AF_UNIX)
        server.bind(path)
        server.listen(16)
        env = {
            **os.environ,
            SOCKET_VARIABLE: path,
            "JUPYTER_PATH": os.pathsep.join(
                [scratch, *filter(None, [os.environ.get("JUPYTER_PATH")])]
            ),
        }
        kernels: dict[int, socket.socket] = {}
        child = subprocess.Popen(command, env=env)
        try:
            while child.poll() is None:
                ready, _, _ = select.select([server], [], [], 0.1)
                if ready:
                    conn, _ = server.accept()
                    try:
                        _serve_one(conn, settings, kernels, server)
                    except (OSError, ValueError):  # that kernel command is gone: not the rest
                        conn.close()
                _reap(kernels)
        finally:
            if child.poll() is None:
                child.kill()
            server.close()
            for pid in kernels:  # a kernel left behind by a command that was stopped
                _forward(pid, signal.SIGKILL)
        return child.returncode


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "kernel":
        sys.exit(kernel(sys.argv[2:]))
    if len(sys.argv) > 2 and sys.argv[1] == "run":
        sys.exit(run(sys.argv[2:]))
    raise SystemExit("usage: kernel_forks.py run CMD ... | kernel -f CONNECTION_FILE")
