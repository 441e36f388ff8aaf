"""What every explorer of the book must do, whatever it shows.

Each setting computes to a frame or is refused with a sentence; the static panel holds one
record per setting, with a PNG for each frame and alt text naming the setting and its
figures; the live panel's PNG decodes to the same size as the static one. The per-explorer
test files check what each explorer's figures mean.
"""

import base64
import functools
import io
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from attention_qa.explorers import BY_CHAPTER
from attention_qa.panel import (
    DEFAULT_FRAME_BUDGET,
    Frame,
    InvalidSetting,
    described,
    frames_payload,
)
from attention_qa.panel.legibility import legibility_problems

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "_ext"))
import book_frames  # noqa: E402

FRAMES = ROOT / book_frames.FRAMES_CACHE

BUILDERS = [
    pytest.param(builder, id=f"{chapter}-{builder.__name__}")
    for chapter, builders in BY_CHAPTER.items()
    for builder in builders
]


@functools.cache
def shared(builder):
    """One explorer per builder for the tests that read its frames, so that each frame is
    computed once; the test of drawing order builds fresh ones."""
    return builder()


def _image(png: bytes) -> Image.Image:
    image = Image.open(io.BytesIO(png))
    image.load()
    return image


@pytest.mark.parametrize("builder", BUILDERS)
def test_every_setting_is_a_frame_or_a_refusal_in_words(builder):
    explorer = shared(builder)
    assert explorer.num_frames <= DEFAULT_FRAME_BUDGET
    assert isinstance(explorer.frame(**explorer.defaults), Frame)
    for settings in explorer.settings():
        frame = explorer.frame(**settings)
        if isinstance(frame, InvalidSetting):
            assert len(str(frame).split()) >= 4, (settings, str(frame))
        else:
            assert isinstance(frame, Frame), settings
            assert frame.figures, settings
            assert all(isinstance(v, str) and v for v in frame.figures.values()), settings


@pytest.mark.parametrize("builder", BUILDERS)
def test_the_static_panel_holds_every_setting(builder):
    """The panel the site shows: rendered here, or by the build, whichever came first since
    the package last changed (_ext/book_frames.py keeps it in _build/.frames)."""
    explorer = shared(builder)
    payload = frames_payload(book_frames.cached_panel(builder, FRAMES, explorer))
    records = payload["frames"]
    assert len(records) == explorer.num_frames
    sizes = set()
    for index, (settings, record) in enumerate(zip(explorer.settings(), records, strict=True)):
        frame = explorer.frame(**settings)
        assert described(payload, index) == explorer.describe(settings, frame)  # the alt text
        if isinstance(frame, InvalidSetting):
            assert record["i"] == -1 and record["m"] == str(frame)
            continue
        sizes.add(_image(base64.b64decode(payload["images"][record["i"]].split(",", 1)[1])).size)
        assert record["f"] == [list(item) for item in frame.figures.items()]
    assert len(sizes) == 1, f"frames of one explorer differ in size: {sizes}"


@pytest.mark.parametrize("builder", BUILDERS)
def test_the_live_frame_is_the_static_frame_before_its_palette(builder):
    explorer = shared(builder)
    frame = explorer.frame(**explorer.defaults)
    live = np.asarray(_image(explorer.render(frame)).convert("RGB"), dtype=float)
    static = np.asarray(_image(explorer.render(frame, compact=True)).convert("RGB"), dtype=float)
    assert live.shape == static.shape
    assert np.abs(live - static).mean() < 4  # 96 colours lose a little, not the picture


@pytest.mark.parametrize("builder", BUILDERS)
def test_a_frame_looks_the_same_whatever_was_shown_before(builder):
    """Only the moving artists are redrawn between frames: none may keep a trace of the last."""
    used = builder()
    valid = [s for s in used.settings() if isinstance(used.frame(**s), Frame)]
    for settings in (valid[-1], valid[0], valid[len(valid) // 2]):
        used.render(used.frame(**settings))
    for settings in (used.defaults, valid[-1]):
        fresh = builder()
        expected = np.asarray(_image(fresh.render(fresh.frame(**settings))))
        drawn = np.asarray(_image(used.render(used.frame(**settings))))
        assert np.array_equal(drawn, expected), settings


def _reachable(explorer) -> list[dict]:
    """Every setting a reader can reach from the default by moving one control at a time."""
    seen, todo = [], [explorer.defaults]
    while todo:
        settings = todo.pop()
        if settings in seen:
            continue
        seen.append(settings)
        for control in explorer.controls:
            for value in control.values:
                moved = explorer.adjusted({**settings, control.name: value}, control.name)
                todo.append(moved)
    return seen


@pytest.mark.parametrize("builder", BUILDERS)
def test_no_control_leads_to_a_message_unless_the_message_is_the_lesson(builder):
    explorer = shared(builder)
    reached = _reachable(explorer)
    refused = [s for s in reached if not explorer.is_valid(s)]
    if explorer.lesson_errors:
        assert refused, "an explorer that teaches by its refusals must be able to show one"
    else:
        assert refused == [], refused[:3]


@pytest.mark.parametrize("builder", BUILDERS)
def test_every_value_of_every_control_changes_what_the_reader_sees(builder):
    explorer = shared(builder)
    for control in explorer.controls:
        shown = {}
        for value in control.values:
            settings = {**explorer.defaults, control.name: value}
            settings = explorer.adjusted(settings, control.name)
            frame = explorer.frame(**settings)
            if isinstance(frame, InvalidSetting):
                seen = str(frame)
            else:
                seen = (explorer.render(frame), tuple(frame.figures.items()))
            shown.setdefault(seen, []).append(value)
        same = [values for values in shown.values() if len(values) > 1]
        assert same == [], f"{control.label}: these values show the same thing: {same}"


@pytest.mark.parametrize("builder", BUILDERS)
def test_every_frame_is_readable_on_a_phone_and_nothing_is_cut(builder):
    """Text at least 9 CSS px at a 390 px phone's column and at a desktop's; none cut."""
    explorer = shared(builder)
    valid = [s for s in explorer.settings() if explorer.is_valid(s)]
    for settings in (explorer.defaults, valid[0], valid[-1], valid[len(valid) // 2]):
        explorer.render(explorer.frame(**settings))
        assert legibility_problems(explorer.figure) == [], settings
