"""Figures readable where they are shown: the book's rule and the check behind it.

A figure is drawn once and shown at two widths: a desktop column and a phone's. An image
is never enlarged (``max-width: 100%``), only shrunk to fit, so its smallest text, in CSS
pixels, is ``text_px × min(1, column / width_px)``. The rule: at least ``MIN_TEXT_CSS_PX``
at both widths, and no text reaching outside the figure, where it would be cut.
"""

from __future__ import annotations

from matplotlib.figure import Figure
from matplotlib.text import Text

# Content column widths in CSS pixels, measured in the built site (tests/site checks them).
PHONE_COLUMN_PX = 348  # a 390 px wide phone
DESKTOP_COLUMN_PX = 676  # a 1300 px wide window
MIN_TEXT_CSS_PX = 9.0


def _undrawn_tick_labels(fig: Figure) -> set[int]:
    """Tick labels matplotlib keeps but does not draw: their tick lies outside the view."""
    skipped = set()
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            low, high = sorted(axis.get_view_interval())
            slack = 1e-9 * max(1.0, abs(high - low))
            for tick in axis.get_major_ticks() + axis.get_minor_ticks():
                if not low - slack <= tick.get_loc() <= high + slack:
                    skipped.update({id(tick.label1), id(tick.label2)})
    return skipped


def visible_texts(fig: Figure) -> list[Text]:
    """Every text artist a reader sees: shown, non-empty, on a shown axes or the figure."""
    texts = []
    undrawn = _undrawn_tick_labels(fig)
    for text in fig.findobj(Text):
        if id(text) in undrawn:
            continue
        axes = text.axes
        if not text.get_visible() or not text.get_text().strip():
            continue
        if axes is not None and not axes.get_visible():
            continue
        texts.append(text)
    return texts


def smallest_text_px(fig: Figure) -> float:
    """The smallest font among the visible texts, in image pixels."""
    return min(t.get_fontsize() for t in visible_texts(fig)) * fig.dpi / 72


def shown_text_px(fig: Figure, column_px: float) -> float:
    """The smallest text in CSS pixels when the image is fitted into ``column_px``."""
    width_px = fig.get_figwidth() * fig.dpi
    return smallest_text_px(fig) * min(1.0, column_px / width_px)


def texts_outside(fig: Figure) -> list[str]:
    """Visible texts whose drawn extent leaves the figure (they would be cut)."""
    renderer = fig.canvas.get_renderer()
    width, height = fig.bbox.width, fig.bbox.height
    outside = []
    for text in visible_texts(fig):
        box = text.get_window_extent(renderer)
        if box.x0 < -0.5 or box.y0 < -0.5 or box.x1 > width + 0.5 or box.y1 > height + 0.5:
            outside.append(text.get_text())
    return outside


def legibility_problems(fig: Figure) -> list[str]:
    """What breaks the rule, in words; empty when the figure is fine."""
    problems = []
    for name, column in (("phone", PHONE_COLUMN_PX), ("desktop", DESKTOP_COLUMN_PX)):
        px = shown_text_px(fig, column)
        if px < MIN_TEXT_CSS_PX:
            problems.append(f"smallest text {px:.1f} CSS px on a {name} (want ≥ 9)")
    problems += [f"text cut at the edge: {text!r}" for text in texts_outside(fig)]
    return problems
