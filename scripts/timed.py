"""Run a command and record how long it took: `python scripts/timed.py STAGE CMD ...`.

`make test` runs each of its stages through this, so `make bench` can report where the time
goes. The seconds go to benchmarks/results/stages/STAGE.json; the exit status is the
command's. Nothing here decides whether a check passes.
"""

import json
import subprocess
import sys
import time
from pathlib import Path

STAGES = Path(__file__).resolve().parent.parent / "benchmarks" / "results" / "stages"


def main(argv: list[str]) -> int:
    stage, command = argv[0], argv[1:]
    start = time.perf_counter()
    status = subprocess.call(command)
    seconds = time.perf_counter() - start
    STAGES.mkdir(parents=True, exist_ok=True)
    record = {"stage": stage, "seconds": round(seconds, 1), "exit_status": status}
    (STAGES / f"{stage}.json").write_text(json.dumps(record) + "\n")
    print(f"[{stage}: {seconds:.0f} s]", flush=True)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
