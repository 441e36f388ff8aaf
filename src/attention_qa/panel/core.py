"""The panel engine's core: controls, frames, views, and the explorer that ties them.

An explorer is declared once, from three parts:

* ``controls`` — the knobs, each with a fixed list of values;
* ``compute(**settings)`` — pure: tensors in, a :class:`Frame` out (or :class:`InvalidSetting`);
* a :class:`View` — draws a frame's data into a matplotlib figure, updating it in place.

Displaying the explorer in a notebook gives one output with two representations:
an ipywidgets panel (``application/vnd.jupyter.widget-view+json``), which Jupyter shows,
and a self-contained HTML panel (``text/html``) whose controls switch between frames
rendered ahead of time, which the static site shows. When the book is built, the
environment variable ``ATTENTION_QA_BUILD`` is set (see ``_ext/attention_qa_build.py``) and the
HTML panel holds a frame for every combination of control values; elsewhere it holds the
default frame only, which keeps committed notebooks small.

This module knows nothing of either panel: ``static`` and ``live`` build on it, and
``attention_qa.panel.Explorer`` adds the two representations to :class:`ExplorerBase`.
"""

from __future__ import annotations

import hashlib
import html
import io
import itertools
import json
import math
from collections.abc import Hashable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Callable

import matplotlib
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from PIL import Image

from attention_qa.panel.i18n import ENGLISH, Translator, translate_figure
from attention_qa.panel.png import encode

BUILD_ENV = "ATTENTION_QA_BUILD"
# 12 pt: with figures at most ~6.4 in wide, text stays ≥ 9 CSS px on a phone (legibility.py)
_RC = {"font.size": 12}
DEFAULT_FRAME_BUDGET = 200


class InvalidSetting(ValueError):
    """Raised by ``compute`` for a combination of controls that has no meaning.

    The panel shows the message in place of the figure.
    """


@dataclass(frozen=True)
class Control:
    """One knob: a name passed to ``compute``, a label for the reader, the values it takes."""

    name: str
    label: str
    values: tuple
    default: Any = None
    labels: tuple | None = None

    def __post_init__(self):
        if not self.values:
            raise ValueError(f"control {self.name!r} needs at least one value")
        if self.default is None:
            object.__setattr__(self, "default", self.values[0])
        if self.default not in self.values:
            raise ValueError(
                f"control {self.name!r}: default {self.default!r} is not one of {self.values}"
            )
        labels = self.labels or tuple(str(v) for v in self.values)
        if len(labels) != len(self.values):
            raise ValueError(
                f"control {self.name!r}: {len(labels)} labels for {len(self.values)} values"
            )
        object.__setattr__(self, "labels", tuple(labels))

    @property
    def is_slider(self) -> bool:
        """Numbers get a slider; anything else a drop-down."""
        return len(self.values) > 1 and all(
            isinstance(v, (int, float)) and not isinstance(v, bool) for v in self.values
        )

    def label_of(self, value) -> str:
        return self.labels[self.values.index(value)]


@dataclass
class Frame:
    """What ``compute`` returns: data for the view, and the figures printed under it.

    ``figures`` maps a label to an already formatted number; they are printed under the
    figure and form the alt text, so a reader who cannot see the plot gets the same facts.
    """

    data: Any
    figures: dict[str, str] = field(default_factory=dict)


class View:
    """Draws frames into one figure.

    ``setup`` builds the axes once and creates every artist that changes between frames
    with ``animated=True``; the layout is computed from what ``setup`` leaves (so a title
    that ``update`` fills in needs some text there) and then fixed. ``update`` moves the
    animated artists. The explorer draws the still part (axes, ticks, labels) once and
    then redraws only the animated artists on top of it (blitting), which is what keeps a
    live update fast. An ``update`` that had to change the still part (new axis limits,
    say) returns True, and the explorer then redraws everything; or, where the still part
    takes a few states only, it returns a key naming the state it set (the limits, say):
    the explorer draws each state once and keeps its picture.
    """

    figsize: tuple[float, float] = (7.0, 2.8)

    def setup(self, fig: Figure) -> None:
        raise NotImplementedError

    def update(self, data) -> bool | Hashable | None:
        raise NotImplementedError

    @staticmethod
    def show_maps(maps, axes, images) -> bool:
        """Draw ``maps[i]`` (one 2-D tensor each) in panel i and hide the panels beyond them.

        For a view whose number of panels varies (one per head, say). Returns True when
        that changed which axes show, so ``update`` can pass it on as "redraw the still part".
        """
        shown = [ax.get_visible() for ax in axes]
        for i, (ax, image) in enumerate(zip(axes, images, strict=True)):
            if i < len(maps):
                image.set_data(maps[i].numpy())
            for artist in (ax, image):  # an animated artist is drawn unless it is hidden
                artist.set_visible(i < len(maps))
        return shown != [ax.get_visible() for ax in axes]

    @staticmethod
    def show_layout(maps, layouts: dict, images: dict) -> bool:
        """Draw ``maps[i]`` in ``images[len(maps)][i]``, showing that layout only.

        For a view that builds one layout per number of maps in ``setup`` (``layouts[count]``
        its axes, ``images[count]`` their images), so that fewer maps fill the canvas with
        larger panels. Returns True when the layout shown changed (redraw the still part).
        """
        count = len(maps)
        changed = not layouts[count][0].get_visible() or any(
            ax.get_visible() for c, axes in layouts.items() if c != count for ax in axes
        )
        for c, axes in layouts.items():
            for ax, image in zip(axes, images[c], strict=True):
                for artist in (ax, image):  # an animated artist is drawn unless it is hidden
                    artist.set_visible(c == count)
        for image, m in zip(images[count], maps, strict=True):
            image.set_data(m.numpy())
        return changed


def _still_state(answer) -> Hashable:
    """What a view's ``update`` said of the still part: False (unchanged), True (redraw it)
    or a key naming its state. A NumPy bool counts as a bool; a key must be hashable and
    mean one state (no tensor or array, whose hash is its identity)."""
    if answer is None or isinstance(answer, (bool, np.bool_)):
        return bool(answer)
    if hasattr(answer, "shape") or not isinstance(answer, Hashable):  # an array, a tensor
        raise TypeError(f"a view's update returns a bool or a hashable key naming the still "
                        f"part's state, got {type(answer).__name__}")
    return answer


def _encode(canvas: FigureCanvasAgg, compact: bool) -> bytes:
    """PNG bytes of the canvas; ``compact`` quantises to a palette for the static site.

    Octree quantisation at zlib's default level: eight times faster than median cut with
    the optimiser, and on the book's frames about 10% smaller, with a smaller worst error
    per pixel (median cut can drop a colour altogether)."""
    if not compact:
        return encode(np.asarray(canvas.buffer_rgba()))  # (height, width, 4)
    buffer = io.BytesIO()
    # Pillow unpacks RGBX to RGB itself: faster than NumPy's strided copy, the same pixels
    image = Image.frombytes("RGB", canvas.get_width_height(physical=True),
                            canvas.buffer_rgba(), "raw", "RGBX")
    palette = image.quantize(colors=96, method=Image.Quantize.FASTOCTREE)
    palette.save(buffer, "png", compress_level=6)
    return buffer.getvalue()


class ExplorerBase:
    """A declared explorer: its settings, its frames and their pictures.

    ``attention_qa.panel.Explorer`` is this plus the live and the static panel.
    """

    def __init__(
        self,
        title: str,
        controls: list[Control],
        compute: Callable[..., Frame],
        view: View,
        *,
        caption: str = "",
        frame_budget: int = DEFAULT_FRAME_BUDGET,
        dpi: int = 100,
        lesson_errors: bool = False,
    ):
        names = [c.name for c in controls]
        if len(set(names)) != len(names):
            raise ValueError(f"control names must be unique, got {names}")
        self.title = title
        self.controls = list(controls)
        self.compute = compute
        self.view = view
        self.caption = caption
        self.dpi = dpi
        self.frame_budget = frame_budget
        # True where a refused setting *is* the lesson (a shape bug): the panel shows it.
        self.lesson_errors = lesson_errors
        if self.num_frames > frame_budget:
            raise ValueError(
                f"{title!r} has {self.num_frames} combinations of control values, over its "
                f"frame budget of {frame_budget}; offer fewer values"
            )
        self._frames: dict[tuple, Frame | InvalidSetting] = {}
        self.language: Translator = ENGLISH
        self._fig: Figure | None = None
        self._background = None
        self._stills: dict = {}
        self._animated: list = []

    # ----- pure part ---------------------------------------------------------------
    @property
    def num_frames(self) -> int:
        return math.prod(len(c.values) for c in self.controls)

    @property
    def defaults(self) -> dict:
        return {c.name: c.default for c in self.controls}

    def settings(self):
        """Every combination of control values, as dicts, in row-major order."""
        for combo in itertools.product(*(c.values for c in self.controls)):
            yield dict(zip((c.name for c in self.controls), combo, strict=True))

    def frame(self, **settings) -> Frame | InvalidSetting:
        """The frame for one setting (cached); an invalid one comes back as the exception."""
        key = tuple(settings[c.name] for c in self.controls)
        if key not in self._frames:
            try:
                result = self.compute(**settings)
            except InvalidSetting as err:
                result = err
            if not isinstance(result, (Frame, InvalidSetting)):
                raise TypeError(f"compute must return a Frame, got {type(result).__name__}")
            self._frames[key] = result
        return self._frames[key]

    def is_valid(self, settings: dict) -> bool:
        return not isinstance(self.frame(**settings), InvalidSetting)

    def adjusted(self, settings: dict, changed: str) -> dict:
        """Where the panel goes after the reader set control ``changed``: never a dead end.

        A valid setting stays. Otherwise the other controls move to the nearest valid
        setting that keeps the reader's choice: fewest controls moved, then smallest steps
        (the static panel's script does the same). An explorer whose refusals are the lesson
        (``lesson_errors``) stays where the reader put it and shows the message.
        """
        if self.lesson_errors or self.is_valid(settings):
            return settings

        def distance(candidate: dict) -> tuple[int, int]:
            steps = [
                abs(c.values.index(candidate[c.name]) - c.values.index(settings[c.name]))
                for c in self.controls
            ]
            return sum(s > 0 for s in steps), sum(steps)

        candidates = [
            s for s in self.settings() if s[changed] == settings[changed] and self.is_valid(s)
        ]
        if not candidates:
            raise ValueError(
                f"{self.title!r}: {changed} = {settings[changed]!r} is valid with no setting "
                "of the other controls; remove that value"
            )
        return min(candidates, key=distance)  # first in row-major order on a tie

    def in_language(self, language: Translator) -> ExplorerBase:
        """This explorer with its words (labels, figures, messages, pictures) in ``language``."""
        self.language = language
        self._fig, self._background, self._animated = None, None, []
        self._stills = {}  # key → the still part's picture, for an update that names its state
        return self

    def describe(self, settings: dict, frame: Frame | InvalidSetting) -> str:
        """Alt text: the setting, then the figures (or the message), in the explorer's language."""
        tr, w = self.language, self.language.words
        where = w["list"].join(
            f"{tr(c.label)} = {tr(c.label_of(settings[c.name]))}" for c in self.controls
        )
        head = f"{tr(self.title)}{w['open']}{where}{w['close']}"
        if isinstance(frame, InvalidSetting):
            return f"{head}{w['colon']}{tr(str(frame))}"
        facts = w["facts"].join(f"{tr(k)} {tr(v)}" for k, v in frame.figures.items())
        return f"{head}{w['stop']}{facts}{w['end']}"

    # ----- rendering ---------------------------------------------------------------
    @property
    def _rc(self) -> dict:
        return {**_RC, **self.language.rc}

    @property
    def figure(self) -> Figure:
        if self._fig is None:
            with matplotlib.rc_context(self._rc):
                self._fig = Figure(figsize=self.view.figsize, dpi=self.dpi, layout="constrained")
                FigureCanvasAgg(self._fig)
                self.view.setup(self._fig)
                if self.language is not ENGLISH:
                    translate_figure(self._fig, self.language)
                # The layout is fixed here, before any frame: every frame, whichever came
                # first and whatever it hides, is drawn in the same places.
                self._fig.draw_without_rendering()
                self._fig.set_layout_engine("none")
        return self._fig

    def _draw_still(self, state=True) -> None:
        """Draw everything but the animated artists and keep that picture: under ``state``
        where the view names the still part's state, reusing the one kept for it."""
        if state is not True and state in self._stills:
            self._background = self._stills[state]
            return
        fig = self.figure
        fig.canvas.draw()
        self._animated = [a for a in fig.findobj() if a.get_animated()]
        self._background = fig.canvas.copy_from_bbox(fig.bbox)
        if state is not True:
            self._stills[state] = self._background

    def render(self, frame: Frame, compact: bool = False) -> bytes:
        """PNG bytes of one frame: the view moves its artists, only those are redrawn."""
        fig = self.figure
        with matplotlib.rc_context(self._rc):
            state = _still_state(self.view.update(frame.data))
            if self.language is not ENGLISH:
                translate_figure(fig, self.language)  # what update wrote, in the language
            if state is not False or self._background is None:
                self._draw_still(True if state is False else state)
            fig.canvas.restore_region(self._background)
            for artist in self._animated:
                fig.draw_artist(artist)
            return _encode(fig.canvas, compact)

    @cached_property
    def uid(self) -> str:
        """A stable id, so re-running a notebook gives byte-identical output."""
        spec = json.dumps(
            [self.title, [(c.name, [str(v) for v in c.values]) for c in self.controls]]
        )
        return "aqa-" + hashlib.sha1(spec.encode()).hexdigest()[:10]


def escape(text: str) -> str:
    return html.escape(str(text), quote=True)


def figures_html(frame: Frame | InvalidSetting, tr=ENGLISH) -> str:
    """The figures of a frame as list items (shared with the live panel)."""
    if isinstance(frame, InvalidSetting):
        return ""
    return "".join(
        f"<li>{escape(tr(k))} <b>{escape(tr(v))}</b></li>" for k, v in frame.figures.items()
    )
