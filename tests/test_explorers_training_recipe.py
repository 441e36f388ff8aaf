from attention_qa.explorers.training_recipe import (
    memory_frame,
    training_memory_explorer,
    warmup_explorer,
    warmup_frame,
)


def test_the_schedule_starts_at_zero_with_warmup_and_peaks_after_it():
    frame = warmup_frame("cosine", 10, 0.03)
    assert frame.data["lr"][0] == 0 and max(frame.data["lr"]) == 0.03
    assert frame.data["lr"].index(0.03) == 10
    bare = warmup_frame("cosine", 0, 0.03)
    assert bare.data["lr"][0] == 0.03


def test_warmup_helps_the_toy_at_the_default_setting():
    frame = warmup_explorer().frame(schedule="cosine", warmup=10, peak_lr=0.03)
    for run, bare in frame.data["runs"].values():
        assert run["loss"][-1] < bare["loss"][-1]


def test_memory_is_sixteen_bytes_per_parameter_for_mixed_adamw():
    frame = memory_frame("7B", "adamw", "mixed")
    assert frame.data["bytes"] == 16 and frame.figures["total"].startswith("112 GB")
    assert memory_frame("7B", "sgd", "fp32").data["bytes"] == 8
    assert training_memory_explorer().num_frames == 24
