"""q08's leak explorer: the right mask never leaks, the broken ones do."""

from attention_qa.explorer import Frame
from attention_qa.explorers.causal_leak import (
    MASK_NAMES,
    SEQ_LEN,
    causal_leak_explorer,
    output_change,
)


def test_every_setting_computes():
    explorer = causal_leak_explorer()
    assert explorer.num_frames == SEQ_LEN * len(MASK_NAMES)
    for settings in explorer.settings():
        assert isinstance(explorer.frame(**settings), Frame), settings


def test_correct_mask_changes_exactly_the_later_positions():
    for p in range(SEQ_LEN):
        changed = (output_change(p, "correct") > 0).tolist()
        assert changed == [i >= p for i in range(SEQ_LEN)]


def test_broken_masks_leak_and_the_figures_say_so():
    explorer = causal_leak_explorer()
    for name in ("none", "transposed", "block mask read as keep"):
        leaks = explorer.frame(position=SEQ_LEN - 1, mask_name=name).data["leaked"]
        assert leaks == list(range(SEQ_LEN - 1)), name
    assert (
        explorer.frame(position=4, mask_name="correct").figures[
            "earlier positions that change (leaks)"
        ]
        == "none"
    )
    # Blocking the diagonal leaks nothing, but position 0 then sees no key at all.
    assert explorer.frame(position=0, mask_name="diagonal blocked").data["delta"][0] == 0
