"""The panel engine: one declared explorer, shown live in Jupyter and static in the book.

    core     controls, frames, views; the explorer's settings, frames and pictures
    png      a small PNG encoder for live frames
    static   the self-contained HTML panel of the built site
    live     the ipywidgets panel of a running notebook

``static`` and ``live`` depend on ``core`` only; this module joins them in :class:`Explorer`.
Chapters never import the engine: they show an explorer from ``attention_qa.explorers``.
"""

from __future__ import annotations

import os

from attention_qa.panel.core import (
    BUILD_ENV,
    DEFAULT_FRAME_BUDGET,
    Control,
    ExplorerBase,
    Frame,
    InvalidSetting,
    View,
    escape,
    figures_html,
)
from attention_qa.panel.live import build_widget
from attention_qa.panel.static import described, frames_payload, static_panel

__all__ = [
    "BUILD_ENV",
    "DEFAULT_FRAME_BUDGET",
    "Control",
    "Explorer",
    "Frame",
    "InvalidSetting",
    "View",
    "escape",
    "figures_html",
    "described",
    "frames_payload",
]


class Explorer(ExplorerBase):
    """A declared explorer. ``widget()`` is the live panel, ``to_html()`` the static one."""

    def widget(self):
        return build_widget(self)

    def to_html(self, all_frames: bool = True) -> str:
        return static_panel(self, all_frames=all_frames)

    def _repr_mimebundle_(self, include=None, exclude=None):
        """One output, two representations: Jupyter shows the live widget, the book the HTML."""
        building = bool(os.environ.get(BUILD_ENV))
        bundle = {"text/html": self.to_html(all_frames=building)}
        if not building:
            bundle.update(self.widget()._repr_mimebundle_())
        bundle["text/plain"] = f"{self.title} (an explorer: open it in Jupyter to use it live)"
        return bundle
