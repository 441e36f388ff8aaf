"""Write benchmarks/results/make_test.json: make test's wall time and each stage's time.

`python scripts/record_make_test.py SECONDS`, run by `make test` after every stage passed.
"""

import json
import sys
import time
from pathlib import Path

RESULTS = Path(__file__).resolve().parent.parent / "benchmarks" / "results"


def main(argv: list[str]) -> None:
    stages = {
        record["stage"]: record["seconds"]
        for record in (json.loads(p.read_text()) for p in sorted(RESULTS.glob("stages/*.json")))
    }
    summary = {
        "make_test_s": int(argv[0]),
        "date": time.strftime("%Y-%m-%d", time.gmtime()),
        "stages_s": stages,
    }
    (RESULTS / "make_test.json").write_text(json.dumps(summary) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
