"""q07's mask explorer: every setting computes, masks hide what they should, figures move."""

import torch

from attention_qa.explorers.masks import build_mask, mask_explorer
from attention_qa.masks import causal_mask
from attention_qa.panel import Frame, InvalidSetting


def test_every_setting_computes():
    explorer = mask_explorer()
    for settings in explorer.settings():
        frame = explorer.frame(**settings)
        if settings["valid_len"] > settings["n"]:
            assert isinstance(frame, InvalidSetting), settings
        else:
            assert isinstance(frame, Frame), settings
            weights = frame.data["weights"]
            assert torch.allclose(weights.sum(-1), torch.ones(settings["n"]))
            assert frame.figures["largest weight on a blocked key"] == "0"


def test_masks_hide_what_they_should():
    assert torch.equal(build_mask("causal", 3, 5), causal_mask(5))
    padding = build_mask("padding", 3, 5)
    assert padding[:, :3].all() and not padding[:, 3:].any()
    both = build_mask("padding + causal", 3, 5)
    assert torch.equal(both, causal_mask(5) & padding)
    assert build_mask("none", 3, 5).all()


def test_figures_move_with_the_controls():
    explorer = mask_explorer()

    def allowed(mask_type, valid_len):
        text = explorer.frame(mask_type=mask_type, valid_len=valid_len, n=8).figures
        return int(text["allowed entries"].split()[0])

    assert allowed("none", 4) == 64 > allowed("padding", 8) - 1
    assert allowed("padding", 2) < allowed("padding", 6) < allowed("none", 6)
    assert allowed("padding + causal", 4) < allowed("causal", 4) == 36
