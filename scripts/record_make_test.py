"""Write benchmarks/results/make_test.json: make test's wall time, each stage's wall time
and processor time.

`python scripts/record_make_test.py SECONDS`, run by `make test` after every stage passed.
"""

import json
import sys
import time
from pathlib import Path

RESULTS = Path(__file__).resolve().parent.parent / "benchmarks" / "results"


def main(argv: list[str]) -> None:
    records = [json.loads(p.read_text()) for p in sorted(RESULTS.glob("stages/*.json"))]
    summary = {
        "make_test_s": int(argv[0]),
        "date": time.strftime("%Y-%m-%d", time.gmtime()),
        "stages_s": {r["stage"]: r["seconds"] for r in records},
        # processor seconds of each stage and all it started (both cores are shared)
        "stages_cpu_s": {r["stage"]: r["cpu_seconds"] for r in records if "cpu_seconds" in r},
    }
    (RESULTS / "make_test.json").write_text(json.dumps(summary) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
