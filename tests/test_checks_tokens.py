"""check_most_frequent_pair passes two independent right answers and names each known slip."""

import re
from collections import Counter, defaultdict

import numpy as np
import pytest

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


def test_other_wrong_answers_fail():
    with pytest.raises(AssertionError, match="pair of ints"):
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
