"""The legibility rule (attention_qa.panel.legibility) on figures built to pass and to fail."""

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from attention_qa.panel.legibility import (
    legibility_problems,
    shown_text_px,
    smallest_text_px,
    texts_outside,
)


def figure(width_in: float, fontsize: float) -> Figure:
    fig = Figure(figsize=(width_in, 2), dpi=100, layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.subplots()
    ax.plot([0, 1], [0, 1])
    ax.set_xlim(0, 1)
    ax.tick_params(labelsize=fontsize)
    ax.set_title("title", fontsize=fontsize)
    fig.canvas.draw()
    return fig


def test_text_size_is_measured_in_image_and_css_pixels():
    fig = figure(6.0, 12)
    assert smallest_text_px(fig) == 12 * 100 / 72
    assert shown_text_px(fig, 300) == 12 * 100 / 72 * 300 / 600
    assert shown_text_px(fig, 1000) == 12 * 100 / 72  # never enlarged


def test_a_wide_figure_with_small_text_is_refused_and_a_narrow_one_passes():
    assert legibility_problems(figure(5.0, 12)) == []
    problems = legibility_problems(figure(8.0, 6))
    assert any("on a phone" in p for p in problems)
    assert any("on a desktop" in p for p in problems)


def test_text_beyond_the_edge_is_reported():
    fig = figure(5.0, 12)
    fig.axes[0].text(1.3, 0.5, "outside", transform=fig.axes[0].transAxes)
    fig.canvas.draw()
    assert texts_outside(fig) == ["outside"]
