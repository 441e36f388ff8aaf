"""prefix_lm_mask against a loop over the definition; mlm_corrupt's proportions against
BERT's 15 % and 80/10/10, counted over many positions; bert_inputs against Hugging Face's
BertTokenizer; bart_noise's five functions by what each must keep and change."""

import math
import re

import pytest
import torch

from attention_qa.masks import causal_mask
from attention_qa.objectives import (
    bart_noise,
    bert_inputs,
    glm_blank_infilling,
    mlm_corrupt,
    prefix_lm_mask,
    span_corrupt,
)


@pytest.mark.parametrize("n", [1, 2, 5, 9])
def test_prefix_lm_mask_matches_the_definition(n):
    for prefix in range(n + 1):
        want = torch.tensor([[j < prefix or j <= i for j in range(n)] for i in range(n)])
        assert torch.equal(prefix_lm_mask(n, prefix), want)


def test_prefix_lm_mask_spans_causal_to_full():
    assert torch.equal(prefix_lm_mask(6, 0), causal_mask(6))
    assert prefix_lm_mask(6, 6).all()
    # A prefix position never sees a position after the prefix.
    assert not prefix_lm_mask(6, 3)[:3, 3:].any()


@pytest.mark.parametrize("n, prefix", [(4, 5), (4, -1), (0, 0), (4, 1.5)])
def test_prefix_lm_mask_refuses_bad_lengths(n, prefix):
    with pytest.raises(ValueError, match="prefix_len|n must"):
        prefix_lm_mask(n, prefix)


def test_mlm_corrupt_follows_berts_proportions():
    gen = torch.Generator().manual_seed(0)
    tokens = torch.randint(5, 1000, (400, 500), generator=gen)  # 200,000 positions
    inputs, labels = mlm_corrupt(tokens, mask_id=3, vocab_size=1000, generator=gen)
    chosen = labels != -100
    n = tokens.numel()
    k = int(chosen.sum())
    # Binomial counts within 5 standard deviations of their means.
    assert abs(k - 0.15 * n) < 5 * (n * 0.15 * 0.85) ** 0.5
    masked = int((inputs[chosen] == 3).sum())
    kept = int((inputs[chosen] == tokens[chosen]).sum())
    assert abs(masked - 0.8 * k) < 5 * (k * 0.8 * 0.2) ** 0.5
    # "kept" also holds the random draws that hit the original token (1 in 1000 of 10 %).
    assert abs(kept - 0.1 * k) < 5 * (k * 0.1 * 0.9) ** 0.5 + 0.001 * k
    assert torch.equal(labels[chosen], tokens[chosen])
    assert torch.equal(inputs[~chosen], tokens[~chosen])  # unchosen positions are untouched
    random_ids = inputs[chosen & (inputs != 3) & (inputs != tokens)]
    assert random_ids.min() >= 0 and random_ids.max() < 1000


def test_mlm_corrupt_is_reproducible_and_edge_rates():
    tokens = torch.arange(50).reshape(5, 10)
    a = mlm_corrupt(tokens, 0, 50, generator=torch.Generator().manual_seed(1))
    b = mlm_corrupt(tokens, 0, 50, generator=torch.Generator().manual_seed(1))
    assert all(torch.equal(x, y) for x, y in zip(a, b, strict=True))
    inputs, labels = mlm_corrupt(tokens, 0, 50, rate=0.0)
    assert torch.equal(inputs, tokens) and (labels == -100).all()
    _, labels = mlm_corrupt(tokens, 0, 50, rate=1.0)
    assert torch.equal(labels, tokens)


@pytest.mark.parametrize("kwargs, error, words", [
    (dict(tokens=torch.ones(3)), TypeError, "integer tensor"),
    (dict(tokens=torch.tensor([1, 60])), ValueError, "[0, 50)"),
    (dict(rate=1.5), ValueError, "rate"),
    (dict(vocab_size=0), ValueError, "vocab_size"),
    (dict(generator=3), Exception, "generator"),
])
def test_mlm_corrupt_refuses_bad_input_in_words(kwargs, error, words):
    args = dict(tokens=torch.tensor([1, 2]), mask_id=0, vocab_size=50) | kwargs
    with pytest.raises(error, match=re.escape(words)):
        mlm_corrupt(**args)


def test_span_corruption_reproduces_t5s_figure_2():
    words = "Thank you for inviting me to your party last week .".split()
    inputs, targets = span_corrupt(words, [(2, 4), (8, 9)])
    assert " ".join(inputs) == "Thank you <X> me to your party <Y> week ."
    assert " ".join(targets) == "<X> for inviting <Y> last <Z>"


def test_span_corruption_keeps_every_token_once():
    words = list("abcdefghij")
    for spans in ([], [(0, 1)], [(0, 3), (5, 10)], [(1, 2), (3, 4), (6, 8)]):
        inputs, targets = span_corrupt(words, spans)
        kept = [t for t in inputs if not t.startswith("<")]
        dropped = [t for t in targets if not t.startswith("<")]
        assert sorted(kept + dropped) == words and len(dropped) == sum(e - s for s, e in spans)


@pytest.mark.parametrize("spans", [[(2, 1)], [(0, 2), (2, 3)], [(3, 4), (0, 1)], [(0, 11)]])
def test_span_corruption_refuses_bad_spans(spans):
    with pytest.raises(ValueError, match="spans"):
        span_corrupt(list("abcdefghij"), spans)


# --- q41: BERT's input and BART's noising ---------------------------------------------------


def test_bert_inputs_match_hugging_face_s_tokenizer(tmp_path):
    from transformers import BertTokenizer

    words = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "my", "dog", "is", "cute", "he",
             "likes", "play", "##ing"]
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("\n".join(words) + "\n")
    tokenizer = BertTokenizer(str(vocab))
    for text_b, b in ((None, None), ("he likes playing", [9, 10, 11, 12])):
        want = tokenizer("my dog is cute", text_b)
        ids, types = bert_inputs([5, 6, 7, 8], b, cls_id=2, sep_id=3)
        assert ids.tolist() == want["input_ids"]
        assert types.tolist() == want["token_type_ids"]
        assert ids.dtype == types.dtype == torch.long
    ids, types = bert_inputs(torch.tensor([5, 6]), torch.tensor([9]), cls_id=2, sep_id=3)
    assert ids.tolist() == tokenizer("my dog", "he")["input_ids"]


def test_bert_inputs_refuse_bad_input():
    with pytest.raises(ValueError, match="tokens_a must be a list of token ids"):
        bert_inputs(["my", "dog"], cls_id=2, sep_id=3)
    with pytest.raises(ValueError, match="tokens_b must be a 1-D integer tensor"):
        bert_inputs([5], torch.ones(2, 2, dtype=torch.long), cls_id=2, sep_id=3)
    with pytest.raises(ValueError, match="cls_id"):
        bert_inputs([5], cls_id=-1, sep_id=3)


DOC = [10, 11, 12, 1, 13, 14, 15, 16, 1, 17, 18, 1, 19, 20, 21, 22, 23, 24, 1]  # 1 ends one


def _kept_subsequence(out, doc, mask_id):
    """Whether the non-mask tokens of ``out`` appear in ``doc`` in order."""
    it = iter(doc)
    return all(any(t == d for d in it) for t in out if t != mask_id)


@pytest.mark.parametrize("seed", range(20))
def test_token_masking_and_deletion(seed):
    n, k = len(DOC), math.ceil(0.3 * len(DOC))
    masked = bart_noise(DOC, "token_masking", mask_id=0,
                        generator=torch.Generator().manual_seed(seed)).tolist()
    assert len(masked) == n and masked.count(0) == k
    assert all(m in (0, d) for m, d in zip(masked, DOC, strict=True))
    deleted = bart_noise(DOC, "token_deletion", mask_id=0,
                         generator=torch.Generator().manual_seed(seed)).tolist()
    assert len(deleted) == n - k and _kept_subsequence(deleted, DOC, 0)


@pytest.mark.parametrize("seed", range(30))
def test_text_infilling_replaces_spans_by_one_mask_each(seed):
    doc = list(range(10, 50))
    out = bart_noise(doc, "text_infilling", mask_id=0,
                     generator=torch.Generator().manual_seed(seed)).tolist()
    kept = [t for t in out if t != 0]
    assert _kept_subsequence(out, doc, 0)
    assert len(doc) - len(kept) == math.ceil(0.3 * len(doc))  # the spans cover 30 %
    assert 1 <= out.count(0) <= math.ceil(0.3 * len(doc)) + 5


def test_text_infilling_span_lengths_are_poisson():
    # With rate 1 the whole document is covered: mean span length about λ, some spans empty.
    g = torch.Generator().manual_seed(0)
    masks = [bart_noise(list(range(10, 310)), "text_infilling", mask_id=0, generator=g,
                        rate=1.0).tolist().count(0) for _ in range(40)]
    mean_length = 300 * 40 / sum(masks)
    assert 2.7 < mean_length < 3.3, mean_length
    zero = bart_noise([5, 6], "text_infilling", mask_id=0, rate=0.0)
    assert zero.tolist() == [5, 6]


@pytest.mark.parametrize("seed", range(10))
def test_sentence_permutation_and_document_rotation(seed):
    out = bart_noise(DOC, "sentence_permutation", mask_id=0, sentence_end_id=1,
                     generator=torch.Generator().manual_seed(seed)).tolist()

    def sentences(ids):
        parts, current = [], []
        for t in ids:
            current.append(t)
            if t == 1:
                parts.append(tuple(current))
                current = []
        return sorted(parts)

    assert sentences(out) == sentences(DOC)
    rotated = bart_noise(DOC, "document_rotation", mask_id=0,
                         generator=torch.Generator().manual_seed(seed))
    assert any(torch.equal(rotated, torch.roll(torch.tensor(DOC), -s)) for s in range(len(DOC)))


def test_document_rotation_starts_anywhere():
    g = torch.Generator().manual_seed(1)
    starts = {bart_noise(list(range(6)), "document_rotation", mask_id=9, generator=g)[0].item()
              for _ in range(200)}
    assert starts == set(range(6))


def test_bart_noise_refuses_bad_input():
    with pytest.raises(ValueError, match="kind must be one of"):
        bart_noise(DOC, "token_shuffling", mask_id=0)
    with pytest.raises(ValueError, match="needs sentence_end_id"):
        bart_noise(DOC, "sentence_permutation", mask_id=0)
    with pytest.raises(ValueError, match="rate must be"):
        bart_noise(DOC, "token_masking", mask_id=0, rate=1.5)
    with pytest.raises(ValueError, match="poisson_lambda"):
        bart_noise(DOC, "text_infilling", mask_id=0, poisson_lambda=0)
    with pytest.raises(ValueError, match="tokens must be"):
        bart_noise([[1, 2]], "token_masking", mask_id=0)


# --- q46: GLM's blank infilling --------------------------------------------------------------


def test_glm_blank_infilling_is_figure_2_of_the_glm_paper():
    # Du et al. (2022), Figure 2: x1 … x6, spans [x3] and [x5, x6], part B in the order
    # [x5, x6] then [x3]; Position 1 = 1 2 3 4 5 5 5 5 3 3 (counted from 1 there),
    # Position 2 = 0 0 0 0 0 1 2 3 1 2.
    M, S, E = 100, 101, 102
    out = glm_blank_infilling([1, 2, 3, 4, 5, 6], [(2, 3), (4, 6)], mask_id=M, start_id=S,
                              end_id=E, order=[1, 0])
    assert out["input_ids"].tolist() == [1, 2, M, 4, M, S, 5, 6, S, 3]
    assert out["targets"].tolist()[5:] == [5, 6, E, 3, E]
    assert (out["targets"][:5] == -100).all()
    assert (out["position_ids"] + 1).tolist() == [1, 2, 3, 4, 5, 5, 5, 5, 3, 3]
    assert out["block_position_ids"].tolist() == [0, 0, 0, 0, 0, 1, 2, 3, 1, 2]
    want = torch.zeros(10, 10, dtype=torch.bool)
    want[:, :5] = True  # every token sees part A
    for i in range(5, 10):
        want[i, 5:i + 1] = True  # part B: causally within part B
    assert torch.equal(out["mask"], want)
    assert out["part_a_length"] == 5


def _glm_by_definition(tokens, spans, order, M, S, E):
    """GLM's input written out span by span from §2.1–2.2, without the package."""
    corrupted, where = [], {}
    i = 0
    starts = {s: e for s, e in spans}
    while i < len(tokens):
        if i in starts:
            where[i] = len(corrupted)
            corrupted.append(M)
            i = starts[i]
        else:
            corrupted.append(tokens[i])
            i += 1
    ids, tgt, pos, blk = list(corrupted), [-100] * len(corrupted), \
        list(range(len(corrupted))), [0] * len(corrupted)
    for k in order:
        s, e = spans[k]
        for j, token in enumerate([S] + tokens[s:e]):
            ids.append(token)
            tgt.append((tokens[s:e] + [E])[j])
            pos.append(where[s])
            blk.append(j + 1)
    return ids, tgt, pos, blk


@pytest.mark.parametrize("spans,order", [([(0, 1)], None), ([(0, 3), (5, 6), (7, 10)], [2, 0, 1]),
                                         ([(3, 4), (4, 9)], [1, 0]), ([(9, 10)], [0])])
def test_glm_blank_infilling_matches_the_definition(spans, order):
    tokens = list(range(10, 20))
    out = glm_blank_infilling(tokens, spans, mask_id=1, start_id=2, end_id=3, order=order)
    want = _glm_by_definition(tokens, spans, order or list(range(len(spans))), 1, 2, 3)
    got = [out[k].tolist() for k in ("input_ids", "targets", "position_ids",
                                     "block_position_ids")]
    assert got == list(want)
    n_a = out["part_a_length"]
    n = len(want[0])
    mask = out["mask"]
    assert mask[:n_a, :n_a].all() and not mask[:n_a, n_a:].any()
    assert torch.equal(mask[n_a:, n_a:], causal_mask(n - n_a))
    assert mask[n_a:, :n_a].all()


@pytest.mark.parametrize("spans,order", [([], None), ([(2, 2)], None), ([(3, 5), (1, 2)], None),
                                         ([(1, 4), (3, 5)], None), ([(1, 11)], None),
                                         ([(1, 2), (4, 5)], [0, 0]), ([(1, 2)], [1]),
                                         ([(1.0, 2)], None)])
def test_glm_blank_infilling_refuses_bad_spans_and_orders(spans, order):
    with pytest.raises(ValueError):
        glm_blank_infilling(list(range(10)), spans, mask_id=1, start_id=2, end_id=3,
                            order=order)
