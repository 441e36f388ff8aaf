"""Run a command and record how long it took: `python scripts/timed.py STAGE CMD ...`.

`make test` runs each of its stages through this, so `make bench` can report where the time
goes. The seconds go to benchmarks/results/stages/STAGE.json; the exit status is the
command's. Nothing here decides whether a check passes.
"""

import json
import resource
import subprocess
import sys
import time
from pathlib import Path

STAGES = Path(__file__).resolve().parent.parent / "benchmarks" / "results" / "stages"


def main(argv: list[str]) -> int:
    stage, command = argv[0], argv[1:]
    start, before = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
    status = subprocess.call(command)
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    # processor seconds of the stage and all it started: beside the wall time, this says
    # whether a stage kept its core busy or waited (on a browser, a kernel, the disk)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    STAGES.mkdir(parents=True, exist_ok=True)
    record = {"stage": stage, "seconds": round(seconds, 1), "cpu_seconds": round(cpu, 1),
              "exit_status": status}
    (STAGES / f"{stage}.json").write_text(json.dumps(record) + "\n")
    print(f"[{stage}: {seconds:.0f} s, {cpu:.0f} s of processor time]", flush=True)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
