import pytest
import torch

from attention_qa.explorers.image_fusion import (
    DESIGNS,
    first_step_change,
    image_fusion_explorer,
    lm_mask,
)
from attention_qa.panel import Frame, InvalidSetting


def test_the_tokens_an_image_costs():
    explorer = image_fusion_explorer()
    llava = explorer.frame(design="projector", size=336, patch=14, merge=1)
    assert llava.data["in_sequence"] == 576  # LLaVA-1.5
    merged = explorer.frame(design="projector", size=224, patch=14, merge=2)
    assert merged.data["in_sequence"] == 64  # Qwen2-VL at 224 px, before its two markers
    for size in (224, 448):  # the Q-Former's 32 whatever the size
        assert explorer.frame(design="qformer", size=size, patch=14, merge=1
                              ).data["in_sequence"] == 32
    flamingo = explorer.frame(design="cross_attention", size=448, patch=14, merge=1)
    assert flamingo.data["in_sequence"] == 0
    assert flamingo.figures["visual tokens a text token attends to"] == "64"


def test_only_a_gate_at_zero_leaves_the_first_step_unchanged():
    closed, opened = first_step_change("cross_attention", 64)
    assert closed == 0.0 and opened > 0.1
    for design in ("projector", "qformer"):
        closed, opened = first_step_change(design, 32)
        assert closed == opened > 0.1


def test_the_mask_is_causal_and_crosses_only_in_flamingo():
    for design in DESIGNS:
        rgba = lm_mask(design)
        assert rgba.shape == (10, 10, 4)
    assert (lm_mask("projector") == lm_mask("qformer")).all()
    assert not (lm_mask("projector") == lm_mask("cross_attention")).all()


def test_settings_that_make_no_sense_say_why():
    explorer = image_fusion_explorer()
    bad = explorer.frame(design="qformer", size=224, patch=14, merge=2)
    assert isinstance(bad, InvalidSetting)
    bad = explorer.frame(design="projector", size=336, patch=16, merge=2)
    assert isinstance(bad, InvalidSetting) and "21 × 21" in str(bad)


@pytest.mark.parametrize("design", DESIGNS)
def test_frames_come_out_the_same_twice(design):
    explorer = image_fusion_explorer()
    a = explorer.frame(design=design, size=224, patch=16, merge=1)
    b = explorer.frame(design=design, size=224, patch=16, merge=1)
    assert isinstance(a, Frame) and a.figures == b.figures
    assert torch.equal(torch.as_tensor(a.data["mask"]), torch.as_tensor(b.data["mask"]))
