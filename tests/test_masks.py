import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_qa.masks import (
    bigbird_mask,
    causal_mask,
    combine_masks,
    global_local_mask,
    padding_mask,
    sink_window_mask,
    sliding_window_mask,
    to_additive,
)


def mask_by_loop(n, m, allowed):
    return torch.tensor([[allowed(i, j) for j in range(m)] for i in range(n)], dtype=torch.bool)


# --- causal_mask ----------------------------------------------------------------------------


@pytest.mark.parametrize("n", [1, 2, 5, 9])
def test_causal_mask_is_lower_triangle(n):
    got = causal_mask(n)
    assert got.dtype == torch.bool and got.shape == (n, n)
    assert torch.equal(got, torch.tril(torch.ones(n, n, dtype=torch.bool)))
    assert torch.equal(causal_mask(n, n), got)


@pytest.mark.parametrize("n, m", [(1, 1), (1, 6), (3, 7), (4, 4), (2, 9)])
def test_causal_mask_with_cached_keys_matches_loop(n, m):
    got = causal_mask(n, m)
    assert torch.equal(got, mask_by_loop(n, m, lambda i, j: j <= i + (m - n)))
    # The queries are the last n of m positions: the last one sees every key.
    assert got[-1].all()
    # The first query sees exactly the m − n cached keys and itself.
    assert got[0].sum().item() == m - n + 1


@pytest.mark.parametrize("n, m", [(0, None), (-1, None), (3, 0), (3, -2), (2.0, None), (True, 3)])
def test_causal_mask_rejects_bad_lengths(n, m):
    with pytest.raises(ValueError, match="must be a positive integer"):
        causal_mask(n, m)


# --- padding_mask ---------------------------------------------------------------------------


@pytest.mark.parametrize("lengths, max_len", [([3, 1, 0], 4), ([5], 5), ((2, 2), 3)])
def test_padding_mask_matches_loop(lengths, max_len):
    got = padding_mask(lengths, max_len)
    expected = torch.tensor(
        [[pos < length for pos in range(max_len)] for length in lengths], dtype=torch.bool
    )
    assert got.dtype == torch.bool
    assert torch.equal(got, expected)
    assert got.sum(dim=1).tolist() == list(lengths)


@pytest.mark.parametrize(
    "lengths, max_len, message",
    [
        ([1, 5], 4, r"lengths must lie in 0..max_len=4, got \[5\]"),
        ([-1, 2], 4, r"got \[-1\]"),
        ([1.5, 2.0], 4, "1-D sequence of integers"),
        ([[1, 2]], 4, "1-D sequence of integers"),
        ([True, False], 4, "1-D sequence of integers"),
        ([1, 2], 0, "max_len must be a positive integer"),
    ],
)
def test_padding_mask_rejects_bad_lengths(lengths, max_len, message):
    with pytest.raises(ValueError, match=message):
        padding_mask(lengths, max_len)


# --- combine_masks --------------------------------------------------------------------------


def test_combine_masks_is_logical_and_with_broadcast():
    causal = causal_mask(4)  # (4, 4)
    keys = padding_mask([4, 2], 4)[:, None, None, :]  # (2, 1, 1, 4)
    got = combine_masks(causal, keys)
    assert got.shape == (2, 1, 4, 4) and got.dtype == torch.bool
    for b in range(2):
        for i in range(4):
            for j in range(4):
                assert got[b, 0, i, j].item() == (bool(causal[i, j]) and bool(keys[b, 0, 0, j]))


def test_combine_masks_of_one_mask_is_an_equal_copy():
    mask = causal_mask(3)
    got = combine_masks(mask)
    assert torch.equal(got, mask)
    got[0, 0] = False
    assert mask[0, 0].item()  # the input is not modified through the result


def test_combine_masks_errors():
    with pytest.raises(ValueError, match=r"\(3, 3\), \(2, 4\).*do not broadcast"):
        combine_masks(causal_mask(3), torch.ones(2, 4, dtype=torch.bool))
    with pytest.raises(TypeError, match=r"masks\[1\] must be a boolean tensor.*float32"):
        combine_masks(causal_mask(3), torch.ones(3, 3))
    with pytest.raises(TypeError, match=r"masks\[0\] must be a torch.Tensor"):
        combine_masks([[True]])
    with pytest.raises(ValueError, match="at least one mask"):
        combine_masks()


@settings(max_examples=25, deadline=None)
@given(n=st.integers(1, 8), window=st.integers(0, 8), seed=st.integers(0, 2**16))
def test_combine_masks_property(n, window, seed):
    g = torch.Generator().manual_seed(seed)
    random_mask = torch.rand(n, n, generator=g) < 0.5
    got = combine_masks(causal_mask(n), sliding_window_mask(n, window), random_mask)
    assert torch.equal(got, sliding_window_mask(n, window, causal=True) & random_mask)


# --- to_additive ----------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32, torch.float64])
def test_to_additive_values(dtype):
    mask = causal_mask(3, 5)
    got = to_additive(mask, dtype)
    assert got.dtype == dtype and got.shape == mask.shape
    assert (got[mask] == 0).all()
    assert (got[~mask] == torch.finfo(dtype).min).all()
    assert torch.isfinite(got).all()


def test_to_additive_blocks_the_same_keys_as_the_boolean_mask():
    torch.manual_seed(0)
    q, k, v = torch.randn(2, 3, 5, 8), torch.randn(2, 3, 6, 8), torch.randn(2, 3, 6, 4)
    mask = combine_masks(causal_mask(5, 6), padding_mask([6, 4], 6)[:, None, None, :])
    with_bool = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    with_float = F.scaled_dot_product_attention(q, k, v, attn_mask=to_additive(mask, q.dtype))
    torch.testing.assert_close(with_float, with_bool)


def test_to_additive_errors():
    with pytest.raises(TypeError, match="mask must be a boolean tensor"):
        to_additive(torch.zeros(2, 2), torch.float32)
    with pytest.raises(TypeError, match="dtype must be a floating-point torch.dtype"):
        to_additive(causal_mask(2), torch.int64)
    with pytest.raises(TypeError, match="mask must be a torch.Tensor"):
        to_additive([[True]], torch.float32)


# --- sliding_window_mask --------------------------------------------------------------------


@pytest.mark.parametrize("n, window", [(1, 0), (5, 0), (6, 1), (7, 2), (4, 3), (4, 10)])
def test_sliding_window_matches_loop(n, window):
    got = sliding_window_mask(n, window)
    assert got.dtype == torch.bool and got.shape == (n, n)
    assert torch.equal(got, mask_by_loop(n, n, lambda i, j: abs(i - j) <= window))
    causal = sliding_window_mask(n, window, causal=True)
    assert torch.equal(causal, mask_by_loop(n, n, lambda i, j: 0 <= i - j <= window))


def test_sliding_window_special_cases():
    assert torch.equal(sliding_window_mask(5, 0), torch.eye(5, dtype=torch.bool))
    assert sliding_window_mask(5, 4).all()
    assert torch.equal(sliding_window_mask(5, 4, causal=True), causal_mask(5))


@settings(max_examples=25, deadline=None)
@given(n=st.integers(1, 30), window=st.integers(0, 30))
def test_sliding_window_properties(n, window):
    band = sliding_window_mask(n, window)
    causal = sliding_window_mask(n, window, causal=True)
    assert torch.equal(band, band.T)
    assert band.diagonal().all()
    assert torch.equal(causal, band & causal_mask(n))
    # Each query sees at most window + 1 keys causally, 2·window + 1 keys two-sided.
    assert causal.sum(dim=1).max().item() == min(window, n - 1) + 1
    assert band.sum(dim=1).max().item() == min(2 * window + 1, n)


@pytest.mark.parametrize(
    "n, window, causal, message",
    [
        (0, 1, False, "n must be a positive integer"),
        (4, -1, False, "window must be a non-negative integer"),
        (4, 1.5, False, "window must be a non-negative integer"),
        (4, True, False, "window must be a non-negative integer"),
        (4, 1, "yes", "causal must be True or False"),
    ],
)
def test_sliding_window_errors(n, window, causal, message):
    with pytest.raises(ValueError, match=message):
        sliding_window_mask(n, window, causal=causal)


# --- global_local_mask ----------------------------------------------------------------------


@pytest.mark.parametrize("n, window, global_tokens", [(8, 1, [0]), (9, 2, [0, 5]), (5, 0, [4])])
def test_global_local_matches_loop(n, window, global_tokens):
    got = global_local_mask(n, window, global_tokens)
    expected = mask_by_loop(
        n, n, lambda i, j: abs(i - j) <= window or i in global_tokens or j in global_tokens
    )
    assert got.dtype == torch.bool and got.shape == (n, n)
    assert torch.equal(got, expected)
    for g in global_tokens:
        assert got[g].all() and got[:, g].all()


def test_global_local_with_no_global_tokens_is_the_window():
    assert torch.equal(global_local_mask(6, 1, []), sliding_window_mask(6, 1))
    assert torch.equal(
        global_local_mask(6, 1, torch.tensor([], dtype=torch.long)), sliding_window_mask(6, 1)
    )


def test_global_local_accepts_a_tensor_and_duplicates():
    assert torch.equal(global_local_mask(6, 1, torch.tensor([2, 2])), global_local_mask(6, 1, [2]))


@settings(max_examples=25, deadline=None)
@given(data=st.data(), n=st.integers(1, 20), window=st.integers(0, 5))
def test_global_local_properties(data, n, window):
    global_tokens = data.draw(st.lists(st.integers(0, n - 1), max_size=3))
    got = global_local_mask(n, window, global_tokens)
    assert torch.equal(got, got.T)
    assert torch.equal(got & sliding_window_mask(n, window), sliding_window_mask(n, window))
    # Any two positions are joined in at most two steps through a global position.
    if global_tokens:
        two_steps = (got.int() @ got.int()) > 0
        assert two_steps.all()


@pytest.mark.parametrize(
    "n, window, global_tokens, message",
    [
        (5, 1, [5], r"global_tokens must lie in 0..n-1=4, got \[5\]"),
        (5, 1, [-1], r"got \[-1\]"),
        (5, 1, [1.0], "1-D sequence of integer positions"),
        (5, 1, [[0]], "1-D sequence of integer positions"),
        (5, 1, 2, "1-D sequence of integer positions"),
        (5, -1, [0], "window must be a non-negative integer"),
        (0, 1, [], "n must be a positive integer"),
    ],
)
def test_global_local_errors(n, window, global_tokens, message):
    with pytest.raises(ValueError, match=message):
        global_local_mask(n, window, global_tokens)


# --- bigbird_mask ---------------------------------------------------------------------------


def _gen(seed):
    return torch.Generator().manual_seed(seed)


@settings(max_examples=30, deadline=None)
@given(
    data=st.data(),
    n=st.integers(1, 20),
    window=st.integers(0, 4),
    num_random=st.integers(0, 25),
    seed=st.integers(0, 2**16),
)
def test_bigbird_adds_random_keys_to_global_local(data, n, window, num_random, seed):
    global_tokens = data.draw(st.lists(st.integers(0, n - 1), max_size=3))
    base = global_local_mask(n, window, global_tokens)
    got = bigbird_mask(n, window, global_tokens, num_random, generator=_gen(seed))
    assert got.dtype == torch.bool and got.shape == (n, n)
    assert torch.equal(got & base, base)  # everything Longformer's pattern allows
    for i in range(n):
        if i in global_tokens:
            assert got[i].all()  # a global row already saw every key
            continue
        unseen = int((~base[i]).sum())
        assert int((got[i] & ~base[i]).sum()) == min(num_random, unseen)
    # Global columns are unchanged: every query still sees every global key.
    for g in global_tokens:
        assert got[:, g].all()


def test_bigbird_is_reproducible_from_the_generator():
    a = bigbird_mask(16, 1, [0], 3, generator=_gen(0))
    assert torch.equal(a, bigbird_mask(16, 1, [0], 3, generator=_gen(0)))
    assert not torch.equal(a, bigbird_mask(16, 1, [0], 3, generator=_gen(1)))
    torch.manual_seed(4)
    b = bigbird_mask(16, 1, [0], 3)
    torch.manual_seed(4)
    assert torch.equal(b, bigbird_mask(16, 1, [0], 3))


def test_bigbird_random_keys_are_uniform_over_the_unseen_ones():
    # Row 0 of a 12-token window-1 mask does not see keys 2..11. Drawing 2 of those 10 keys
    # 2000 times gives each one 400 times on average, standard deviation about 18.
    g = _gen(3)
    counts = torch.zeros(12)
    for _ in range(2000):
        counts += bigbird_mask(12, 1, [], 2, generator=g)[0].float()
    assert counts[:2].tolist() == [2000, 2000]  # the window: key 0 (itself) and key 1
    assert ((counts[2:] - 400).abs() < 100).all(), counts[2:].tolist()


def test_bigbird_without_random_keys_is_global_local():
    assert torch.equal(bigbird_mask(9, 2, [0, 5], 0), global_local_mask(9, 2, [0, 5]))
    # Asking for more random keys than remain gives each non-global row every key.
    assert bigbird_mask(9, 1, [3], 100, generator=_gen(0)).all()


@pytest.mark.parametrize(
    "kwargs, error, message",
    [
        ({"num_random": -1}, ValueError, "num_random must be a non-negative integer, got -1"),
        ({"num_random": 1.5}, ValueError, "num_random must be a non-negative integer, got 1.5"),
        ({"num_random": 1, "generator": 0}, TypeError, "generator must be a torch.Generator"),
        ({"num_random": 1, "global_tokens": [9]}, ValueError, "global_tokens must lie in"),
        ({"num_random": 1, "window": -2}, ValueError, "window must be a non-negative integer"),
    ],
)
def test_bigbird_errors(kwargs, error, message):
    args = {"n": 6, "window": 1, "global_tokens": [0]} | kwargs
    with pytest.raises(error, match=message):
        bigbird_mask(**args)


# --- sink_window_mask -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "n, window, sinks", [(1, 1, 0), (6, 1, 0), (8, 3, 2), (10, 4, 1), (5, 6, 2), (7, 2, 9)]
)
def test_sink_window_matches_loop(n, window, sinks):
    got = sink_window_mask(n, window, sinks)
    assert got.dtype == torch.bool and got.shape == (n, n)
    expected = mask_by_loop(n, n, lambda i, j: j <= i and (j < sinks or i - j < window))
    assert torch.equal(got, expected)


@settings(max_examples=25, deadline=None)
@given(n=st.integers(1, 30), window=st.integers(1, 30), sinks=st.integers(0, 30))
def test_sink_window_keeps_exactly_the_sinks_and_the_last_window_keys(n, window, sinks):
    mask = sink_window_mask(n, window, sinks)
    for i in range(n):
        kept = set(mask[i].nonzero().flatten().tolist())
        assert kept == set(range(min(sinks, i + 1))) | set(range(max(0, i - window + 1), i + 1))
    # Never more than sinks + window keys, whatever n: the cache of StreamingLLM.
    assert mask.sum(dim=1).max().item() == min(n, sinks + window)
    # Without sinks it is Mistral's causal window, which counts the keys before i.
    assert torch.equal(sink_window_mask(n, window, 0), sliding_window_mask(n, window - 1, True))
    assert torch.equal(mask & ~causal_mask(n), torch.zeros(n, n, dtype=torch.bool))


@pytest.mark.parametrize(
    "n, window, sinks, message",
    [
        (0, 1, 0, "n must be a positive integer, got 0"),
        (4, 0, 1, "window must be a positive integer, got 0"),
        (4, 2.0, 1, "window must be a positive integer, got 2.0"),
        (4, 2, -1, "sinks must be a non-negative integer, got -1"),
        (4, 2, True, "sinks must be a non-negative integer, got True"),
    ],
)
def test_sink_window_errors(n, window, sinks, message):
    with pytest.raises(ValueError, match=message):
        sink_window_mask(n, window, sinks)
