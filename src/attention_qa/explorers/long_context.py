"""q30's explorer: StreamingLLM's cache, a few sink keys plus a window of recent keys.

A causal head that parks most of its weight on token 0 and reads the last few tokens with
the rest (``long_context.sink_head``, the pattern Xiao et al., 2024, found in Llama-2) is
attended to twice: with every earlier key, and with only the keys ``sink_window_mask`` keeps,
the softmax renormalised over them. The panel shows which keys each query keeps (sinks,
window, evicted) and the last query's weights both ways; the figures give how much of full
attention's weight the kept keys held and the error of the outputs.
"""

import numpy as np

from attention_qa.long_context import streaming_attention
from attention_qa.panel import Control, Explorer, Frame, View
from attention_qa.panel.palette import BLUE, INK_LIGHT, PURPLE

N = 32
WINDOWS = (1, 2, 3, 4, 6, 8)
SINKS = (0, 1, 2, 4)

SINK = (0.667, 0.2, 0.467, 1.0)  # Tol purple #aa3377: a sink key kept
WINDOW = (0.267, 0.467, 0.667, 1.0)  # Tol blue #4477aa: a key of the window
EVICTED = (0.733, 0.733, 0.733, 1.0)  # Tol grey #bbbbbb: causal, but evicted
FUTURE = (1.0, 1.0, 1.0, 1.0)  # after the query: never visible


def streaming_frame(window: int, sinks: int) -> Frame:
    data = streaming_attention(N, window, sinks)
    kept = int(data["mask"][-1].sum())
    figures = {
        "keys the last query keeps": f"{kept} of {N}",
        "full attention's weight on them": f"{data['mass'][-1].item():.2f}",
        "error of the last query": f"{data['error'][-1].item():.2f}",
        "mean error over queries": f"{data['error'].mean().item():.2f}",
    }
    return Frame(data=data, figures=figures)


def kept_image(mask: np.ndarray, sinks: int) -> np.ndarray:
    """An (n, n, 4) image of a sink-plus-window mask: sinks, window, evicted, future."""
    n = len(mask)
    i, j = np.indices((n, n))
    image = np.empty((n, n, 4))
    image[:] = FUTURE
    image[j <= i] = EVICTED
    image[mask] = WINDOW
    image[mask & (j < sinks)] = SINK
    return image


class StreamingView(View):
    figsize = (6.4, 3.1)

    def setup(self, fig):
        self.ax_mask, self.ax_w = fig.subplots(1, 2, width_ratios=(1, 1.25))
        self.image = self.ax_mask.imshow(np.ones((N, N, 4)), animated=True,
                                         interpolation="nearest")
        ticks = range(0, N, 8)
        self.ax_mask.set(title="keys kept", xlabel="key j", ylabel="query i",
                         xticks=ticks, yticks=ticks)
        keys = np.arange(N)
        self.full_bars = self.ax_w.bar(keys, np.zeros(N), width=0.9, color="none",
                                       edgecolor=INK_LIGHT, label="full", animated=True)
        self.kept_bars = self.ax_w.bar(keys, np.zeros(N), width=0.6, color=BLUE,
                                       label="kept", animated=True)
        self.ax_w.set(title=f"query {N - 1}'s weights", xlabel="key j", ylim=(0, 1),
                      xlim=(-1, N), xticks=ticks)
        self.ax_w.legend(loc="upper center", frameon=False)

    def update(self, data):
        mask = data["mask"].numpy()
        self.image.set_data(kept_image(mask, data["sinks"]))
        for bar, height in zip(self.full_bars, data["full"][-1].tolist(), strict=True):
            bar.set_height(height)
        for j, (bar, height) in enumerate(zip(self.kept_bars, data["weights"][-1].tolist(),
                                              strict=True)):
            bar.set_height(height)
            bar.set_color(PURPLE if j < data["sinks"] else BLUE)


def streaming_explorer() -> Explorer:
    """window × sinks → which keys each query keeps, the last query's weights, the error."""
    return Explorer(
        "StreamingLLM: sink keys plus a sliding window",
        [
            Control("window", "window w", WINDOWS, default=4),
            Control("sinks", "sink keys", SINKS, default=0),
        ],
        streaming_frame,
        StreamingView(),
        caption=(
            f"{N} tokens; purple: the sink keys kept, blue: the window of the last w keys "
            "(the query's own included), grey: evicted, white: the future. The head puts "
            "most of its weight on token 0, whose value is zero, and the rest on recent "
            "tokens. Error: RMS of (kept-keys output − full output) over the 16 components; "
            "values have variance 1."
        ),
    )
