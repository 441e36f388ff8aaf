import pytest
import torch

from attention_qa import induction as ind


def _reference_attn(model, x):
    """Hand-computed layer-0 attention with plain tensor ops."""
    r = model.emb.weight[x] + model.pos.weight[: x.shape[1]]
    w = model.qkv[0].weight
    d, h = model.d, model.h
    q, k = r @ w[:d].T, r @ w[d : 2 * d].T
    out = []
    T = x.shape[1]
    for head in range(h):
        sl = slice(head * model.dh, (head + 1) * model.dh)
        s = q[:, :, sl] @ k[:, :, sl].transpose(-1, -2) / model.dh**0.5
        s = s + torch.triu(torch.full((T, T), float("-inf")), 1)
        out.append(torch.softmax(s, -1))
    return torch.stack(out, 1)


def test_attention_matches_reference():
    torch.manual_seed(0)
    m = ind.AttnOnly(vocab=8, d=8, heads=2, ctx=6)
    x = ind.repeated_batch(torch.Generator().manual_seed(1), 3, 3, 8)
    _, attn = m(x, return_attn=True)
    assert torch.allclose(attn[0], _reference_attn(m, x), atol=1e-6)


def test_scores_by_hand():
    T, k = 6, 3
    a = torch.zeros(1, 2, T, T)
    for t in range(T):
        a[0, 0, t, max(t - 1, 0)] = 1.0  # previous-token head
        a[0, 1, t, t - k + 1 if t >= k else t] = 1.0  # induction head
    assert torch.allclose(ind.previous_token_scores(a), torch.tensor([1.0, 0.0]))
    assert torch.allclose(ind.induction_scores(a, k), torch.tensor([0.0, 1.0]))


def test_ablation_changes_output():
    torch.manual_seed(0)
    m = ind.AttnOnly(vocab=8, d=8, heads=2, ctx=6)
    x = ind.repeated_batch(torch.Generator().manual_seed(1), 2, 3, 8)
    assert not torch.allclose(m(x), m(x, ablate=((0, 0),)))


def test_hiding_from_no_part_is_the_model_and_from_all_parts_is_ablation_in_layer_1():
    torch.manual_seed(0)
    m = ind.AttnOnly(vocab=8, d=8, heads=2, ctx=6)
    x = ind.repeated_batch(torch.Generator().manual_seed(1), 3, 3, 8)
    logits, attn = m(x, return_attn=True)
    same, a1 = ind.hidden_from_layer1(m, x, (0, 1), "")
    assert torch.allclose(same, logits, atol=1e-6) and torch.allclose(a1, attn[1], atol=1e-6)
    _, ablated = m(x, ablate=((0, 1),), return_attn=True)
    _, hidden = ind.hidden_from_layer1(m, x, (0, 1), "qkv")
    assert torch.allclose(hidden, ablated[1], atol=1e-6)
    _, keys_only = ind.hidden_from_layer1(m, x, (0, 1), "k")
    assert not torch.allclose(keys_only, attn[1])
    with pytest.raises(ValueError, match="layer-0 head"):
        ind.hidden_from_layer1(m, x, (1, 0), "k")


def test_head_scores_shapes():
    torch.manual_seed(0)
    m = ind.AttnOnly(vocab=8, d=8, heads=2, ctx=6)
    x = ind.repeated_batch(torch.Generator().manual_seed(1), 3, 3, 8)
    s = ind.head_scores(m, x, 3)
    assert s["previous-token"].shape == s["induction"].shape == (2, 2)
    _, attn = m(x, return_attn=True)
    assert torch.allclose(s["induction"][1], ind.induction_scores(attn[1], 3))
