"""q35's explorer: its curves are mean_recall_accuracy's, its bars decode_memory_elements'."""

import pytest

from attention_qa.explorers.recurrence import (
    LENGTHS,
    PAIRS,
    STATE_SIZES,
    recurrence_explorer,
)
from attention_qa.recurrent import RECALL_KINDS, decode_memory_elements, mean_recall_accuracy


@pytest.mark.parametrize("d", STATE_SIZES)
def test_curves_are_the_toy_recall_and_attention_recalls_everything(d):
    frame = recurrence_explorer().frame(n=4096, d=d, pairs=32)
    for kind, curve in zip(RECALL_KINDS, frame.data["curves"], strict=True):
        assert list(curve) == [mean_recall_accuracy(kind, p, d) for p in PAIRS]
    assert all(a == 1.0 for a in frame.data["curves"][0])


def test_a_fixed_state_loses_recall_as_pairs_outgrow_it():
    explorer = recurrence_explorer()
    for d in STATE_SIZES:
        curves = explorer.frame(n=1024, d=d, pairs=4).data["curves"]
        for curve in curves[1:]:
            assert curve[-1] < curve[0] and curve[-1] < 1
    small = explorer.frame(n=1024, d=8, pairs=128)
    assert small.figures["recall, softmax"] == "100%"
    assert float(small.figures["recall, linear"].rstrip("%")) < 20


@pytest.mark.parametrize("n", LENGTHS)
def test_only_the_cache_grows_with_the_sequence(n):
    frame = recurrence_explorer().frame(n=n, d=16, pairs=32)
    assert frame.data["memory"] == [decode_memory_elements(k, n, 16) for k in RECALL_KINDS]
    assert frame.data["memory"][1:] == [16 * 16 + 16, 16 * 16]
    assert frame.figures["K/V cache (numbers)"] == f"{2 * n * 16:,}"


def test_the_sequence_length_moves_only_the_memory():
    frames = [recurrence_explorer().frame(n=n, d=16, pairs=32) for n in LENGTHS]
    assert all(f.data["curves"] == frames[0].data["curves"] for f in frames)
    assert len({f.data["memory"][0] for f in frames}) == len(LENGTHS)
