"""prefix_lm_mask against a loop over the definition; mlm_corrupt's proportions against
BERT's 15 % and 80/10/10, counted over many positions."""

import re

import pytest
import torch

from attention_qa.masks import causal_mask
from attention_qa.objectives import mlm_corrupt, prefix_lm_mask, span_corrupt


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
