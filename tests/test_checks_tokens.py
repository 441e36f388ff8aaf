"""check_most_frequent_pair passes two independent right answers and names each known slip."""

import re
from collections import Counter, defaultdict

import numpy as np
import pytest
import torch

from attention_qa.checks import check_most_frequent_pair
from attention_qa.checks.tokens import PAIR_SLIPS, pair_variant
from attention_qa.tokens import most_frequent_pair, train_bpe


def by_counter(word_counts):
    counts = Counter()
    for word, count in word_counts.items():
        for i in range(len(word) - 1):
            counts[word[i], word[i + 1]] += count
    best = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    return best[0][0] if best and best[0][1] >= 2 else None


def by_numpy(word_counts):
    """Pairs as rows of an array, counted with np.unique; returns numpy ints in a list."""
    rows, weights = [], []
    for word, count in word_counts.items():
        for a, b in zip(word[:-1], word[1:], strict=True):
            rows.append((a, b))
            weights.append(count)
    if not rows:
        return None
    pairs, inverse = np.unique(np.array(rows), axis=0, return_inverse=True)
    totals = np.bincount(inverse.ravel(), weights=weights)
    best = int(np.argmax(totals))  # np.unique sorts the pairs, so the first max is smallest
    return list(pairs[best]) if totals[best] >= 2 else None


def by_dict_of_lists(word_counts):
    seen = defaultdict(int)
    for word, count in word_counts.items():
        for pair in zip(word, word[1:], strict=False):
            seen[pair] += count
    top = max(seen.values(), default=0)
    return min(p for p in seen if seen[p] == top) if top >= 2 else None


@pytest.mark.parametrize("right", [by_counter, by_numpy, by_dict_of_lists, most_frequent_pair])
def test_right_answers_pass(right):
    check_most_frequent_pair(right)


@pytest.mark.parametrize("bug", list(PAIR_SLIPS))
def test_each_slip_fails_with_its_message(bug):
    with pytest.raises(AssertionError, match=re.escape(PAIR_SLIPS[bug])):
        check_most_frequent_pair(lambda words: pair_variant(words, bug))


def shifted(by):
    """The right pair with every id moved by ``by``: (1.4, 1.4) for (1, 1) at 0.4."""
    def answer(word_counts):
        pair = most_frequent_pair(word_counts)
        return None if pair is None else (pair[0] + by, pair[1] + by)
    return answer


def reshaped(how):
    def answer(word_counts):
        pair = most_frequent_pair(word_counts)
        return None if pair is None else how(pair)
    return answer


@pytest.mark.parametrize("right", [
    reshaped(list), reshaped(np.array), reshaped(torch.tensor),
    reshaped(lambda p: (np.int64(p[0]), torch.tensor(p[1]))),
])
def test_integers_of_any_kind_pass(right):
    check_most_frequent_pair(right)


@pytest.mark.parametrize("wrong", [
    shifted(0.4), shifted(0.0), reshaped(lambda p: f"{p[0]}{p[1]}"), reshaped(set),
    reshaped(lambda p: np.array(p) + 0.4), reshaped(lambda p: torch.tensor(p).float()),
    reshaped(lambda p: (bool(p[0]), bool(p[1]))), reshaped(lambda p: (*p, 0)),
])
def test_pairs_that_are_not_two_integers_fail(wrong):
    # (1.4, 1.4) must not pass as (1, 1), nor "11" as (1, 1), nor a set in any order.
    with pytest.raises(AssertionError, match="pair of integers"):
        check_most_frequent_pair(wrong)


def threshold_three(word_counts):
    counts = Counter()
    for word, count in word_counts.items():
        for pair in zip(word, word[1:], strict=False):
            counts[pair] += count
    top = max(counts.values(), default=0)
    return min(p for p in counts if counts[p] == top) if top >= 3 else None


def ties_by_smallest_sum(word_counts):
    counts = Counter()
    for word, count in word_counts.items():
        for pair in zip(word, word[1:], strict=False):
            counts[pair] += count
    top = max(counts.values(), default=0)
    return min((p for p in counts if counts[p] == top), key=sum) if top >= 2 else None


@pytest.mark.parametrize("wrong", [threshold_three, ties_by_smallest_sum])
def test_a_slip_is_not_named_on_one_coincidence(wrong):
    # threshold_three returns None where once_per_word does on the first case, and
    # ties_by_smallest_sum agrees with ties_largest somewhere; neither is that slip.
    with pytest.raises(AssertionError, match="expected") as failure:
        check_most_frequent_pair(wrong)
    assert not any(message in str(failure.value) for message in PAIR_SLIPS.values())


def test_other_wrong_answers_fail():
    with pytest.raises(AssertionError, match="pair of integers"):
        check_most_frequent_pair(lambda words: "ab")
    with pytest.raises(AssertionError, match="expected"):
        check_most_frequent_pair(lambda words: (0, 0))
    with pytest.raises(AssertionError, match="raised KeyError"):
        check_most_frequent_pair(lambda words: {}[1])


def test_a_scaffold_is_let_through():
    def scaffold(word_counts):
        raise NotImplementedError

    with pytest.raises(NotImplementedError):
        check_most_frequent_pair(scaffold)


def test_the_reference_is_the_first_merge_bpe_makes():
    texts = ["low lower lowest", "newer newest wider"]
    words = Counter(tuple(w.encode()) for t in texts for w in re.findall(r"\s*\S+|\s+", t))
    assert train_bpe(texts, 1).merges == [most_frequent_pair(dict(words))]
