"""q04's explorer (saturation): every setting, its figures, and both of its panels."""

import base64
import re

from attention_qa.explorers import saturation_explorer
from attention_qa.panel import BUILD_ENV, Frame, described, frames_payload

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


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
        assert base64.b64decode(image.split(",", 1)[1]).startswith(PNG_MAGIC)
    for index, record in enumerate(payload["frames"]):
        alt = described(payload, index)
        assert record["i"] >= 0 and "d_k = " in alt and "max weight" in alt


def test_q04_figures_saturate_without_scaling():
    explorer = saturation_explorer()
    small = explorer.frame(d_k=1, scaling="none", m=32).figures
    large = explorer.frame(d_k=1024, scaling="none", m=32).figures
    assert float(large["max weight"]) > 0.9 > float(small["max weight"])
    assert float(large["Jacobian norm"]) < float(small["Jacobian norm"])
    scaled = explorer.frame(d_k=1024, scaling="1/√d_k", m=32).figures
    assert abs(float(scaled["score std"]) - 1) < 0.1


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
    html = saturation_explorer().to_html(all_frames=False)  # the controls, not the frames
    assert html.count('type="range"') == 2  # d_k and m are numeric
    assert html.count("<select") == 1  # scaling is a choice of words
    assert re.search(r'<label for="aqa-[0-9a-f]+-d_k">d_k</label>', html)
