"""q23's explorer: each family's panels are its layers, and only CLIP shows an empty bridge."""

import numpy as np

from attention_qa.explorers.model_families import (
    ALLOWED,
    CELL_PX,
    PADDED,
    model_family_explorer,
)
from attention_qa.families import FAMILIES


def _cells(picture):
    """The colour of each cell (its top-left pixel), (n, m, 4)."""
    return picture[::CELL_PX, ::CELL_PX]


def test_clip_has_two_encoders_and_an_empty_text_to_image_panel():
    frame = model_family_explorer().frame(family="CLIP", text_len=4, padding=1, grid=2)
    titles = [p["title"] for p in frame.data["panels"]]
    assert titles == ["1 · image self", "2 · text self", "3 · none"]
    empty = frame.data["panels"][2]
    assert empty["empty"] and _cells(empty["picture"]).shape[:2] == (4, 5)
    assert not np.all(_cells(empty["picture"]) == ALLOWED, axis=-1).any()
    assert frame.figures["text–image pairs allowed"] == "0"


def test_families_that_mix_modalities_say_how_many_pairs_cross():
    explorer = model_family_explorer()
    figures = {f: explorer.frame(family=f, text_len=4, padding=0, grid=2).figures
               for f in FAMILIES}
    assert figures["BLIP"]["text–image pairs allowed"] == str(4 * 5)
    assert figures["Flamingo"]["text–image pairs allowed"] == str(4 * 2)
    assert figures["LLaVA"]["text–image pairs allowed"] == str(4 * 4)
    assert figures["BERT"]["text–image pairs allowed"] == "none (one modality)"
    assert "K and V from encoder output" in figures["T5"]["3 · cross-attention"]


def test_every_family_shows_its_layers_and_only_clip_adds_one():
    explorer = model_family_explorer()
    counts = {f: len(explorer.frame(family=f, text_len=6, padding=2, grid=3).data["panels"])
              for f in FAMILIES}
    assert counts == {"BERT": 1, "GPT": 1, "T5": 3, "ViT": 1, "CLIP": 3, "BLIP": 3,
                      "Flamingo": 3, "LLaVA": 2}


def test_padding_keys_are_orange_and_the_gpt_mask_is_causal():
    (panel,) = model_family_explorer().frame(
        family="GPT", text_len=6, padding=2, grid=2).data["panels"]
    cells = _cells(panel["picture"])  # (6, 6, 4)
    allowed = np.all(cells == ALLOWED, axis=-1)
    assert np.array_equal(allowed, np.tril(np.ones((6, 6), bool)) & (np.arange(6) < 4))
    assert np.all(cells[:, 4:] == PADDED)
