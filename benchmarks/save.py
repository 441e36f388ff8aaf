"""Shared by the benchmark scripts: write a result as JSON, if a path was given."""

import json


def save_json(result: dict, path: str | None) -> None:
    if path:
        with open(path, "w") as f:
            json.dump(result, f, indent=2)
            f.write("\n")
        print(f"\nwrote {path}")
