"""Live explorer update latency: ours against the naive ``interactive_output`` re-plot.

Both run in a real IPython kernel with matplotlib's inline backend, as a notebook would.
A control change is timed from setting the slider's value to the end of the redraw
(ipywidgets calls observers synchronously). Each setting is visited once, so neither side
is helped by a cache. Ours moves the artists of one persistent figure and redraws only
them; the naive panel builds, draws and shows a new figure on every change.

Usage: python benchmarks/explorer_latency.py [--changes N]   (prints JSON)
"""

import argparse
import json
import sys

from jupyter_client.manager import start_new_kernel

KERNEL_CODE = r"""
import json, statistics, time
import ipywidgets as widgets
import matplotlib.pyplot as plt
from IPython.display import display
from attention_qa.explorers import saturation_explorer
from attention_qa.explorers.saturation import SaturationView, saturation_frame

CHANGES = {changes}
values = saturation_explorer().controls[0].values  # d_k
sequence = [values[i % len(values)] for i in range(1, CHANGES + 1)]
settings = [dict(scaling=s, m=m) for s in ("none", "1/√d_k", "1/d_k") for m in (8, 32, 128)]

def ours():
    explorer = saturation_explorer()
    panel = explorer.widget()
    times = []
    for i, d_k in enumerate(sequence):
        other = settings[i % len(settings)]
        panel.controls["scaling"].value = other["scaling"]
        panel.controls["m"].value = other["m"]
        explorer._frames.clear()  # no help from the frame cache
        panel._png.clear()
        start = time.perf_counter()
        panel.controls["d_k"].value = d_k
        times.append(time.perf_counter() - start)
    return times

def naive():
    state = {{}}
    def draw(d_k, scaling, m):
        frame = saturation_frame(d_k, scaling, m)
        fig = plt.figure(figsize=SaturationView.figsize, dpi=100, layout="constrained")
        view = SaturationView()
        view.setup(fig)
        view.update(frame.data)
        plt.show()
    controls = dict(
        d_k=widgets.SelectionSlider(options=values, value=64),
        scaling=widgets.Dropdown(options=["none", "1/√d_k", "1/d_k"], value="1/√d_k"),
        m=widgets.SelectionSlider(options=[8, 32, 128], value=32),
    )
    out = widgets.interactive_output(draw, controls)
    times = []
    for i, d_k in enumerate(sequence):
        other = settings[i % len(settings)]
        controls["scaling"].value = other["scaling"]
        controls["m"].value = other["m"]
        start = time.perf_counter()
        controls["d_k"].value = d_k
        times.append(time.perf_counter() - start)
    return times

ours(); naive()  # warm up imports and font caches
o, n = ours(), naive()
result = dict(
    explorer="saturation_explorer (q04)",
    changes=len(o),
    ours_median_ms=1000 * statistics.median(o),
    naive_median_ms=1000 * statistics.median(n),
)
result["speedup"] = result["naive_median_ms"] / result["ours_median_ms"]
print("RESULT " + json.dumps(result))
"""


def measure(changes: int) -> dict:
    km, kc = start_new_kernel(kernel_name="python3")
    lines = []
    try:
        kc.execute_interactive(
            "%matplotlib inline\n" + KERNEL_CODE.format(changes=changes),
            output_hook=lambda msg: lines.append(msg["content"].get("text", "")),
            timeout=600,
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
    parser.add_argument("--changes", type=int, default=40)
    print(json.dumps(measure(parser.parse_args(argv).changes), indent=2))


if __name__ == "__main__":
    main(sys.argv[1:])
