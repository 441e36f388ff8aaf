"""`make bench`: the book's speed and size figures, printed as a table and saved as JSON.

Measures, on this machine:
- live update latency of every explorer, ours vs the naive ``interactive_output`` re-plot
  (target: median within one frame, 16.7 ms, and ≥ 4× faster, each);
- cold book build (_build cleared: every explorer panel rendered anew), warm rebuild after a
  prose change (target ≤ 30 s), and the nbval suite;
- built page weight (budget ≤ 3 MB a page, ≤ 60 MB each edition) and committed notebook size
  (budget ≤ 1 MB each);
- what a reader's browser transfers (Chromium, ``site_weight.py``): a first visit to each
  chapter (budget 1.5 MB, target 90 % of it) and the next chapter after it (budget 500 kB,
  target 90 %), and the time
  from a key press on an explorer's slider to its new frame on screen;
- the attention benchmarks of the later chapters, where present.

Usage: python benchmarks/run.py [--quick] [--make-test] [--json PATH]
  --quick skips the cold build and the nbval suite (the slow parts).
  --make-test runs and times a whole `make test` from an empty _build, as CI does on a clean
  clone (target: at most 15 minutes on two cores);
  without it the table reports the time the last `make test` recorded, with its date, and
  the time of each of its stages.

The figures go to benchmarks/results.json, and as a table to benchmarks/results.md, which
the book's "How this book is tested" page includes.
"""

import argparse
import json
import platform
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
JB = str(Path(PY).parent / "jupyter-book")
RESULTS = ROOT / "benchmarks" / "results.json"
TABLE = ROOT / "benchmarks" / "results.md"  # included by book/testing.md
MB = 1_000_000
LAST_MAKE_TEST = ROOT / "benchmarks" / "results" / "make_test.json"  # written by `make test`


def timed(cmd: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def build_times(cold: bool) -> dict:
    figures = {}
    if cold:
        shutil.rmtree(ROOT / "_build", ignore_errors=True)
        figures["cold_build_s"] = timed([JB, "build", ".", "-W", "-n", "--keep-going", "-q"])
        figures["cold_build_zh_s"] = timed([PY, "scripts/build_language.py", "zh_CN"])
    intro = ROOT / "book" / "intro.md"
    text = intro.read_text()
    try:  # a prose-only change, as an author makes between builds
        intro.write_text(text + "\n")
        figures["warm_rebuild_s"] = timed([JB, "build", ".", "-W", "-n", "--keep-going", "-q"])
    finally:
        intro.write_text(text)
    return figures


def page_weights() -> dict:
    site = ROOT / "_build" / "html"
    pages = {
        str(p.relative_to(site)): p.stat().st_size
        for p in site.rglob("*.html")
        if "_static" not in p.parts
    }
    files = [p for p in site.rglob("*") if p.is_file()]
    chinese = sum(p.stat().st_size for p in files if p.is_relative_to(site / "zh"))
    heaviest = max(pages, key=pages.get)
    return {
        "heaviest_page": heaviest,
        "heaviest_page_mb": pages[heaviest] / MB,
        "q04_page_mb": pages.get("book/q04_why_scale_by_sqrt_dk.html", 0) / MB,
        "site_mb": (sum(p.stat().st_size for p in files) - chinese) / MB,
        "site_zh_mb": chinese / MB,
        "pages_over_3mb": sorted(p for p, size in pages.items() if size > 3 * MB),
    }


def notebook_sizes() -> dict:
    sizes = {p.name: p.stat().st_size for p in (ROOT / "book").glob("*.ipynb")}
    biggest = max(sizes, key=sizes.get)
    return {
        "largest_notebook": biggest,
        "largest_notebook_mb": sizes[biggest] / MB,
        "notebooks_over_1mb": sorted(n for n, size in sizes.items() if size > MB),
    }


def script_json(script: str, *args: str) -> dict | None:
    path = ROOT / "benchmarks" / script
    if not path.exists():
        return None
    out = ROOT / "benchmarks" / "results" / (path.stem + ".json")
    subprocess.run([PY, str(path), *args, "--json", str(out)], cwd=ROOT, check=True)
    return json.loads(out.read_text())


def _stage_time(last_test: dict, stage: str) -> str:
    """A stage's wall time, and its processor time where it was recorded."""
    wall = f"{last_test['stages_s'][stage]:.0f} s"
    cpu = last_test.get("stages_cpu_s", {}).get(stage)
    return wall if cpu is None else f"{wall} (processor {cpu:.0f} s)"


def main(argv):
    parser = argparse.ArgumentParser(description="The book's benchmarks")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--make-test", action="store_true")
    parser.add_argument("--json", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    (ROOT / "benchmarks" / "results").mkdir(parents=True, exist_ok=True)
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import site_weight
    from explorer_latency import measure

    results = {"machine": f"{platform.machine()}, {platform.python_version()}"}
    results["latency"] = measure(changes=20)
    results["build"] = build_times(cold=not args.quick)
    if not args.quick:
        results["nbval_suite_s"] = timed([PY, "-m", "pytest", "--nbval", "book", "-q"])
    if args.make_test:  # from an empty _build, as on a clean clone: the build runs every notebook
        shutil.rmtree(ROOT / "_build", ignore_errors=True)
        subprocess.run(["make", "test"], cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    if LAST_MAKE_TEST.exists():
        results["make_test"] = json.loads(LAST_MAKE_TEST.read_text())
    results["pages"] = page_weights()
    results["notebooks"] = notebook_sizes()
    results["site"] = site_weight.measure() + site_weight.measure(edition="zh")
    for script in ("efficient_attention.py", "decode_cache.py"):
        results[Path(script).stem] = script_json(script)

    lat, build = results["latency"], results["build"]
    last_test = results.get("make_test", {})
    worst = max(lat, key=lambda r: r["ours_median_ms"])
    slowest_gain = min(lat, key=lambda r: r["speedup"])
    rows = [
        (
            "explorer update, slowest explorer (median)",
            f"{worst['ours_median_ms']:.1f} ms ({worst['chapter']})",
            "≤ 16.7 ms (one frame)",
        ),
        (
            "speed-up over the naive re-plot, least",
            f"{slowest_gain['speedup']:.1f}× ({slowest_gain['chapter']})",
            "≥ 4×",
        ),
        ("cold build", f"{build.get('cold_build_s', float('nan')):.0f} s", ""),
        ("cold build, Chinese edition", f"{build.get('cold_build_zh_s', float('nan')):.0f} s", ""),
        ("warm rebuild", f"{build['warm_rebuild_s']:.1f} s", "≤ 30 s"),
        ("nbval suite", f"{results.get('nbval_suite_s', float('nan')):.0f} s", ""),
        (
            f"make test, total (last run, {last_test.get('date')})",
            f"{last_test.get('make_test_s', float('nan')):.0f} s",
            "≤ 900 s",
        ),
        *(
            (f"make test stage: {stage}", _stage_time(last_test, stage), "")
            for stage in last_test.get("stages_s", {})
        ),
        ("q04 page", f"{results['pages']['q04_page_mb']:.2f} MB", "≤ 3 MB"),
        ("heaviest page", f"{results['pages']['heaviest_page_mb']:.2f} MB", "≤ 3 MB"),
        ("whole site, English", f"{results['pages']['site_mb']:.1f} MB", "≤ 60 MB"),
        ("whole site, Chinese", f"{results['pages']['site_zh_mb']:.1f} MB", "≤ 60 MB"),
        ("largest notebook", f"{results['notebooks']['largest_notebook_mb']:.2f} MB", "≤ 1 MB"),
        *site_weight.summary_rows(results["site"]),
    ]
    rows = [row for row in rows if not row[1].startswith("nan")]  # not measured this run
    table = "| figure | measured | target |\n|---|---|---|\n"
    table += "".join("| " + " | ".join(row) + " |\n" for row in rows)
    table += "\n| page | explorer | ours, median | naive re-plot, median | speed-up |\n"
    table += "|---|---|---|---|---|\n"
    table += "".join(
        f"| {r['chapter']} | `{r['explorer']}` | {r['ours_median_ms']:.1f} ms "
        f"| {r['naive_median_ms']:.0f} ms | {r['speedup']:.1f}× |\n"
        for r in lat
    )
    table += "\n" + site_weight.table(results["site"])
    print("\n" + table)
    stamp = time.strftime("%Y-%m-%d", time.gmtime())
    TABLE.write_text(f"Measured on {stamp}, {results['machine']}, by `make bench`.\n\n{table}")
    args.json.write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n")
    print(f"\nSaved {args.json.relative_to(ROOT) if args.json.is_relative_to(ROOT) else args.json}")


if __name__ == "__main__":
    main(sys.argv[1:])
