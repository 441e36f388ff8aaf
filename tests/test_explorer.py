"""The explorer mechanism and the q04 explorer: frames, static HTML, live widget."""

import base64
import re

import pytest
import torch

from attention_qa.explorer import BUILD_ENV, Control, Explorer, Frame, InvalidSetting, View
from attention_qa.explorer_html import frames_payload
from attention_qa.explorers import saturation_explorer

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


def test_every_q04_setting_computes_and_renders():
    explorer = saturation_explorer()
    assert explorer.num_frames == 11 * 3 * 3
    for settings in explorer.settings():
        frame = explorer.frame(**settings)
        assert isinstance(frame, Frame), settings
        assert set(frame.figures) == {"score std", "max weight", "entropy", "Jacobian norm"}
    html = explorer.to_html(all_frames=True)
    payload = frames_payload(html)
    assert len(payload["frames"]) == explorer.num_frames
    assert 'data-aqa-frames="99"' in html
    for image in payload["images"]:
        assert base64.b64decode(image).startswith(PNG_MAGIC)
    for record in payload["frames"]:
        assert record["i"] >= 0 and "d_k = " in record["a"] and "max weight" in record["a"]


def test_static_html_is_self_contained_and_deterministic():
    html = saturation_explorer().to_html(all_frames=True)
    assert not re.search(r"(https?:)?//[a-z0-9.-]+\.[a-z]{2,}", html, re.I), "external URL"
    assert "<script src" not in html
    assert html == saturation_explorer().to_html(all_frames=True)


def test_q04_figures_saturate_without_scaling():
    explorer = saturation_explorer()
    small = explorer.frame(d_k=1, scaling="none", m=32).figures
    large = explorer.frame(d_k=1024, scaling="none", m=32).figures
    assert float(large["max weight"]) > 0.9 > float(small["max weight"])
    assert float(large["Jacobian norm"]) < float(small["Jacobian norm"])
    scaled = explorer.frame(d_k=1024, scaling="1/√d_k", m=32).figures
    assert abs(float(scaled["score std"]) - 1) < 0.1


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
    assert "a = 0 cannot be combined" in broken["a"]


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
    panel = toy().widget()
    first = bytes(panel.image.value)
    assert first.startswith(PNG_MAGIC) and "<b>0</b>" in panel.figures.value
    panel.controls["a"].value = 1
    assert bytes(panel.image.value) != first and "<b>1</b>" in panel.figures.value
    panel.controls["a"].value = 0
    panel.controls["b"].value = "broken"
    assert "cannot be combined" in panel.message.value and panel.image.layout.display == "none"
    panel.controls["a"].value = 2
    panel.controls["b"].value = "crash"
    assert "could not be drawn (ZeroDivisionError: division by zero)" in panel.message.value
    assert "Traceback" not in panel.message.value
    panel.controls["b"].value = "ok"
    assert panel.message.value == "" and panel.image.layout.display is None


def test_one_output_two_representations(monkeypatch):
    explorer = saturation_explorer()
    monkeypatch.delenv(BUILD_ENV, raising=False)
    live = explorer._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in live
    assert (
        'data-aqa-frames="1"' in live["text/html"]
        and "holds the default setting" in live["text/html"]
    )
    monkeypatch.setenv(BUILD_ENV, "1")
    built = explorer._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" not in built
    assert 'data-aqa-frames="99"' in built["text/html"]


def test_slider_and_dropdown_controls_in_html():
    html = saturation_explorer().to_html()
    assert html.count('type="range"') == 2  # d_k and m are numeric
    assert html.count("<select") == 1  # scaling is a choice of words
    assert re.search(r'<label for="aqa-[0-9a-f]+-d_k">d_k</label>', html)


def test_q04_scores_have_the_variance_the_chapter_claims():
    from attention_qa.explorers.saturation import scaled_scores

    raw = scaled_scores(256, "none", m=128)
    assert abs(raw.var().item() / 256 - 1) < 0.1
    assert abs(scaled_scores(256, "1/√d_k", m=128).var().item() - 1) < 0.1
    assert torch.isclose(
        scaled_scores(256, "1/d_k", m=8) * 256, scaled_scores(256, "none", m=8)
    ).all()
