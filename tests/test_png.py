"""The live panel's PNG encoder, against Pillow's decoder."""

import io

import numpy as np
import pytest
from PIL import Image

from attention_qa.panel.png import encode


@pytest.mark.parametrize(
    ("shape", "mode"),
    [((1, 1, 3), "RGB"), ((7, 13, 3), "RGB"), ((240, 760, 3), "RGB"),
     ((1, 1, 4), "RGBA"), ((7, 13, 4), "RGBA"), ((240, 760, 4), "RGBA")],
)
def test_pillow_decodes_the_same_pixels(shape, mode):
    pixels = np.random.default_rng(0).integers(0, 256, shape, dtype=np.uint8)
    image = Image.open(io.BytesIO(encode(pixels)))
    image.load()  # checks every chunk's CRC and the compressed stream
    assert image.mode == mode
    assert np.array_equal(np.asarray(image), pixels)


def test_a_view_of_a_larger_buffer_is_encoded_as_shown():
    rgba = np.random.default_rng(1).integers(0, 256, (5, 6, 4), dtype=np.uint8)
    decoded = np.asarray(Image.open(io.BytesIO(encode(rgba[:, :, :3]))))
    assert np.array_equal(decoded, rgba[:, :, :3])


def test_a_canvas_is_encoded_opaque_as_drawn():
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(2, 1), dpi=50)
    FigureCanvasAgg(fig)
    fig.add_subplot().plot([0, 1], [1, 0])
    fig.canvas.draw()
    rgba = np.asarray(fig.canvas.buffer_rgba())
    decoded = np.asarray(Image.open(io.BytesIO(encode(rgba))))
    assert np.array_equal(decoded, rgba)
    assert (decoded[:, :, 3] == 255).all()  # the live panel's frames have no transparency


@pytest.mark.parametrize(
    "bad", [np.zeros((4, 4, 2), np.uint8), np.zeros((4, 4), np.uint8), np.zeros((4, 4, 3))]
)
def test_other_arrays_are_refused_with_their_shape(bad):
    with pytest.raises(ValueError, match=r"\(height, width, 3\) or \(height, width, 4\) uint8"):
        encode(bad)
