"""q41's explorer draws what bert_inputs and bart_noise make, and its figures say it."""

import pytest
import torch

from attention_qa.explorers.bert_bart import (
    BART_ID,
    BART_WIDTH,
    BERT_WIDTH,
    DOCUMENT,
    END_ID,
    MASK_ID,
    SEEDS,
    bert_bart_explorer,
)
from attention_qa.objectives import BART_NOISES, bart_noise


def test_the_pair_s_rows_and_mask():
    explorer = bert_bart_explorer()
    pair = explorer.frame(sentence_b="next", noise="token_masking", seed=0)
    assert pair.figures["BERT reads"] == "[CLS] my dog is cute [SEP] he likes play ##ing [SEP]"
    assert pair.figures["segment ids"] == "0 0 0 0 0 0 1 1 1 1 1"
    assert pair.data["mask"] == [1] * 11 + [0] * 2
    assert pair.figures["next-sentence label"] == "IsNext"
    single = explorer.frame(sentence_b="none", noise="token_masking", seed=0)
    assert single.data["segments"] == [0] * BERT_WIDTH and sum(single.data["mask"]) == 6
    longest = explorer.frame(sentence_b="random", noise="token_masking", seed=0)
    assert sum(longest.data["mask"]) == BERT_WIDTH  # the longest pair fills the width


@pytest.mark.parametrize("noise", BART_NOISES)
@pytest.mark.parametrize("seed", SEEDS)
def test_the_corrupted_input_is_bart_noise(noise, seed):
    frame = bert_bart_explorer().frame(sentence_b="next", noise=noise, seed=seed)
    want = bart_noise([BART_ID[w] for w in DOCUMENT], noise, mask_id=MASK_ID,
                      sentence_end_id=END_ID, generator=torch.Generator().manual_seed(seed))
    assert [BART_ID[w] for w in frame.data["corrupted"]] == want.tolist()
    assert len(frame.data["corrupted"]) <= BART_WIDTH
    assert frame.figures["BART's decoder writes"] == " ".join(DOCUMENT)


def test_each_noise_changes_what_it_should():
    explorer = bert_bart_explorer()
    for seed in SEEDS:
        read = {noise: explorer.frame(sentence_b="none", noise=noise, seed=seed)
                .data["corrupted"] for noise in BART_NOISES}
        assert len(read["token_masking"]) == len(DOCUMENT)
        assert len(read["token_deletion"]) < len(DOCUMENT)
        assert "<mask>" not in read["token_deletion"]
        for noise in ("sentence_permutation", "document_rotation"):
            assert sorted(read[noise]) == sorted(DOCUMENT)


def test_frame_budget():
    assert bert_bart_explorer().num_frames <= 200


def test_bert_s_rows_are_redrawn_when_sentence_b_comes_back():
    """BERT's rows are written only when sentence B changes: going away and back, with BART's
    column moving meanwhile, draws what a fresh panel draws."""
    used = bert_bart_explorer()
    for sentence_b, noise in (("next", "token_masking"), ("none", "token_deletion"),
                              ("random", "text_infilling"), ("none", "document_rotation")):
        drawn = used.render(used.frame(sentence_b=sentence_b, noise=noise, seed=1))
        fresh = bert_bart_explorer()
        assert drawn == fresh.render(fresh.frame(sentence_b=sentence_b, noise=noise, seed=1))
