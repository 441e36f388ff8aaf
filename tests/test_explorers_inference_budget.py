"""q33's explorer shows inference's memory and step costs for every setting."""

import pytest

from attention_qa.explorers.inference_budget import (
    BATCHES,
    CONTEXTS,
    MODELS,
    WEIGHT_BYTES,
    attainable,
    budget_explorer,
)
from attention_qa.inference import H100_FLOPS, memory_bytes, step_costs


@pytest.mark.parametrize("model", MODELS)
def test_every_frame_is_the_lesson_s_numbers(model):
    explorer = budget_explorer()
    for batch in BATCHES:
        for context in CONTEXTS:
            for weight_bytes in WEIGHT_BYTES:
                frame = explorer.frame(model=model, batch=batch, context=context,
                                       weight_bytes=weight_bytes)
                memory = memory_bytes(model, batch, context, weight_bytes)
                assert frame.data["memory"] == pytest.approx([v / 1e9 for v in memory.values()])
                decode = step_costs(model, batch, 1, context, weight_bytes)["intensity"]
                assert frame.data["points"][1][0] == pytest.approx(decode)
                prefill = frame.data["points"][0]
                assert prefill[1] == pytest.approx(H100_FLOPS / 1e12)  # on the flat roof


def test_the_roof_bends_at_the_ridge():
    assert attainable(1.0) == pytest.approx(3.35)
    assert attainable(1e6) == pytest.approx(989)


def test_a_context_beyond_training_is_marked_a_what_if():
    explorer = budget_explorer()
    for model, context, what_if in (("Llama-2-7B", 4096, False), ("Llama-2-7B", 32768, True),
                                    ("Llama-3-8B", 4096, False)):
        frame = explorer.frame(model=model, batch=1, context=context, weight_bytes=2)
        assert frame.figures["context"].startswith("a what-if") is what_if
