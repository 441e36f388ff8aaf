"""The live panel: an explorer as an ipywidgets panel in Jupyter.

Moving a control recomputes the frame and redraws the one figure in place (the view
moves its artists; nothing is re-created), so there is no flicker and no pile of
figures. A setting that cannot be drawn shows its message instead of a traceback.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import ipywidgets as widgets

from attention_qa.panel.core import InvalidSetting, escape, figures_html

if TYPE_CHECKING:
    from attention_qa.panel.core import ExplorerBase as Explorer

_FIGURES_STYLE = "list-style:none;padding:0;display:flex;gap:1.2em;flex-wrap:wrap"


def _control_widget(control) -> widgets.ValueWidget:
    options = list(zip(control.labels, control.values, strict=True))
    common = dict(
        options=options,
        value=control.default,
        description=control.label,
        style={"description_width": "initial"},
    )
    if control.is_slider:
        return widgets.SelectionSlider(continuous_update=True, **common)
    return widgets.Dropdown(**common)


class LivePanel(widgets.VBox):
    """The widget: controls on top, the figure, then a message or the figures."""

    def __init__(self, explorer: Explorer):
        self.explorer = explorer
        self.controls = {c.name: _control_widget(c) for c in explorer.controls}
        # Drawn for its size: never stretched to the output's width (the box would), only
        # shrunk where the output is narrower.
        self.image = widgets.Image(
            format="png", layout=widgets.Layout(max_width="100%", align_self="flex-start")
        )
        self.message = widgets.HTML()
        self.figures = widgets.HTML()
        self._png: dict[tuple, bytes] = {}
        self._moving = False  # set while the panel itself moves controls
        title = widgets.HTML(f"<b>{escape(explorer.title)}</b>")
        box = widgets.HBox(
            list(self.controls.values()), layout=widgets.Layout(flex_flow="row wrap")
        )
        super().__init__([title, box, self.image, self.message, self.figures])
        for control in self.controls.values():
            control.observe(self.refresh, names="value")
        self.refresh()

    @property
    def settings(self) -> dict:
        return {name: control.value for name, control in self.controls.items()}

    def refresh(self, change=None) -> None:
        if self._moving:
            return
        settings = self.settings
        try:
            if change is not None:
                settings = self._adjust(settings, change["owner"])
            frame = self.explorer.frame(**settings)
            if isinstance(frame, InvalidSetting):
                self._show_message(str(frame))
                return
            key = tuple(settings.values())
            if key not in self._png:
                self._png[key] = self.explorer.render(frame)
            self.image.value = self._png[key]
            self.image.layout.visibility = None
            self.message.value = ""
            self.figures.value = f'<ul style="{_FIGURES_STYLE}">{figures_html(frame)}</ul>'
        except Exception as err:  # a panel shows a sentence, never a traceback
            self._show_message(f"This setting could not be drawn ({type(err).__name__}: {err}).")

    def _adjust(self, settings: dict, moved) -> dict:
        """Move the other controls to the nearest valid setting, as the static panel does."""
        name = next(n for n, control in self.controls.items() if control is moved)
        target = self.explorer.adjusted(settings, name)
        self._moving = True
        try:
            for n, value in target.items():
                self.controls[n].value = value
        finally:
            self._moving = False
        return target

    def _show_message(self, text: str) -> None:
        self.image.layout.visibility = "hidden"  # keeps its place: the panel does not jump
        self.figures.value = ""
        self.message.value = f'<p style="color:#8a1c1c;font-weight:600">{escape(text)}</p>'


def build_widget(explorer: Explorer) -> LivePanel:
    return LivePanel(explorer)
