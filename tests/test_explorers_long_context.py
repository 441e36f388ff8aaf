import pytest

from attention_qa.explorers.long_context import SINKS, WINDOWS, N, streaming_explorer
from attention_qa.masks import sink_window_mask


def _fig(name, **settings):
    return float(streaming_explorer().frame(**settings).figures[name].split()[0])


def test_every_setting_computes_and_the_mask_is_the_lesson_mask():
    explorer = streaming_explorer()
    assert explorer.num_frames == len(WINDOWS) * len(SINKS) <= 200
    for settings in explorer.settings():
        frame = explorer.frame(**settings)
        assert frame.data["mask"].equal(sink_window_mask(N, settings["window"], settings["sinks"]))
        kept = settings["window"] + settings["sinks"]
        assert frame.figures["keys the last query keeps"] == f"{kept} of {N}"


@pytest.mark.parametrize("window", WINDOWS)
def test_keeping_the_sink_cuts_the_error(window):
    without = _fig("mean error over queries", window=window, sinks=0)
    with_sink = _fig("mean error over queries", window=window, sinks=1)
    assert without > 0.3 and with_sink < 0.15
    assert _fig("full attention's weight on them", window=window, sinks=0) < 0.3


def test_a_wide_window_without_sinks_is_worse_than_a_narrow_one_with_a_sink():
    assert _fig("mean error over queries", window=max(WINDOWS), sinks=0) > _fig(
        "mean error over queries", window=1, sinks=1
    )


def test_with_a_sink_a_wider_window_errs_less():
    errors = [_fig("error of the last query", window=w, sinks=1) for w in (1, 4, 8)]
    assert errors[0] > errors[1] > errors[2]
