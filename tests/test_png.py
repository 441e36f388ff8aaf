"""The live panel's PNG encoder, against Pillow's decoder."""

import io

import numpy as np
import pytest
from PIL import Image

from attention_qa.panel.png import encode_rgb


@pytest.mark.parametrize("shape", [(1, 1, 3), (7, 13, 3), (240, 760, 3)])
def test_pillow_decodes_the_same_pixels(shape):
    rgb = np.random.default_rng(0).integers(0, 256, shape, dtype=np.uint8)
    image = Image.open(io.BytesIO(encode_rgb(rgb)))
    image.load()  # checks every chunk's CRC and the compressed stream
    assert image.mode == "RGB"
    assert np.array_equal(np.asarray(image), rgb)


def test_a_view_of_a_larger_buffer_is_encoded_as_shown():
    rgba = np.random.default_rng(1).integers(0, 256, (5, 6, 4), dtype=np.uint8)
    decoded = np.asarray(Image.open(io.BytesIO(encode_rgb(rgba[:, :, :3]))))
    assert np.array_equal(decoded, rgba[:, :, :3])


@pytest.mark.parametrize(
    "bad", [np.zeros((4, 4, 4), np.uint8), np.zeros((4, 4), np.uint8), np.zeros((4, 4, 3))]
)
def test_other_arrays_are_refused_with_their_shape(bad):
    with pytest.raises(ValueError, match=r"\(height, width, 3\) uint8"):
        encode_rgb(bad)
