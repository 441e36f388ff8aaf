import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from attention_qa.explorers.head_split import (
    HEAD_COUNTS,
    head_scores,
    head_split_explorer,
    head_split_frame,
)
from attention_qa.multihead import MultiHeadAttention
from attention_qa.panel import Frame


@pytest.fixture(scope="module")
def explorer():
    return head_split_explorer()


def test_every_combination_computes(explorer):
    for settings in explorer.settings():
        assert isinstance(explorer.frame(**settings), Frame), settings


def test_cost_is_flat_and_matches_pytorch():
    figures = [head_split_frame(h, 32).figures for h in HEAD_COUNTS]
    assert len({f["parameters"] for f in figures}) == 1
    assert len({f["FLOPs (B = 1)"] for f in figures}) == 1
    mha = MultiHeadAttention(64, 4)
    x = torch.randn(1, 32, 64)
    with FlopCounterMode(display=False) as counter, torch.no_grad():
        mha(x, x, x)
    assert figures[0]["FLOPs (B = 1)"] == f"{counter.get_total_flops():,}"
    assert figures[0]["parameters"] == f"{sum(p.numel() for p in mha.parameters()):,}"


def test_rank_falls_with_more_heads():
    ranks = [int(torch.linalg.matrix_rank(head_scores(h, 64)[0])) for h in HEAD_COUNTS]
    assert ranks == [min(64 // h, 64) for h in HEAD_COUNTS]
    assert head_split_frame(16, 32).figures["rank of head 0's Q Kᵀ"] == "4 of n = 32"
    # n caps the rank too
    assert head_split_frame(1, 16).figures["rank of head 0's Q Kᵀ"] == "16 of n = 16"


def test_per_head_saturation_has_one_bar_per_head():
    for h in (1, 8, 64):
        frame = head_split_frame(h, 32)
        assert frame.data["max_weight"].shape == (h,)
        assert (frame.data["max_weight"] > 1 / 32).all()
