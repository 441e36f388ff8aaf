"""train_bpe, BPETokenizer and wordpiece_tokenize against a naive trainer written from the
definition, and against Hugging Face's tokenizers (its BPE and WordPiece models)."""

import re
from collections import Counter
from itertools import pairwise

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tokenizers import models

from attention_qa.tokens import (
    BOOK_MERGES,
    BPETokenizer,
    book_tokenizer,
    split_words,
    token_spans,
    train_bpe,
    wordpiece_tokenize,
)

CORPUS = [
    "Attention is a lookup by content: every query scores every key, and the softmax of the "
    "scores weighs the values. The scores are divided by the square root of d_k.",
    "注意力是按内容查找：每个查询给每个键打分，分数的 softmax 给值加权。",
    "the cat sat on the mat; the cat sat on the hat; the hat sat on the cat.",
]

# Texts with words that repeat, so that pairs recur and the merges interact.
repeating_texts = st.lists(
    st.lists(st.sampled_from(["the", " cat", " 猫", "aaa", "  ", "ab", "ba", "é", " x"]),
             max_size=12).map("".join),
    min_size=1, max_size=4,
)


def naive_train(texts, num_merges):
    """Recount every pair of every word occurrence at every step (the definition, slowly)."""
    words = [list(w.encode("utf-8")) for t in texts for w in re.findall(r"\s*\S+|\s+", t)]
    merges = []
    while len(merges) < num_merges:
        counts = Counter(p for w in words for p in pairwise(w))
        if not counts or max(counts.values()) < 2:
            break
        best = min(counts, key=lambda p: (-counts[p], p))
        new = 256 + len(merges)
        merges.append(best)
        for k, w in enumerate(words):
            out, i = [], 0
            while i < len(w):
                if w[i:i + 2] == list(best):
                    out.append(new)
                    i += 2
                else:
                    out.append(w[i])
                    i += 1
            words[k] = out
    return merges


def hf_bpe(tok: BPETokenizer) -> models.BPE:
    """The same vocabulary and merges as a Hugging Face BPE model, one character per byte."""
    def name(i):
        return tok.token_bytes(i).decode("latin-1")
    vocab = {name(i): i for i in range(tok.vocab_size)}
    return models.BPE(vocab, [(name(a), name(b)) for a, b in tok.merges])


def hf_encode(model: models.BPE, text: str) -> list[int]:
    ids = []
    for word in split_words(text):
        ids += [t.id for t in model.tokenize(word.encode("utf-8").decode("latin-1"))]
    return ids


@given(repeating_texts, st.integers(0, 30))
@settings(max_examples=150, deadline=None)
def test_training_matches_the_naive_trainer(texts, num_merges):
    assert train_bpe(texts, num_merges).merges == naive_train(texts, num_merges)


def test_training_on_the_corpus_matches_the_naive_trainer_and_stops_early():
    tok = train_bpe(CORPUS, 400)
    assert tok.merges == naive_train(CORPUS, 400)
    assert 50 < len(tok.merges) < 400  # no pair occurs twice any more
    assert tok.vocab_size == 256 + len(tok.merges)


def test_ties_go_to_the_smallest_pair_and_ids_follow_merge_order():
    # "ab" and "cd" both occur twice; (97, 98) < (99, 100).
    tok = train_bpe(["ab", "cd", "cd", "ab"], 1)
    assert tok.merges == [(97, 98)]
    assert tok.encode("ab") == [256]


def test_no_merge_crosses_words():
    tok = train_bpe(["a b a b a b"], 10)
    assert all(b" " not in tok.token_bytes(i)[1:] for i in range(256, tok.vocab_size))


@pytest.mark.parametrize("num_merges", [0, 20, 120])
def test_encode_matches_hugging_face_bpe(num_merges):
    tok = train_bpe(CORPUS, num_merges)
    model = hf_bpe(tok)
    for text in CORPUS + ["unseen words: tokenisation, 词表, 🙂", "   ", ""]:
        assert tok.encode(text) == hf_encode(model, text)


@given(st.text(max_size=60))
@settings(max_examples=200, deadline=None)
def test_encode_matches_hugging_face_on_any_text(text):
    tok = _CORPUS_TOKENIZER
    assert tok.encode(text) == hf_encode(_CORPUS_HF, text)


def test_encode_merges_by_rank_not_from_the_left():
    # "bc" was learned before "ab": "abc" is a + bc, although "ab" comes first.
    tok = BPETokenizer([(98, 99), (97, 98)])
    assert tok.encode("abc") == [97, 256]
    assert tok.encode("abc") == hf_encode(hf_bpe(tok), "abc")


@st.composite
def merge_lists(draw):
    """Merges over the bytes of "abc ", each pair of ids that exist before it."""
    ids, merges = [97, 98, 99, 32], []
    for _ in range(draw(st.integers(0, 12))):
        pair = (draw(st.sampled_from(ids)), draw(st.sampled_from(ids)))
        if pair not in merges:
            merges.append(pair)
            ids.append(255 + len(merges))
    return merges


@given(merge_lists(), st.text(alphabet="abc ", max_size=30))
@settings(max_examples=400, deadline=None)
def test_encode_matches_hugging_face_for_any_merges(merges, text):
    tok = BPETokenizer(merges)
    assert tok.encode(text) == hf_encode(hf_bpe(tok), text)


@given(st.text(alphabet=st.characters(codec=None), max_size=80))
@settings(max_examples=300, deadline=None)
def test_decode_inverts_encode_for_every_string(text):
    assert _CORPUS_TOKENIZER.decode(_CORPUS_TOKENIZER.encode(text)) == text


def test_a_lone_surrogate_round_trips_and_no_token_is_unknown():
    tok = _CORPUS_TOKENIZER
    for text in ["\ud800", "a\udfffb", "\x00\n\t", "Ω≈ç√"]:
        ids = tok.encode(text)
        assert all(0 <= i < tok.vocab_size for i in ids)
        assert tok.decode(ids) == text


def test_a_character_cut_between_tokens_decodes_to_the_replacement_character():
    tok = BPETokenizer([])
    ids = tok.encode("猫")  # three bytes, three tokens
    assert tok.decode(ids[:2]) == "\ufffd"


def test_the_merges_rebuild_the_tokenizer():
    tok = train_bpe(CORPUS, 60)
    again = BPETokenizer(tok.merges)
    assert [again.token_bytes(i) for i in range(again.vocab_size)] == [
        tok.token_bytes(i) for i in range(tok.vocab_size)]


@pytest.mark.parametrize("call, error, words", [
    (lambda: train_bpe(CORPUS, -1), ValueError, "num_merges"),
    (lambda: train_bpe([b"bytes"], 3), TypeError, "texts[0]"),
    (lambda: train_bpe(7, 3), TypeError, "texts"),
    (lambda: BPETokenizer([(300, 1)]), ValueError, "does not exist"),
    (lambda: BPETokenizer([(1, 2, 3)]), ValueError, "pair"),
    (lambda: BPETokenizer([]).token_bytes(256), ValueError, "vocabulary of 256"),
    (lambda: BPETokenizer([]).encode(b"x"), TypeError, "text"),
    (lambda: BPETokenizer([]).decode("abc"), TypeError, "ids"),
])
def test_bad_input_is_refused_in_words(call, error, words):
    with pytest.raises(error, match=re.escape(words)):
        call()


# --- WordPiece -------------------------------------------------------------------------------

VOCAB = {"[UNK]", "un", "##aff", "##able", "aff", "able", "a", "##a", "##b", "b", "hello",
         "##s", "play", "##ing", "##play", "注", "##意", "##力"}


def hf_wordpiece(text, vocab, unk="[UNK]", max_chars=100):
    model = models.WordPiece({p: i for i, p in enumerate(sorted(vocab))}, unk_token=unk,
                             max_input_chars_per_word=max_chars)
    return [t.value for word in text.split() for t in model.tokenize(word)]


def test_wordpiece_longest_match_first():
    assert wordpiece_tokenize("unaffable playing plays", VOCAB) == [
        "un", "##aff", "##able", "play", "##ing", "play", "##s"]
    assert wordpiece_tokenize("注意力", VOCAB) == ["注", "##意", "##力"]


def test_wordpiece_unknown_words_and_long_words():
    assert wordpiece_tokenize("hello xyz", VOCAB) == ["hello", "[UNK]"]
    assert wordpiece_tokenize("unaffablez", VOCAB) == ["[UNK]"]  # the whole word, not a piece
    assert wordpiece_tokenize("aaaa", VOCAB, max_chars_per_word=3) == ["[UNK]"]


@given(st.lists(st.sampled_from(["un", "aff", "able", "a", "b", "ab", "play", "ing", "s",
                                 "x", " ", "\t", "注意力"]), max_size=14).map("".join),
       st.integers(1, 12))
@settings(max_examples=300, deadline=None)
def test_wordpiece_matches_hugging_face(text, max_chars):
    assert wordpiece_tokenize(text, VOCAB, max_chars_per_word=max_chars) == hf_wordpiece(
        text, VOCAB, max_chars=max_chars)


def test_wordpiece_refuses_bad_input_in_words():
    with pytest.raises(TypeError, match="vocab"):
        wordpiece_tokenize("a", "abc")
    with pytest.raises(ValueError, match="max_chars_per_word"):
        wordpiece_tokenize("a", VOCAB, max_chars_per_word=0)


_CORPUS_TOKENIZER = train_bpe(CORPUS, 120)
_CORPUS_HF = hf_bpe(_CORPUS_TOKENIZER)


def test_token_spans_tile_the_bytes():
    tok = _CORPUS_TOKENIZER
    for text in CORPUS + ["", "a"]:
        spans = token_spans(tok, text)
        data = text.encode("utf-8")
        assert [data[s:e] for s, e in spans] == [tok.token_bytes(t) for t in tok.encode(text)]
        assert (spans[-1][1] if spans else 0) == len(data)


def test_book_tokenizer_refuses_more_merges_than_the_text_gives():
    with pytest.raises(ValueError, match="merges"):
        book_tokenizer(BOOK_MERGES + 1)
