import pytest
import torch

from attention_qa.attention import scaled_dot_product_attention
from attention_qa.long_context import sink_head, softmax_with_sink, streaming_attention
from attention_qa.masks import causal_mask


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_softmax_with_sink_is_off_by_one_at_zero(dtype):
    torch.manual_seed(0)
    scores = torch.randn(3, 5, 7, dtype=dtype)
    expected = scores.exp() / (1 + scores.exp().sum(-1, keepdim=True))  # Miller (2023)
    got = softmax_with_sink(scores)
    assert got.dtype == dtype and got.shape == scores.shape
    assert torch.allclose(got, expected, rtol=1e-5)
    assert (got.sum(-1) < 1).all()


def test_softmax_with_sink_is_a_zero_value_key_whose_weight_is_dropped():
    torch.manual_seed(1)
    q, k, v = torch.randn(2, 4, 8), torch.randn(2, 6, 8), torch.randn(2, 6, 3)
    sink = torch.tensor([0.5, -1.0]).view(2, 1)  # one learned logit per head
    scores = q @ k.transpose(-2, -1) / 8**0.5  # (2, 4, 6)
    got = softmax_with_sink(scores, sink) @ v  # (2, 4, 3)
    # The reference: a real extra key, scored sink_logit by every query, with a zero value.
    extra = torch.cat([sink.expand(2, 4).unsqueeze(-1), scores], dim=-1)  # (2, 4, 7)
    v_extra = torch.cat([torch.zeros(2, 1, 3), v], dim=1)  # (2, 7, 3)
    expected = torch.softmax(extra, dim=-1) @ v_extra
    assert torch.allclose(got, expected, atol=1e-6)


def test_softmax_with_sink_does_not_overflow():
    got = softmax_with_sink(torch.tensor([1000.0, 1000.0]), sink_logit=1000.0)
    assert torch.allclose(got, torch.full((2,), 1 / 3))
    assert torch.allclose(softmax_with_sink(torch.tensor([0.0]), -1e4), torch.ones(1))


def test_softmax_with_sink_errors():
    with pytest.raises(ValueError, match=r"sink_logit has shape \(3,\) but must broadcast"):
        softmax_with_sink(torch.zeros(2, 5), torch.zeros(3))
    with pytest.raises(TypeError, match="scores must be a floating-point tensor"):
        softmax_with_sink(torch.zeros(2, 5, dtype=torch.long))


def test_sink_head_is_the_same_everywhere_and_parks_weight_on_token_0():
    scores, v = sink_head(16)
    again, v_again = sink_head(16)
    assert torch.equal(scores, again) and torch.equal(v, v_again)
    assert scores.shape == (16, 16) and v.shape == (16, 16) and scores.dtype == torch.float64
    assert (v[0] == 0).all() and (scores[:, 0] == 2.0).all()
    _, weights = scaled_dot_product_attention(
        torch.eye(16, dtype=torch.float64), torch.eye(16, dtype=torch.float64), v,
        causal_mask(16), scale=0.0,
    )  # a query that matches no key spreads its weight evenly over what it may see
    assert torch.allclose(weights[-1], torch.full((16,), 1 / 16, dtype=torch.float64))
    full = torch.softmax(scores.masked_fill(~causal_mask(16), float("-inf")), dim=-1)
    assert (full[1:, 0] > 0.5).all()


def test_streaming_attention_with_everything_kept_is_full_attention():
    data = streaming_attention(12, window=12, sinks=0)
    assert data["mask"].equal(causal_mask(12))
    assert torch.allclose(data["weights"], data["full"]) and data["error"].max() < 1e-12
    assert torch.allclose(data["mass"], torch.ones(12, dtype=torch.float64))


def test_streaming_attention_without_the_sink_loses_its_weight():
    without = streaming_attention(24, window=4, sinks=0)
    with_sink = streaming_attention(24, window=4, sinks=1)
    assert without["mass"][-1] < 0.3 < 0.9 < with_sink["mass"][-1]
    assert without["error"][-1] > 10 * with_sink["error"][-1]


# --- q42: Transformer-XL's mask and dependency length, and the window as a budget


@pytest.mark.parametrize(("segment_len", "memory_len"), [(4, 4), (3, 7), (6, 2), (5, 0), (1, 1)])
def test_xl_mask_is_the_reference_implementations_mask_inverted(segment_len, memory_len):
    from attention_qa.long_context import xl_attention_mask

    # kimiyoung/transformer-xl, pytorch/mem_transformer.py: masked = triu(ones, 1 + mlen)
    klen = memory_len + segment_len
    masked = torch.triu(torch.ones(segment_len, klen), diagonal=1 + memory_len).bool()
    assert torch.equal(xl_attention_mask(segment_len, memory_len), ~masked)
    # the same as the last segment_len rows of a causal mask over memory + segment
    assert torch.equal(xl_attention_mask(segment_len, memory_len),
                       torch.ones(klen, klen).tril().bool()[memory_len:])


def test_xl_mask_and_dependency_length_refuse_bad_input():
    from attention_qa.long_context import xl_attention_mask, xl_dependency_length

    with pytest.raises(ValueError, match="segment_len"):
        xl_attention_mask(0, 4)
    with pytest.raises(ValueError, match="memory_len"):
        xl_attention_mask(4, -1)
    with pytest.raises(ValueError, match="num_layers"):
        xl_dependency_length(512, 0)


def test_xl_dependency_length_follows_the_states_back_layer_by_layer():
    from attention_qa.long_context import xl_attention_mask, xl_dependency_length

    # Reachability, computed directly: token t at layer n reads layer n − 1 at the tokens
    # its query may see (memory = the previous segment, memory_len = segment_len).
    for L, N in ((3, 1), (3, 2), (4, 3), (2, 5)):
        segments = N + 2
        T = segments * L
        reach = torch.eye(T, dtype=torch.bool)  # who depends on whom at layer 0
        sees = torch.zeros(T, T, dtype=torch.bool)
        mask = xl_attention_mask(L, L)
        for s in range(segments):
            start = max(0, (s - 1) * L)
            keys = torch.arange(start, (s + 1) * L)
            local = mask if s > 0 else mask[:, L:]
            for i in range(L):
                sees[s * L + i, keys[local[i]]] = True
        for _ in range(N):
            reach = (sees.double() @ reach.double()) > 0
        first, last = T - L, T - 1  # the first and last tokens of the last segment
        assert first - int(reach[first].nonzero().min()) == xl_dependency_length(L, N)
        assert last - int(reach[last].nonzero().min()) == xl_dependency_length(L, N) + L - 1
    assert xl_dependency_length(512, 16) == 8192


def test_context_strategies_match_the_inference_budget():
    from attention_qa.inference import memory_bytes, step_costs
    from attention_qa.long_context import context_strategies, prefill_costs

    r = context_strategies(100_000, 32_768, 1_000, 4, question=100, answer=500)
    assert not r["whole document"]["fits"]
    room = 32_768 - 100 - 500
    assert r["truncate"]["seen"] == room
    assert r["truncate"]["flops"] == prefill_costs("Llama-3-8B", room + 100)["flops"]
    assert r["retrieve k chunks"]["seen"] == 4_000 and r["retrieve k chunks"]["calls"] == 1
    assert r["retrieve k chunks"]["kv_bytes"] == memory_bytes("Llama-3-8B", 1, 4_100)["K/V cache"]
    assert r["map over chunks"]["calls"] == 100 and r["map over chunks"]["seen"] == 100_000
    assert r["map over chunks"]["flops"] == 100 * prefill_costs("Llama-3-8B", 1_100)["flops"]
    # the LM head runs on the last prompt position only: 2 · vocab · d FLOPs fewer per other one
    full = step_costs("Llama-3-8B", 1, 1_100, 1_100)
    assert full["flops"] - prefill_costs("Llama-3-8B", 1_100)["flops"] == 2 * 128_256 * 4096 * 1_099
    assert prefill_costs("Llama-3-8B", 1)["flops"] == step_costs("Llama-3-8B", 1, 1, 1)["flops"]
    short = context_strategies(10_000, 32_768, 1_000, 4)
    assert short["whole document"]["fits"] and short["whole document"]["seen"] == 10_000
    odd = context_strategies(2_500, 32_768, 1_000, 8)  # chunks of 1,000, 1,000 and 500
    assert odd["retrieve k chunks"]["seen"] == 2_500 and odd["map over chunks"]["calls"] == 3
    with pytest.raises(ValueError, match="no room"):
        context_strategies(10_000, 512, 100, 2, question=100, answer=500)
    with pytest.raises(ValueError, match="chunk"):
        context_strategies(10_000, 32_768, 0, 2)
