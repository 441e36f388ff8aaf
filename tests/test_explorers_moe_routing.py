"""q24's explorer: what its load bars, dots and balance loss mean."""

import pytest
import torch

from attention_qa.explorers.moe_routing import (
    EXPERTS,
    NUM_TOKENS,
    TEMPERATURES,
    moe_routing_explorer,
    router_logits,
)

pytestmark = pytest.mark.usefixtures("one_thread")


def test_the_load_counts_each_tokens_top_k_experts():
    explorer = moe_routing_explorer()
    frame = explorer.frame(num_experts=4, top_k=2, temperature=1.0, skew=1.0)
    chosen = router_logits(4, 1.0).topk(2, dim=-1).indices  # (NUM_TOKENS, 2)
    counts = torch.bincount(chosen.flatten(), minlength=4).double() / (2 * NUM_TOKENS)
    assert frame.data["load"] == pytest.approx(counts.tolist())
    assert sum(frame.data["load"]) == pytest.approx(1.0)
    assert sum(frame.data["prob"]) == pytest.approx(1.0)


@pytest.mark.parametrize("num_experts", EXPERTS)
def test_the_temperature_moves_p_and_the_loss_never_the_load(num_experts):
    explorer = moe_routing_explorer()
    frames = [
        explorer.frame(num_experts=num_experts, top_k=1, temperature=t, skew=4.0).data
        for t in TEMPERATURES
    ]
    assert all(f["load"] == frames[0]["load"] for f in frames)
    assert len({round(f["prob"][0], 6) for f in frames}) == len(TEMPERATURES)
    # A hotter router flattens P towards 1/E, and the loss towards Σ f = 1.
    losses = [f["loss"] for f in frames]
    assert losses == sorted(losses, reverse=True)


def test_skew_drives_the_loss_from_about_one_towards_num_experts():
    explorer = moe_routing_explorer()
    even = explorer.frame(num_experts=8, top_k=1, temperature=1.0, skew=0.0)
    collapsed = explorer.frame(num_experts=8, top_k=1, temperature=0.25, skew=4.0)
    assert abs(even.data["loss"] - 1) < 0.1
    assert collapsed.data["loss"] > 7 and max(collapsed.data["load"]) > 0.95
    assert collapsed.data["load"][0] == max(collapsed.data["load"])


def test_dropped_assignments_appear_only_when_an_expert_overflows():
    explorer = moe_routing_explorer()
    fits = explorer.frame(num_experts=8, top_k=2, temperature=1.0, skew=0.0)
    assert fits.figures["dropped at capacity 1.25×"].startswith("0 of 512")
    assert max(fits.data["load"]) <= fits.data["capacity"]
    overflow = explorer.frame(num_experts=8, top_k=1, temperature=1.0, skew=4.0)
    dropped = int(overflow.figures["dropped at capacity 1.25×"].split()[0])
    excess = sum(max(0.0, f - overflow.data["capacity"]) for f in overflow.data["load"])
    assert dropped == round(excess * NUM_TOKENS)
