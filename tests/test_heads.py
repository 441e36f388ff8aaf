import pytest
import torch

from attention_qa.heads import (
    attention_maps,
    classify_head,
    content_score,
    first_token_score,
    pattern_scores,
    previous_token_score,
    self_score,
    sum_task_batch,
)
from attention_qa.masks import causal_mask
from attention_qa.models import TinyTransformerLM


def random_maps(*shape, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.softmax(torch.randn(*shape, generator=g), dim=-1)


def test_scores_match_loops():
    w = random_maps(3, 6, 6)
    for b in range(3):
        previous = sum(w[b, i, i - 1] for i in range(1, 6)) / 5
        assert torch.isclose(previous_token_score(w)[b], previous)
        # Query 0 is left out: under a causal mask it has only itself to attend to.
        assert torch.isclose(self_score(w)[b], sum(w[b, i, i] for i in range(1, 6)) / 5)
        assert torch.isclose(first_token_score(w)[b], w[b, 1:, 0].mean())


def test_query_zero_of_a_causal_map_inflates_neither_self_nor_first_token():
    uniform = causal_mask(6).float()
    uniform = uniform / uniform.sum(-1, keepdim=True)  # (n, n): each query spreads evenly
    expected = sum(1 / (i + 1) for i in range(1, 6)) / 5
    assert torch.isclose(self_score(uniform), torch.tensor(expected))
    assert torch.isclose(first_token_score(uniform), torch.tensor(expected))


def test_a_shift_map_is_a_perfect_previous_token_head():
    shift = torch.zeros(5, 5)
    shift[0, 0] = 1
    shift[torch.arange(1, 5), torch.arange(4)] = 1
    scores = pattern_scores(shift.expand(4, 5, 5))
    assert scores["previous-token"] == 1.0 and scores["content"] == 0.0
    assert classify_head(scores) == "previous-token"


def test_content_score_is_zero_for_identical_maps_and_large_for_one_hot_ones():
    same = random_maps(1, 7, 7).expand(5, 7, 7)
    assert torch.isclose(content_score(same), torch.tensor(0.0))
    g = torch.Generator().manual_seed(1)
    picks = torch.randint(7, (8, 7), generator=g)
    one_hot = torch.nn.functional.one_hot(picks, 7).float()  # (8, 7, 7), content-driven
    assert content_score(one_hot) > 0.6
    assert classify_head(pattern_scores(one_hot)) == "content"


def test_bad_shapes_are_rejected():
    with pytest.raises(ValueError, match="must be \\(..., n, n\\)"):
        previous_token_score(torch.ones(3, 4))
    with pytest.raises(ValueError, match="needs at least 2"):
        content_score(torch.ones(1, 3, 3) / 3)


def test_attention_maps_match_the_model_and_remove_their_hooks():
    torch.manual_seed(0)
    model = TinyTransformerLM(12, 16, 2, 2, 8)
    x, _ = sum_task_batch(3, torch.Generator().manual_seed(0), length=8)
    maps = attention_maps(model, x)
    assert maps.shape == (2, 3, 2, 8, 8)
    assert torch.allclose(maps.sum(-1), torch.ones(2, 3, 2, 8))
    assert not (maps * ~causal_mask(8)).any()
    block = model.blocks[0]
    with torch.no_grad():
        y = block.ln_1(model.tok_emb(x) + model.pos_emb(torch.arange(8)))
        _, expected = block.attn(y, y, y, causal_mask(8))
    assert torch.allclose(maps[0], expected)
    assert not block.attn._forward_hooks


def test_sum_task_targets():
    x, y = sum_task_batch(4, torch.Generator().manual_seed(3))
    assert torch.equal(y[:, 1:], (x[:, 1:] + x[:, :-1]) % 12)
