"""Live explorer update latency: ours against the naive ``interactive_output`` re-plot.

Both run in a real IPython kernel with matplotlib's inline backend, as a notebook would.
A control change is timed from setting a control's value to the end of the redraw
(ipywidgets calls observers synchronously). Each change lands on a setting not seen
before, so neither side is helped by a cache. Ours moves the artists of one persistent
figure and redraws only them; the naive panel, the usual ``interactive_output`` recipe,
builds, draws and shows a new figure with the same view on every change.

Every explorer of the book is measured (``attention_qa.explorers.BY_CHAPTER``).

Usage: python benchmarks/explorer_latency.py [--changes N] [--only CHAPTER ...]   (prints JSON)
"""

import argparse
import json
import sys

from jupyter_client.manager import start_new_kernel

KERNEL_CODE = r"""
import itertools, json, statistics, time
import ipywidgets as widgets
import matplotlib.pyplot as plt
from attention_qa.panel import Frame
from attention_qa.explorers import BY_CHAPTER

CHANGES = {changes}
ONLY = {only}

def walk(explorer):
    # A sequence of (control name, value) changes, each reaching a setting not seen before.
    names = [c.name for c in explorer.controls]
    current = dict(explorer.defaults)
    seen = {{tuple(current.values())}}
    for i in range(CHANGES):
        step = None
        for control in explorer.controls[i % len(names):] + explorer.controls[:i % len(names)]:
            for value in control.values:
                candidate = tuple({{**current, control.name: value}}.values())
                if candidate not in seen:
                    step = (control.name, value)
                    break
            if step:
                break
        if step is None:
            return
        current[step[0]] = step[1]
        seen.add(tuple(current.values()))
        yield step

def ours(builder):
    explorer = builder()
    panel = explorer.widget()
    times = []
    for name, value in walk(explorer):
        start = time.perf_counter()
        panel.controls[name].value = value
        times.append(time.perf_counter() - start)
    return times

def naive(builder):
    explorer = builder()
    view_type = type(explorer.view)

    def draw(**settings):
        frame = explorer.compute(**settings)
        fig = plt.figure(figsize=view_type.figsize, dpi=explorer.dpi, layout="constrained")
        view = view_type()
        view.setup(fig)
        if isinstance(frame, Frame):
            view.update(frame.data)
        plt.show()

    controls = {{
        c.name: widgets.Dropdown(options=list(zip(c.labels, c.values)), value=c.default)
        for c in explorer.controls
    }}
    widgets.interactive_output(draw, controls)
    times = []
    for name, value in walk(explorer):
        start = time.perf_counter()
        try:
            controls[name].value = value
        except Exception:
            pass
        times.append(time.perf_counter() - start)
    return times

results = []
for chapter, builders in BY_CHAPTER.items():
    if ONLY and chapter not in ONLY:
        continue
    for builder in builders:
        ours(builder)  # warm up imports, fonts and caches of module-level data
        o, n = ours(builder), naive(builder)
        results.append(dict(
            chapter=chapter, explorer=builder.__name__, changes=len(o),
            ours_median_ms=1000 * statistics.median(o),
            naive_median_ms=1000 * statistics.median(n),
        ))
        results[-1]["speedup"] = results[-1]["naive_median_ms"] / results[-1]["ours_median_ms"]
print("RESULT " + json.dumps(results))
"""


def measure(changes: int, only: tuple[str, ...] = ()) -> list[dict]:
    km, kc = start_new_kernel(kernel_name="python3")
    lines = []
    try:
        kc.execute_interactive(
            "%matplotlib inline\n" + KERNEL_CODE.format(changes=changes, only=repr(tuple(only))),
            output_hook=lambda msg: lines.append(msg["content"].get("text", "")),
            timeout=1800,
        )
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
    found = [line for line in "".join(lines).splitlines() if line.startswith("RESULT ")]
    if not found:
        raise RuntimeError("the kernel printed no result:\n" + "".join(lines))
    return json.loads(found[-1][len("RESULT ") :])


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--changes", type=int, default=20)
    parser.add_argument("--only", nargs="*", default=(), help="chapters, e.g. q02 playground")
    args = parser.parse_args(argv)
    print(json.dumps(measure(args.changes, args.only), indent=2))


if __name__ == "__main__":
    main(sys.argv[1:])
