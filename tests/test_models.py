from functools import lru_cache

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_qa.costs import kv_cache_bytes
from attention_qa.models import TinyTransformerLM
from attention_qa.multihead import MultiHeadAttention

VOCAB, D_MODEL, HEADS, LAYERS, MAX_LEN = 31, 16, 4, 2, 24


pytestmark = pytest.mark.usefixtures("one_thread")


def tiny_lm(seed=0):
    torch.manual_seed(seed)
    return TinyTransformerLM(VOCAB, D_MODEL, HEADS, LAYERS, MAX_LEN).eval()


# Generation does not change the weights, so the property test may share a few models.
shared_lm = lru_cache(maxsize=None)(tiny_lm)


def test_forward_shape_and_building_blocks():
    lm = tiny_lm()
    tokens = torch.randint(0, VOCAB, (3, 7))
    logits = lm(tokens)
    assert logits.shape == (3, 7, VOCAB)
    assert torch.isfinite(logits).all()
    attention = [mod for mod in lm.modules() if isinstance(mod, MultiHeadAttention)]
    assert len(attention) == LAYERS
    assert lm.pos_emb.weight.shape == (MAX_LEN, D_MODEL)


@pytest.mark.parametrize("t", [0, 3, 8])
def test_logits_do_not_depend_on_future_tokens(t):
    lm = tiny_lm(1)
    tokens = torch.randint(0, VOCAB, (2, 10))
    changed = tokens.clone()
    changed[:, t + 1 :] = (changed[:, t + 1 :] + 1 + torch.arange(9 - t)) % VOCAB
    before, after = lm(tokens), lm(changed)
    torch.testing.assert_close(after[:, : t + 1], before[:, : t + 1], atol=0, rtol=0)
    # The later positions do see the change, so the test above is not vacuous.
    assert (after[:, t + 1 :] - before[:, t + 1 :]).abs().amax() > 1e-3


def test_logits_depend_on_past_tokens_and_positions():
    lm = tiny_lm(2)
    tokens = torch.randint(0, VOCAB, (1, 6))
    changed = tokens.clone()
    changed[0, 0] = (changed[0, 0] + 1) % VOCAB
    assert (lm(changed)[0, -1] - lm(tokens)[0, -1]).abs().amax() > 1e-3
    # Learned positions: the same token at two positions gives different logits.
    same = torch.full((1, 2), 5)
    assert (lm(same)[0, 0] - lm(same)[0, 1]).abs().amax() > 1e-3


@pytest.mark.parametrize(
    "seed, B, T, new", [(0, 1, 1, 10), (3, 2, 5, 12), (4, 3, 9, 15), (5, 2, 23, 1)]
)
def test_cached_and_uncached_generation_agree(seed, B, T, new):
    lm = tiny_lm(seed)
    prompt = torch.randint(0, VOCAB, (B, T))
    cached = lm.generate(prompt, new, use_cache=True)
    uncached = lm.generate(prompt, new, use_cache=False)
    assert cached.shape == (B, T + new)
    assert torch.equal(cached[:, :T], prompt)
    assert torch.equal(cached, uncached)


def test_cache_filled_in_chunks_matches_forward():
    # Feeding the prompt in two chunks puts n = 4 queries after m − n = 5 cached keys:
    # the causal_mask(n, m) case with m > n.
    lm = tiny_lm(10)
    tokens = torch.randint(0, VOCAB, (2, 9))
    caches = [{} for _ in lm.blocks]
    with torch.no_grad():
        first = lm(tokens[:, :5], caches)
        second = lm(tokens[:, 5:], caches, start=5)
        full = lm(tokens)
    torch.testing.assert_close(torch.cat([first, second], dim=1), full, atol=1e-5, rtol=1e-4)
    d_k = D_MODEL // HEADS
    for cache in caches:
        assert cache["k"].shape == cache["v"].shape == (2, HEADS, 9, d_k)
    cached = sum(c["k"].nbytes + c["v"].nbytes for c in caches)
    assert cached == kv_cache_bytes(LAYERS, HEADS, d_k, seq_len=9, batch=2, bytes_per_element=4)


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 3),
    B=st.integers(1, 3),
    T=st.integers(1, 8),
    new=st.integers(0, 8),
    data=st.data(),
)
def test_property_cache_agrees(seed, B, T, new, data):
    lm = shared_lm(seed)
    ids = data.draw(st.lists(st.integers(0, VOCAB - 1), min_size=B * T, max_size=B * T))
    prompt = torch.tensor(ids).view(B, T)
    assert torch.equal(lm.generate(prompt, new), lm.generate(prompt, new, use_cache=False))


def test_generation_is_greedy_on_forward_logits():
    lm = tiny_lm(6)
    prompt = torch.randint(0, VOCAB, (2, 4))
    out = lm.generate(prompt, 6)
    logits = lm(out[:, :-1])  # (B, T + new − 1, vocab)
    # Each generated token is the argmax of the logits at the position before it.
    assert torch.equal(out[:, 4:], logits[:, 3:].argmax(dim=-1))


def test_generation_is_deterministic_given_the_seed():
    prompt = torch.tensor([[1, 2, 3]])
    first = tiny_lm(7).generate(prompt, 8)
    second = tiny_lm(7).generate(prompt, 8)
    assert torch.equal(first, second)
    assert not torch.equal(first, tiny_lm(8).generate(prompt, 8))


def test_generate_leaves_the_prompt_alone_and_needs_no_grad():
    lm = tiny_lm(9)
    prompt = torch.randint(0, VOCAB, (2, 3))
    copy = prompt.clone()
    out = lm.generate(prompt, 0)
    assert torch.equal(out, prompt) and out.data_ptr() != prompt.data_ptr()
    out = lm.generate(prompt, 4)
    assert torch.equal(prompt, copy)
    assert not out.requires_grad


def test_errors():
    lm = tiny_lm()
    good = torch.zeros(1, 4, dtype=torch.long)
    with pytest.raises(ValueError, match=r"tokens must lie in 0..vocab_size-1=30, got \[31\]"):
        lm(torch.tensor([[1, 31]]))
    with pytest.raises(ValueError, match=r"got \[-1\]"):
        lm.generate(torch.tensor([[-1, 2]]), 2)
    with pytest.raises(ValueError, match="T=25 is longer than max_len=24"):
        lm(torch.zeros(1, 25, dtype=torch.long))
    with pytest.raises(
        ValueError, match="T=20 tokens and max_new_tokens=5, 25 in all, but max_len=24"
    ):
        lm.generate(torch.zeros(1, 20, dtype=torch.long), 5)
    with pytest.raises(ValueError, match=r"tokens has shape \(4,\) but must be \(B, T\)"):
        lm(good[0])
    with pytest.raises(ValueError, match=r"tokens has shape \(1, 0\)"):
        lm(good[:, :0])
    with pytest.raises(TypeError, match="tokens must be an integer tensor"):
        lm(good.float())
    with pytest.raises(ValueError, match="max_new_tokens must be a non-negative integer"):
        lm.generate(good, -1)
    with pytest.raises(ValueError, match="num_heads=3 must divide d_model=16"):
        TinyTransformerLM(VOCAB, 16, 3, 1, 8)
    with pytest.raises(ValueError, match="max_len must be a positive integer"):
        TinyTransformerLM(VOCAB, 16, 4, 1, 0)
