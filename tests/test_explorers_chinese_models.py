"""q46's explorer draws what needle_attention and glm_blank_infilling compute, and its
figures say it."""

import math

import pytest

from attention_qa.explorers.chinese_models import (
    KEYS,
    LAYOUTS,
    TRAINED,
    chinese_models_explorer,
)
from attention_qa.objectives import glm_blank_infilling
from attention_qa.positional import attention_entropy, logn_scale, needle_attention


@pytest.mark.parametrize("keys", KEYS)
@pytest.mark.parametrize("scaling", ["none", "logn"])
def test_the_numbers_are_the_lesson_s(keys, scaling):
    frame = chinese_models_explorer().frame(keys=keys, scaling=scaling, layout="figure2")
    w = needle_attention(keys, TRAINED, logn=scaling == "logn")
    assert frame.data["entropy"] == pytest.approx(attention_entropy(w))
    assert frame.data["needle"] == pytest.approx(float(w[0]))
    factor = logn_scale(keys, TRAINED) if scaling == "logn" else 1.0
    assert frame.figures["LogN factor"] == f"{factor:.3f}"
    assert frame.figures["entropy (nats)"].endswith(f"(ln n = {math.log(keys):.2f})")


def test_logn_keeps_the_needle_past_the_trained_length():
    explorer = chinese_models_explorer()
    far = {s: explorer.frame(keys=32768, scaling=s, layout="figure2").data for s in
           ("none", "logn")}
    trained = explorer.frame(keys=TRAINED, scaling="none", layout="figure2").data
    assert far["logn"]["needle"] > 5 * far["none"]["needle"]
    assert far["logn"]["entropy"] < far["none"]["entropy"]
    # at the trained length the factor is 1: both scalings agree
    assert trained == {**explorer.frame(keys=TRAINED, scaling="logn",
                                        layout="figure2").data, "scaling": "none"}


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_the_glm_rows_are_glm_blank_infilling(layout):
    spans, order = LAYOUTS[layout]
    frame = chinese_models_explorer().frame(keys=8192, scaling="none", layout=layout)
    out = glm_blank_infilling(list(range(3, 9)), spans, mask_id=0, start_id=1, end_id=2,
                              order=order)
    assert frame.figures["position ids"] == " ".join(map(str, out["position_ids"].tolist()))
    assert frame.figures["block position ids"] == " ".join(
        map(str, out["block_position_ids"].tolist()))


def test_figure_2_reads_as_the_paper():
    frame = chinese_models_explorer().frame(keys=8192, scaling="none", layout="figure2")
    assert frame.figures["GLM input"] == "x1 x2 [M] x4 [M] [S] x5 x6 [S] x3"
    assert frame.figures["targets"].split()[5:] == ["x5", "x6", "[E]", "x3", "[E]"]


def test_frame_budget():
    assert chinese_models_explorer().num_frames <= 200
