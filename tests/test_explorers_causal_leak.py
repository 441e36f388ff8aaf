"""q08's leak explorer: the right mask never leaks, the broken ones do."""

from attention_qa.explorers.causal_leak import (
    SEQ_LEN,
    causal_leak_explorer,
)


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
