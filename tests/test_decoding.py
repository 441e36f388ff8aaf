"""filter_logits, sample_next and beam_search against loops, frequencies and exhaustive search."""

import itertools
import math
import re

import pytest
import torch
from transformers import MinPLogitsWarper, RepetitionPenaltyLogitsProcessor

from attention_qa.decoding import apply_penalties, beam_search, filter_logits, sample_next

pytestmark = pytest.mark.usefixtures("one_thread")


def _gen(seed):
    return torch.Generator().manual_seed(seed)


def rand_logits(*shape, seed=0):
    return torch.randn(*shape, generator=_gen(seed), dtype=torch.float64) * 2


def kept_by_loop(row, top_k=None, top_p=None):
    """The token ids a row keeps, from the definitions, with Python floats."""
    values = [float(x) for x in row]
    ranked = sorted(range(len(values)), key=lambda t: -values[t])
    kept = ranked[:top_k] if top_k is not None else ranked
    if top_p is not None:
        top = max(values[t] for t in kept)
        z = sum(math.exp(values[t] - top) for t in kept)
        nucleus, mass = [], 0.0
        for t in kept:  # most probable first
            nucleus.append(t)
            mass += math.exp(values[t] - top) / z
            if mass >= top_p:
                break
        kept = nucleus
    return set(kept)


# --- filter_logits --------------------------------------------------------------------------


@pytest.mark.parametrize("top_k, top_p", [(1, None), (3, None), (7, None), (50, None),
                                          (None, 0.3), (None, 0.9), (None, 1.0),
                                          (4, 0.6), (2, 0.99)])
def test_filter_matches_the_definitions(top_k, top_p):
    logits = rand_logits(5, 7, seed=1)
    got = filter_logits(logits, top_k=top_k, top_p=top_p)
    assert got.shape == logits.shape and got.dtype == logits.dtype
    for row, out in zip(logits, got, strict=True):
        kept = kept_by_loop(row, top_k, top_p)
        assert {t for t in range(7) if out[t] != -math.inf} == kept
        assert all(out[t] == row[t] for t in kept)  # kept logits are untouched


def test_top_p_by_hand():
    logits = torch.tensor([0.5, 0.3, 0.15, 0.05]).log()
    assert torch.isfinite(filter_logits(logits, top_p=0.75)).tolist() == [True, True, False, False]
    assert torch.isfinite(filter_logits(logits, top_p=0.81)).tolist() == [True, True, True, False]
    # The most probable token alone reaches a small p; the row is never empty.
    assert torch.isfinite(filter_logits(logits, top_p=1e-9)).tolist() == [True, False, False, False]
    assert torch.isfinite(filter_logits(logits, top_p=1.0)).all()


def test_top_p_applies_to_what_top_k_kept():
    logits = torch.tensor([0.4, 0.3, 0.2, 0.1]).log()
    # Alone, top_p = 0.5 needs two tokens (0.4 < 0.5 ≤ 0.7) ...
    assert torch.isfinite(filter_logits(logits, top_p=0.5)).tolist() == [True, True, False, False]
    # ... but after top_k = 2 the first token has 4/7 ≥ 0.5 of the remaining mass.
    got = filter_logits(logits, top_k=2, top_p=0.5)
    assert torch.isfinite(got).tolist() == [True, False, False, False]


def test_filter_keeps_exactly_k_and_does_not_modify_its_input():
    logits = rand_logits(3, 4, 20, seed=2)
    before = logits.clone()
    got = filter_logits(logits, top_k=5)
    assert (torch.isfinite(got).sum(-1) == 5).all()
    assert torch.equal(logits, before)
    assert torch.equal(filter_logits(logits), logits) and filter_logits(logits) is not logits


def test_filter_works_in_half_precision():
    logits = rand_logits(4, 9, seed=3).half()
    got = filter_logits(logits, top_k=6, top_p=0.7)
    assert got.dtype == torch.float16
    for row, out in zip(logits, got, strict=True):
        assert {t for t in range(9) if out[t] != -math.inf} == kept_by_loop(row, 6, 0.7)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"top_k": 0}, "top_k must be a positive integer, got 0"),
        ({"top_k": 2.0}, "top_k must be a positive integer, got 2.0"),
        ({"top_p": 0}, r"top_p must be a number in \(0, 1\], got 0"),
        ({"top_p": 1.5}, r"top_p must be a number in \(0, 1\], got 1.5"),
        ({"top_p": -0.2}, r"top_p must be a number in \(0, 1\], got -0.2"),
    ],
)
def test_filter_bad_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        filter_logits(rand_logits(2, 5), **kwargs)


def test_bad_logits():
    with pytest.raises(TypeError, match="logits must be a floating-point tensor"):
        filter_logits(torch.tensor([1, 2, 3]))
    with pytest.raises(ValueError, match="logits must not contain NaN or \\+inf"):
        filter_logits(torch.tensor([0.0, math.nan]))
    with pytest.raises(ValueError, match="every entry is -inf"):
        filter_logits(torch.tensor([[0.0, 1.0], [-math.inf, -math.inf]]))
    with pytest.raises(ValueError, match=r"logits has shape \(3, 0\): no token"):
        sample_next(torch.zeros(3, 0))


# --- sample_next ----------------------------------------------------------------------------


def test_temperature_zero_is_argmax_and_shapes():
    logits = rand_logits(2, 3, 11, seed=4)
    got = sample_next(logits, temperature=0)
    assert got.shape == (2, 3) and got.dtype == torch.long
    assert torch.equal(got, logits.argmax(-1))
    one = sample_next(logits[0, 0], temperature=0.0)
    assert one.shape == () and one.item() == logits[0, 0].argmax().item()
    drawn = sample_next(logits, generator=_gen(0))
    assert drawn.shape == (2, 3) and drawn.dtype == torch.long
    assert ((drawn >= 0) & (drawn < 11)).all()
    # A tiny temperature is argmax too, without overflowing to NaN.
    assert torch.equal(sample_next(logits.float(), 1e-30, generator=_gen(1)), logits.argmax(-1))


@pytest.mark.parametrize(
    "temperature, top_k, top_p",
    [(1.0, None, None), (0.5, None, None), (2.0, None, None), (1.0, 3, None),
     (1.0, None, 0.7), (1.5, 4, 0.8)],
)
def test_sample_frequencies_match_the_filtered_softmax(temperature, top_k, top_p):
    logits = torch.tensor([2.0, 1.5, 1.0, 0.2, -0.5, -1.0], dtype=torch.float64)
    num = 20000
    draws = sample_next(logits.expand(num, 6), temperature, top_k, top_p, generator=_gen(5))
    freq = torch.bincount(draws, minlength=6).double() / num
    expected = torch.softmax(filter_logits(logits / temperature, top_k, top_p), dim=-1)
    assert (freq[expected == 0] == 0).all()  # a filtered token is never drawn
    # Total variation distance; its typical size here is about 0.01.
    assert 0.5 * (freq - expected).abs().sum() < 0.03, (freq.tolist(), expected.tolist())


def test_sample_is_reproducible_from_the_generator():
    logits = rand_logits(50, 8, seed=6)
    a = sample_next(logits, generator=_gen(3))
    assert torch.equal(a, sample_next(logits, generator=_gen(3)))
    assert not torch.equal(a, sample_next(logits, generator=_gen(4)))


@pytest.mark.parametrize("temperature", [-0.1, -1, math.inf, math.nan, True, "1"])
def test_bad_temperature(temperature):
    with pytest.raises(ValueError, match="temperature must be a non-negative, finite number"):
        sample_next(rand_logits(4), temperature=temperature)


def test_sample_bad_arguments():
    with pytest.raises(ValueError, match="top_k must be a positive integer"):
        sample_next(rand_logits(4), temperature=0, top_k=0)
    with pytest.raises(TypeError, match="generator must be a torch.Generator or None, got int"):
        sample_next(rand_logits(4), generator=1)


# --- beam_search ----------------------------------------------------------------------------


class Table:
    """A fixed next-token distribution for every prefix, drawn once per prefix from a seed."""

    def __init__(self, vocab, seed=0, eos=None):
        self.vocab, self.seed, self.eos = vocab, seed, eos
        self.seen = []

    def row(self, prefix):
        code = sum(t * (self.vocab + 1) ** i for i, t in enumerate(prefix))
        logits = torch.randn(self.vocab, generator=_gen(self.seed * 100003 + code),
                             dtype=torch.float64) * 2
        return torch.log_softmax(logits, dim=-1)

    def __call__(self, prefixes):
        assert prefixes.dtype == torch.long and prefixes.ndim == 2
        rows = [tuple(p) for p in prefixes.tolist()]
        self.seen.extend(rows)
        return torch.stack([self.row(p) for p in rows])

    def score(self, tokens):
        return sum(float(self.row(tokens[:i])[tokens[i]]) for i in range(1, len(tokens)))


def exhaustive(table, bos, max_len, eos=None):
    """Every sequence beam search could return, with its total log-probability, best first."""
    sequences = set()
    for tail in itertools.product(range(table.vocab), repeat=max_len):
        tail = list(tail)
        if eos is not None and eos in tail:
            tail = tail[: tail.index(eos) + 1]  # generation stops at the first eos
        sequences.add(tuple([bos] + tail))
    scored = [(list(s), table.score(list(s))) for s in sequences]
    return sorted(scored, key=lambda pair: -pair[1])


def assert_same_ranking(got, expected):
    assert [tokens for tokens, _ in got] == [tokens for tokens, _ in expected]
    for (_, a), (_, b) in zip(got, expected, strict=True):
        assert a == pytest.approx(b, abs=1e-9)


@pytest.mark.parametrize("vocab, max_len, seed", [(2, 4, 0), (3, 3, 1), (4, 2, 2)])
def test_beam_wide_enough_is_exhaustive_search(vocab, max_len, seed):
    table = Table(vocab, seed)
    everything = exhaustive(table, 0, max_len)
    assert len(everything) == vocab**max_len
    got = beam_search(table, bos=0, beam_size=vocab**max_len, max_len=max_len)
    assert_same_ranking(got, everything)
    # A narrower beam returns real sequences with their true scores, best first, never
    # better than the best that exists.
    narrow = beam_search(table, bos=0, beam_size=2, max_len=max_len)
    assert len(narrow) == 2 and narrow[0][1] >= narrow[1][1]
    for tokens, score in narrow:
        assert tokens[0] == 0 and len(tokens) == max_len + 1
        assert score == pytest.approx(table.score(tokens), abs=1e-9)
    assert narrow[0][1] <= everything[0][1] + 1e-12


def test_beam_of_one_is_greedy():
    table = Table(5, seed=3)
    tokens = [1]
    for _ in range(4):
        tokens.append(int(table.row(tuple(tokens)).argmax()))
    [(got, score)] = beam_search(table, bos=1, beam_size=1, max_len=4)
    assert got == tokens and score == pytest.approx(table.score(tokens))


def test_beam_finds_a_better_sequence_than_greedy():
    # Greedy takes token 0 (0.6) and then has 0.5: 0.30. Token 1 (0.4) then 0.9 gives 0.36.
    table = {(): [0.6, 0.4], (0,): [0.5, 0.5], (1,): [0.9, 0.1]}

    def log_probs_fn(prefixes):
        return torch.tensor([table[tuple(p[1:])] for p in prefixes.tolist()]).log()

    [(greedy, greedy_score)] = beam_search(log_probs_fn, bos=7, beam_size=1, max_len=2)
    (best, best_score), _ = beam_search(log_probs_fn, bos=7, beam_size=2, max_len=2)
    assert greedy == [7, 0, 0] and greedy_score == pytest.approx(math.log(0.30))
    assert best == [7, 1, 0] and best_score == pytest.approx(math.log(0.36))


@pytest.mark.parametrize("vocab, max_len, seed", [(3, 4, 4), (4, 3, 5)])
def test_beam_with_eos_is_exhaustive_search_over_finished_sequences(vocab, max_len, seed):
    eos = 1
    table = Table(vocab, seed)
    everything = exhaustive(table, 0, max_len, eos)
    got = beam_search(table, bos=0, beam_size=len(everything), max_len=max_len, eos=eos)
    assert_same_ranking(got, everything)
    # A finished beam is never extended: no prefix passed to the model ends with eos.
    assert all(prefix[-1] != eos for prefix in table.seen)
    assert any(tokens[-1] == eos and len(tokens) < max_len + 1 for tokens, _ in got)


def test_beam_that_finishes_early_keeps_its_score_and_can_win():
    # eos = 2 has probability 0.5 at once; every longer sequence pays at least two 0.5s.
    def log_probs_fn(prefixes):
        return torch.tensor([[0.25, 0.25, 0.5]] * len(prefixes)).log()

    got = beam_search(log_probs_fn, bos=0, beam_size=3, max_len=5, eos=2)
    assert got[0] == ([0, 2], pytest.approx(math.log(0.5)))
    assert [len(tokens) for tokens, _ in got[1:]] == [3, 3]  # 0.25 · 0.5 each


def test_beam_returns_fewer_when_fewer_sequences_exist_and_skips_impossible_ones():
    table = Table(2, seed=6)
    assert len(beam_search(table, bos=0, beam_size=5, max_len=1)) == 2

    def log_probs_fn(prefixes):  # token 2 is impossible
        return torch.tensor([[math.log(0.7), math.log(0.3), -math.inf]] * len(prefixes))

    got = beam_search(log_probs_fn, bos=0, beam_size=10, max_len=2)
    assert len(got) == 4 and all(2 not in tokens for tokens, _ in got)


def test_beam_bad_arguments():
    table = Table(3)
    with pytest.raises(ValueError, match="beam_size must be a positive integer, got 0"):
        beam_search(table, 0, 0, 3)
    with pytest.raises(ValueError, match="max_len must be a positive integer, got -1"):
        beam_search(table, 0, 2, -1)
    with pytest.raises(ValueError, match="bos must be a non-negative integer, got -1"):
        beam_search(table, -1, 2, 3)
    with pytest.raises(ValueError, match="eos must be a non-negative integer, got 1.0"):
        beam_search(table, 0, 2, 3, eos=1.0)
    with pytest.raises(TypeError, match="log_probs_fn must be callable, got dict"):
        beam_search({}, 0, 2, 3)
    with pytest.raises(ValueError, match=r"log_probs_fn returned shape \(3,\) for 1 prefixes"):
        beam_search(lambda p: torch.zeros(3), 0, 2, 3)
    with pytest.raises(ValueError, match=r"returned shape \(2, 4\) for 2 prefixes but must "
                                         r"return \(2, 3\)"):
        beam_search(lambda p: torch.zeros(len(p), 3 if p.shape[1] == 1 else 4), 0, 2, 3)
    with pytest.raises(ValueError, match="log_probs_fn returned NaN"):
        beam_search(lambda p: torch.full((len(p), 3), math.nan), 0, 2, 3)


# --- next_token_probs and entropy_bits (q28) ------------------------------------------------

from attention_qa.decoding import entropy_bits, next_token_probs  # noqa: E402


@pytest.mark.parametrize(("temperature", "top_k", "top_p"),
                         [(1.0, None, None), (0.5, 4, None), (1.7, None, 0.8), (0.8, 5, 0.6)])
def test_next_token_probs_match_the_definitions(temperature, top_k, top_p):
    logits = rand_logits(3, 9, seed=5)
    probs = next_token_probs(logits, temperature, top_k, top_p)
    for row, got in zip(logits, probs, strict=True):
        scaled = [float(x) / temperature for x in row]
        kept = kept_by_loop(torch.tensor(scaled, dtype=torch.float64), top_k, top_p)
        z = sum(math.exp(scaled[t]) for t in kept)
        expected = [math.exp(scaled[t]) / z if t in kept else 0.0 for t in range(len(scaled))]
        assert torch.allclose(got, torch.tensor(expected, dtype=torch.float64), atol=1e-12)


def test_next_token_probs_at_temperature_zero_is_the_argmax_and_sample_next_agrees():
    logits = rand_logits(4, 7, seed=6)
    probs = next_token_probs(logits, 0)
    assert torch.equal(probs.argmax(-1), logits.argmax(-1))
    assert torch.equal(probs.sum(-1), torch.ones(4, dtype=torch.float64))
    assert torch.equal(sample_next(logits, 0), logits.argmax(-1))
    sharp = next_token_probs(logits, 0.01)
    assert torch.allclose(sharp, probs, atol=1e-6)


def test_sample_frequencies_match_next_token_probs():
    logits = rand_logits(8, seed=7)
    probs = next_token_probs(logits, 0.9, top_k=6, top_p=0.9)
    draws = sample_next(logits.expand(40000, 8), 0.9, top_k=6, top_p=0.9, generator=_gen(8))
    freq = torch.bincount(draws, minlength=8).double() / 40000
    assert (freq - probs).abs().max() < 0.01
    assert torch.equal(freq > 0, probs > 0)


def test_entropy_bits_against_torch_categorical():
    probs = torch.softmax(rand_logits(5, 6, seed=9), -1)
    expected = torch.distributions.Categorical(probs=probs).entropy() / math.log(2)
    assert torch.allclose(entropy_bits(probs), expected, atol=1e-12)
    assert entropy_bits(torch.full((8,), 1 / 8, dtype=torch.float64)).item() == pytest.approx(3)
    assert entropy_bits(torch.tensor([1.0, 0.0, 0.0])).item() == 0


def test_next_token_probs_refuses_bad_arguments():
    with pytest.raises(ValueError, match="temperature"):
        next_token_probs(rand_logits(5), -1)
    with pytest.raises(ValueError, match="top_p"):
        next_token_probs(rand_logits(5), 1.0, top_p=0)
    with pytest.raises(TypeError):
        entropy_bits([0.5, 0.5])


# --- length penalty, min-p and penalties against transformers' processors ---------------------


@pytest.mark.parametrize("length_penalty", [0.5, 1.0, 2.0])
@pytest.mark.parametrize("vocab, max_len, seed", [(3, 4, 4), (4, 3, 5)])
def test_beam_length_penalty_ranks_by_score_over_length_power(vocab, max_len, seed,
                                                              length_penalty):
    eos = 1
    table = Table(vocab, seed)
    everything = exhaustive(table, 0, max_len, eos)
    ranked = sorted(everything, key=lambda pair: -pair[1] / (len(pair[0]) - 1) ** length_penalty)
    got = beam_search(table, bos=0, beam_size=len(everything), max_len=max_len, eos=eos,
                      length_penalty=length_penalty)
    assert_same_ranking(got, ranked)


def test_without_a_length_penalty_the_short_beam_wins():
    # eos at once (0.3) beats any two-token sequence (at most 0.7 · 0.4 = 0.28) by total,
    # but not by the mean log-probability per token.
    table = {(): [0.3, 0.7, 0.0], (1,): [0.4, 0.3, 0.3]}

    def log_probs_fn(prefixes):
        return torch.tensor([table[tuple(p[1:])] for p in prefixes.tolist()]).log()

    short = beam_search(log_probs_fn, bos=2, beam_size=2, max_len=2, eos=0)
    normalised = beam_search(log_probs_fn, bos=2, beam_size=2, max_len=2, eos=0,
                             length_penalty=1.0)
    assert short[0][0] == [2, 0] and normalised[0][0] == [2, 1, 0]
    assert normalised[0][1] == pytest.approx(math.log(0.28))  # the total is returned


@pytest.mark.parametrize("min_p", [0.0, 0.05, 0.2, 0.5, 1.0])
def test_min_p_keeps_what_transformers_keeps(min_p):
    logits = rand_logits(6, 40, seed=8)
    ours = filter_logits(logits, min_p=min_p)
    theirs = MinPLogitsWarper(min_p)(None, logits.clone())
    assert torch.equal(ours == -math.inf, theirs == -math.inf)
    assert torch.equal(ours[ours > -math.inf], logits[ours > -math.inf])


def test_min_p_after_top_k_and_by_hand():
    logits = torch.tensor([math.log(0.5), math.log(0.3), math.log(0.15), math.log(0.05)])
    kept = filter_logits(logits, min_p=0.2) > -math.inf  # 0.1 and above: three tokens
    assert kept.tolist() == [True, True, True, False]
    both = filter_logits(logits, top_k=2, min_p=0.2) > -math.inf
    assert both.tolist() == [True, True, False, False]


@pytest.mark.parametrize("repetition", [1.0, 1.3, 0.8, 2.0])
def test_repetition_penalty_matches_transformers(repetition):
    logits = rand_logits(3, 20, seed=9)
    previous = torch.randint(0, 20, (3, 7), generator=_gen(10))
    theirs = RepetitionPenaltyLogitsProcessor(repetition)(previous, logits.clone())
    assert torch.allclose(apply_penalties(logits, previous, repetition=repetition), theirs,
                          rtol=0, atol=1e-12)


def test_frequency_and_presence_penalties_by_loop():
    logits = rand_logits(2, 12, seed=11)
    previous = torch.tensor([[3, 3, 3, 5, 0], [7, 7, 1, 1, 1]])
    got = apply_penalties(logits, previous, frequency=0.5, presence=0.25)
    for b in range(2):
        for token in range(12):
            count = previous[b].tolist().count(token)
            want = float(logits[b, token]) - 0.5 * count - (0.25 if count else 0.0)
            assert float(got[b, token]) == pytest.approx(want, abs=1e-12)
    assert torch.equal(apply_penalties(logits, previous), logits)  # the defaults: no change
    assert torch.equal(apply_penalties(logits[0], torch.tensor([], dtype=torch.long),
                                       repetition=2.0), logits[0])


@pytest.mark.parametrize("kwargs, message", [
    (dict(previous_tokens=torch.tensor([[1.0]])), "integer ids"),
    (dict(previous_tokens=torch.tensor([1, 2])), "leading dims"),
    (dict(previous_tokens=torch.tensor([[1], [30]])), "[0, V)"),
    (dict(repetition=0.0), "repetition"),
    (dict(frequency=math.inf), "frequency"),
])
def test_penalties_refuse_bad_input_in_words(kwargs, message):
    args = dict(logits=rand_logits(2, 12), previous_tokens=torch.tensor([[1], [2]])) | kwargs
    with pytest.raises(ValueError, match=re.escape(message)):
        apply_penalties(**args)


def test_min_p_and_length_penalty_refuse_bad_values():
    with pytest.raises(ValueError, match="min_p"):
        filter_logits(rand_logits(5), min_p=1.5)
    with pytest.raises(ValueError, match="length_penalty"):
        beam_search(Table(3), bos=0, beam_size=2, max_len=2, length_penalty=math.nan)
