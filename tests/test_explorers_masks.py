"""q07's mask explorer: every setting computes, masks hide what they should, figures move."""

import torch

from attention_qa.explorers.masks import build_mask, mask_explorer
from attention_qa.masks import causal_mask
from attention_qa.panel import Frame, InvalidSetting


def test_every_setting_computes():
    """Padding counts from the end, so every padding fits every length: no refusals."""
    explorer = mask_explorer()
    for settings in explorer.settings():
        frame = explorer.frame(**settings)
        assert isinstance(frame, Frame), settings
        weights = frame.data["weights"]
        assert torch.allclose(weights.sum(-1), torch.ones(settings["n"]))
        assert frame.figures["largest weight on a blocked key"] == "0"
        assert frame.data["valid_len"] == settings["n"] - settings["padding"] >= 1


def test_a_valid_length_past_the_sequence_is_refused():
    try:
        build_mask("padding", 7, 5)
    except InvalidSetting as err:
        assert "longer than the sequence" in str(err)
    else:
        raise AssertionError("a valid length of 7 in 5 positions must be refused")


def test_only_a_padding_mask_keeps_weight_off_the_padding():
    explorer = mask_explorer()

    def on_padding(mask_type):
        return explorer.frame(mask_type=mask_type, padding=2, n=6).figures[
            "most weight a query puts on padding"
        ]

    assert float(on_padding("none")) > 0 and float(on_padding("causal")) > 0
    assert on_padding("padding") == on_padding("padding + causal") == "0.00"
    assert explorer.frame(mask_type="none", padding=0, n=6).figures[
        "most weight a query puts on padding"
    ] == "no padding"


def test_masks_hide_what_they_should():
    assert torch.equal(build_mask("causal", 3, 5), causal_mask(5))
    padding = build_mask("padding", 3, 5)
    assert padding[:, :3].all() and not padding[:, 3:].any()
    both = build_mask("padding + causal", 3, 5)
    assert torch.equal(both, causal_mask(5) & padding)
    assert build_mask("none", 3, 5).all()


def test_figures_move_with_the_controls():
    explorer = mask_explorer()

    def allowed(mask_type, padding):
        text = explorer.frame(mask_type=mask_type, padding=padding, n=8).figures
        return int(text["allowed entries"].split()[0])

    assert allowed("none", 3) == allowed("padding", 0) == 64
    assert allowed("padding", 3) == 8 * 5 < allowed("padding", 1) < allowed("none", 1)
    assert allowed("padding + causal", 3) < allowed("causal", 3) == 36
