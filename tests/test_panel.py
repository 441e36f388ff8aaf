"""The panel engine (attention_qa.panel): frames, static HTML, live widget, on a toy explorer."""


import re

import numpy as np
import pytest

from attention_qa.panel import (
    Control,
    Explorer,
    Frame,
    InvalidSetting,
    View,
    described,
    frames_payload,
)

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


class LineView(View):
    figsize = (3, 2)

    def setup(self, fig):
        ax = fig.subplots()
        (self.line,) = ax.plot([0, 1], [0, 0], animated=True)
        ax.set_ylim(-5, 5)

    def update(self, data):
        self.line.set_ydata([0, data])


def toy_compute(a, b):
    if a == 0 and b == "broken":
        raise InvalidSetting("a = 0 cannot be combined with 'broken'")
    if a == 2 and b == "crash":
        raise ZeroDivisionError("division by zero")
    return Frame(data=a, figures={"a": str(a), "b": b})


def toy(**kwargs):
    return Explorer(
        "Toy",
        [Control("a", "a", (0, 1, 2)), Control("b", "b", ("ok", "broken", "crash"))],
        toy_compute,
        LineView(),
        **kwargs,
    )


def test_invalid_setting_shows_its_message():
    explorer = Explorer(
        "Toy",
        [Control("a", "a", (0, 1)), Control("b", "b", ("ok", "broken"))],
        toy_compute,
        LineView(),
    )
    payload = frames_payload(explorer.to_html())
    broken = payload["frames"][1]  # a = 0, b = "broken"
    assert broken["i"] == -1 and broken["m"] == "a = 0 cannot be combined with 'broken'"
    assert described(payload, 1) == "Toy at a = 0, b = broken: " + broken["m"]


def test_a_crash_at_build_time_names_the_setting():
    with pytest.raises(RuntimeError, match="'Toy' failed to compute {'a': 2, 'b': 'crash'}"):
        toy().to_html()


def test_identical_frames_share_one_image():
    explorer = Explorer("Same", [Control("a", "a", (1, 2, 3))], lambda a: Frame(0), LineView())
    payload = frames_payload(explorer.to_html())
    assert len(payload["frames"]) == 3 and len(payload["images"]) == 1


def test_frame_budget_and_control_checks():
    with pytest.raises(ValueError, match="over its frame budget of 4"):
        toy(frame_budget=4)
    with pytest.raises(ValueError, match="default 5 is not one of"):
        Control("a", "a", (1, 2), default=5)
    with pytest.raises(ValueError, match="2 labels for 3 values"):
        Control("a", "a", (1, 2, 3), labels=("x", "y"))
    with pytest.raises(ValueError, match="unique"):
        Explorer("Dup", [Control("a", "a", (1,)), Control("a", "b", (2,))], toy_compute, LineView())


def test_live_widget_updates_in_place_and_never_shows_a_traceback():
    panel = toy(lesson_errors=True).widget()
    first = bytes(panel.image.value)
    assert first.startswith(PNG_MAGIC) and "<b>0</b>" in panel.figures.value
    panel.controls["a"].value = 1
    assert bytes(panel.image.value) != first and "<b>1</b>" in panel.figures.value
    panel.controls["a"].value = 0
    panel.controls["b"].value = "broken"
    assert "cannot be combined" in panel.message.value
    assert panel.image.layout.visibility == "hidden"  # keeps its place on the page
    panel.controls["a"].value = 2
    panel.controls["b"].value = "crash"
    assert "could not be drawn (ZeroDivisionError: division by zero)" in panel.message.value
    assert "Traceback" not in panel.message.value
    panel.controls["b"].value = "ok"
    assert panel.message.value == "" and panel.image.layout.visibility is None


def two_knobs(a, b):
    if a + b > 3:
        raise InvalidSetting(f"a + b must be at most 3, got {a + b}")
    return Frame(data=a - b, figures={"a": str(a), "b": str(b)})


def knobs():
    return Explorer(
        "Knobs",
        [Control("a", "a", (0, 1, 2, 3), default=2), Control("b", "b", (0, 1, 2, 3), default=1)],
        two_knobs,
        LineView(),
    )


def test_an_invalid_choice_moves_the_other_controls_to_the_nearest_valid_setting():
    explorer = knobs()
    assert explorer.adjusted({"a": 2, "b": 1}, "a") == {"a": 2, "b": 1}  # valid: stays
    assert explorer.adjusted({"a": 3, "b": 1}, "a") == {"a": 3, "b": 0}
    assert explorer.adjusted({"a": 2, "b": 3}, "b") == {"a": 0, "b": 3}
    lesson = Explorer("L", knobs().controls, two_knobs, LineView(), lesson_errors=True)
    assert lesson.adjusted({"a": 3, "b": 1}, "a") == {"a": 3, "b": 1}


def test_a_value_valid_with_no_setting_is_an_authoring_error():
    explorer = Explorer(
        "Dead", [Control("a", "a", (1, 9)), Control("b", "b", (1, 2))], two_knobs, LineView()
    )
    with pytest.raises(ValueError, match="a = 9 is valid with no setting"):
        explorer.adjusted({"a": 9, "b": 1}, "a")


def test_the_live_panel_never_dead_ends():
    panel = knobs().widget()
    panel.controls["a"].value = 3
    assert panel.controls["b"].value == 0 and panel.message.value == ""
    assert "<b>3</b>" in panel.figures.value and panel.image.layout.visibility is None


def test_a_panels_figure_labels_are_written_once_and_read_back_as_pairs():
    from attention_qa.panel.static import compacted, expanded

    frames = [{"i": i, "f": [["max weight", f"0.{i}"], ["entropy", f"{i}.0"]], "m": None}
              for i in range(3)] + [{"i": -1, "f": [], "m": "heads must divide d_model"}]
    payload = {"title": "t", "frames": frames}
    small = compacted(payload)
    assert small["fl"] == ["max weight", "entropy"]
    assert small["frames"][0] == {"i": 0, "v": ["0.0", "0.0"], "m": None}
    assert small["frames"][3] == frames[3]  # a refused setting keeps its message
    assert expanded(small) == payload
    assert expanded(payload) == payload  # an uncompacted payload is left as it is
    # frames whose labels differ keep their pairs
    mixed = {"title": "t", "frames": [frames[0], {"i": 1, "f": [["other", "1"]], "m": None}]}
    assert compacted(mixed) == mixed


def test_the_built_panel_carries_compacted_data_and_its_expander():
    import re

    from attention_qa.panel.static import static_panel

    explorer = Explorer(
        "Toy",
        [Control("a", "a", (0, 1)), Control("b", "b", ("ok", "broken"))],
        toy_compute,
        LineView(),
    )
    full = static_panel(explorer, all_frames=True)  # the site's panel
    one = static_panel(explorer, all_frames=False)  # the notebook's copy, one frame
    assert '"fl":' in full and "frame.f = frame.v.map" in full
    assert '"fl":' not in one and "frame.f = frame.v.map" not in one
    default = int(re.search(r'data-aqa-frame="(\d+)"', full).group(1))
    assert frames_payload(full)["frames"][default]["f"] == frames_payload(one)["frames"][0]["f"]


def test_static_html_is_self_contained_and_deterministic():
    # any explorer would do: q03's has six frames, so the test renders them all twice quickly
    from attention_qa.explorers import step_explorer

    html = step_explorer().to_html(all_frames=True)
    assert 'data-aqa-frames="6"' in html
    assert not re.search(r"(https?:)?//[a-z0-9.-]+\.[a-z]{2,}", html, re.I), "external URL"
    assert "<script src" not in html
    assert html == step_explorer().to_html(all_frames=True)


@pytest.mark.parametrize("answer, state", [(None, False), (False, False), (True, True),
                                           (np.False_, False), (np.True_, True), (1, 1),
                                           (0, 0), ((1, "a"), (1, "a"))])
def test_a_view_answers_unchanged_redraw_or_a_key(answer, state):
    from attention_qa.panel.core import _still_state

    got = _still_state(answer)
    assert got == state and type(got) is type(state)


@pytest.mark.parametrize("answer", [[1, 2], np.zeros(2)])
def test_a_key_must_be_hashable_and_mean_one_state(answer):
    from attention_qa.panel.core import _still_state

    with pytest.raises(TypeError, match="hashable key"):
        _still_state(answer)


def test_a_key_that_equals_true_is_not_confused_with_a_redraw():
    # key 1 kept, then a redraw (True == 1 as a dict key): the redraw must draw, not reuse
    from attention_qa.panel import Control, Explorer, Frame, View

    class Keyed(View):
        figsize = (1, 1)

        def setup(self, fig):
            self.ax = fig.subplots()

        def update(self, data):
            self.ax.set_facecolor(data["colour"])  # the still part
            return data["answer"]

    answers = {"a": (1, "#ff0000"), "b": (True, "#0000ff")}
    explorer = Explorer("keys", [Control("x", "x", ("a", "b"))],
                        lambda x: Frame(data={"answer": answers[x][0], "colour": answers[x][1]}),
                        Keyed())
    first, second = (explorer.render(explorer.frame(x=x)) for x in ("a", "b"))
    fresh = Explorer("keys", [Control("x", "x", ("a", "b"))],
                     lambda x: Frame(data={"answer": answers[x][0], "colour": answers[x][1]}),
                     Keyed())
    assert second == fresh.render(fresh.frame(x="b")) != first


def test_cell_patches_fill_the_pixels_an_image_of_their_colours_fills():
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from attention_qa.panel.plots import boxes, cell_patches

    rows, cols = 3, 5
    colours = np.random.default_rng(0).integers(0, 256, (rows, cols, 4)).astype(np.uint8)
    colours[..., 3] = 255
    pictures = []
    for as_cells in (False, True):
        fig = Figure(figsize=(3, 2), dpi=100)
        FigureCanvasAgg(fig)
        ax = fig.subplots()
        if as_cells:
            i, j = np.divmod(np.arange(rows * cols), cols)
            cells = cell_patches(ax, boxes(j - 0.5, j + 0.5, i - 0.5, i + 0.5))
            assert not np.isfinite(ax.dataLim.get_points()).any()  # the limits are not moved
            cells.set_facecolor(colours.reshape(-1, 4) / 255)
            cells.set_animated(False)
        else:
            ax.imshow(colours, interpolation="nearest", extent=(-0.5, cols - 0.5, rows - 0.5, -0.5),
                      aspect="auto")
        ax.set(xlim=(-0.5, cols - 0.5), ylim=(rows - 0.5, -0.5))
        fig.canvas.draw()
        pictures.append(np.asarray(fig.canvas.buffer_rgba()).copy())
    assert (pictures[0] == pictures[1]).all()


def test_boxes_are_the_corners_of_each_rectangle_in_order():
    from attention_qa.panel.plots import boxes

    assert boxes(0, 1, 2, 3) == [[(0, 2), (1, 2), (1, 3), (0, 3)]]
    corners = boxes(np.array([0.0, 1.0]), np.array([1.0, 2.0]), 0, 1)
    assert [[tuple(map(float, c)) for c in box] for box in corners] == [
        [(0, 0), (1, 0), (1, 1), (0, 1)], [(1, 0), (2, 0), (2, 1), (1, 1)]]
