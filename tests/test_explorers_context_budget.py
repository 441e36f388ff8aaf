from attention_qa.explorers.context_budget import BINS, context_budget_explorer
from attention_qa.long_context import context_strategies


def test_the_whole_document_fits_only_when_it_is_shorter_than_the_window():
    explorer = context_budget_explorer()
    small = explorer.frame(document=16_384, window=32_768, chunk=512, k=8)
    large = explorer.frame(document=262_144, window=32_768, chunk=512, k=8)
    assert small.data["fits"][0] and small.data["read"][0].min() == 1.0
    assert not large.data["fits"][0] and large.data["read"][0].max() == 0.0
    assert large.figures["whole document"] == "does not fit in the window"


def test_the_figures_and_bars_follow_the_lesson_module():
    explorer = context_budget_explorer()
    frame = explorer.frame(document=262_144, window=32_768, chunk=2_048, k=8)
    expected = context_strategies(262_144, 32_768, 2_048, 8)
    assert frame.data["flops"][2] == expected["retrieve k chunks"]["flops"]
    assert frame.data["kv"][1] == expected["truncate"]["kv_bytes"]
    assert "reads 6% of the document" in frame.figures["retrieve k chunks"]  # 16,384 tokens
    # truncation reads the end; the map reads everything, in separate calls
    assert frame.data["read"][1][-1] == 1.0 and frame.data["read"][1][0] == 0.0
    assert (frame.data["read"][3] == 0.5).all() and frame.data["read"].shape == (4, BINS)


def test_retrieval_that_overflows_the_window_is_shown_as_not_fitting():
    explorer = context_budget_explorer()
    frame = explorer.frame(document=1_048_576, window=8_192, chunk=2_048, k=32)
    assert not frame.data["fits"][2] and frame.data["flops"][2] == 0.0
    assert explorer.num_frames <= 200
