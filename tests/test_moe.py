"""MoEFeedForward against a per-token loop; gates, router statistics, capacity and parameter
counts against loops and a built model."""

import math

import pytest
import torch
from torch import nn

from attention_qa.blocks import FeedForward, RMSNorm, SwiGLU
from attention_qa.moe import (
    MIXTRAL_8X7B,
    MoEFeedForward,
    capacity_keep,
    expert_capacity,
    moe_parameter_counts,
    router_statistics,
    top_k_gates,
)

pytestmark = pytest.mark.usefixtures("one_thread")


def make_moe(d_model=6, d_ff=10, num_experts=4, top_k=2, seed=0):
    torch.manual_seed(seed)
    return MoEFeedForward(d_model, d_ff, num_experts, top_k).double()


def rand(*shape, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g, dtype=torch.float64)


def moe_by_loop(moe, x):
    """One token at a time: sort the experts by router logit, softmax the top k, mix."""
    tokens = x.reshape(-1, moe.d_model)
    W = moe.router.weight.detach()  # (E, d_model)
    y = torch.zeros_like(tokens)
    counts = [0] * moe.num_experts
    probs = torch.zeros(moe.num_experts, dtype=x.dtype)
    for t, token in enumerate(tokens):
        logits = [float(W[e] @ token) for e in range(moe.num_experts)]
        chosen = sorted(range(moe.num_experts), key=lambda e: -logits[e])[: moe.top_k]
        z = sum(torch.tensor(logits[e]).exp() for e in chosen)
        for e in chosen:
            gate = torch.tensor(logits[e]).exp() / z
            y[t] += gate * moe.experts[e](token)
            counts[e] += 1
        probs += torch.softmax(torch.tensor(logits, dtype=x.dtype), dim=0)
    load = torch.tensor(counts, dtype=x.dtype) / sum(counts)
    probs /= len(tokens)
    return y.reshape(x.shape), load, moe.num_experts * float((load * probs).sum())


@pytest.mark.parametrize("top_k", [1, 2, 4])
@pytest.mark.parametrize("shape", [(6,), (7, 6), (2, 5, 6)])
def test_matches_per_token_loop(top_k, shape):
    moe = make_moe(top_k=top_k, seed=top_k)
    x = rand(*shape, seed=1)
    y, aux = moe(x)
    ref_y, ref_load, ref_loss = moe_by_loop(moe, x)
    assert y.shape == x.shape
    torch.testing.assert_close(y.detach(), ref_y.detach())
    torch.testing.assert_close(aux["load"], ref_load)
    assert aux["balance_loss"].item() == pytest.approx(ref_loss, rel=1e-12)


def test_load_counts_assignments_and_sums_to_one():
    moe = make_moe(num_experts=5, top_k=2, seed=3)
    x = rand(40, 6, seed=4)
    _, aux = moe(x)
    chosen = (x @ moe.router.weight.detach().T).topk(2, dim=-1).indices  # (40, 2)
    expected = torch.tensor([(chosen == e).sum().item() for e in range(5)]) / 80
    torch.testing.assert_close(aux["load"], expected.double())
    assert aux["load"].sum().item() == pytest.approx(1.0)


def test_with_every_expert_chosen_it_is_a_dense_softmax_mixture():
    moe = make_moe(num_experts=3, top_k=3, seed=5)
    x = rand(4, 6, seed=6)
    y, aux = moe(x)
    gates = torch.softmax(moe.router(x), dim=-1)  # (4, 3)
    ref = sum(gates[:, e : e + 1] * moe.experts[e](x) for e in range(3))
    torch.testing.assert_close(y, ref)
    torch.testing.assert_close(aux["load"], torch.full((3,), 1 / 3, dtype=torch.float64))


def test_balance_loss_is_one_with_a_uniform_router():
    # Zero router weights: P is uniform, so num_experts · Σ load · (1/num_experts) = Σ load = 1.
    moe = make_moe(num_experts=4, top_k=2)
    with torch.no_grad():
        moe.router.weight.zero_()
    _, aux = moe(rand(9, 6, seed=2))
    assert aux["balance_loss"].item() == pytest.approx(1.0, abs=1e-12)


def test_balance_loss_is_one_for_a_constructed_balanced_assignment():
    # Token e points along axis e and the router reads axis e for expert e: every expert gets
    # one token, and by symmetry the mean router probabilities are uniform.
    moe = make_moe(d_model=4, num_experts=4, top_k=1)
    with torch.no_grad():
        moe.router.weight.copy_(3.0 * torch.eye(4))
    x = torch.eye(4, dtype=torch.float64)
    _, aux = moe(x)
    torch.testing.assert_close(aux["load"], torch.full((4,), 0.25, dtype=torch.float64))
    assert aux["balance_loss"].item() == pytest.approx(1.0, abs=1e-12)


def test_balance_loss_tends_to_num_experts_when_one_expert_takes_everything():
    moe = make_moe(d_model=3, num_experts=5, top_k=1)
    with torch.no_grad():
        moe.router.weight.zero_()
        moe.router.weight[2, 0] = 100.0  # expert 2 wins every token with x[0] = 1
    x = torch.cat([torch.ones(8, 1), rand(8, 2, seed=3) * 0.1], dim=1).double()
    _, aux = moe(x)
    torch.testing.assert_close(aux["load"], torch.tensor([0, 0, 1.0, 0, 0], dtype=torch.float64))
    assert aux["balance_loss"].item() == pytest.approx(5.0, rel=1e-9)


def test_gradients_reach_the_router_and_only_the_chosen_experts():
    moe = make_moe(num_experts=4, top_k=1, seed=7)
    with torch.no_grad():
        moe.router.weight.zero_()
        moe.router.weight[1, 0] = 5.0  # every token (x[0] > 0) goes to expert 1
    x = rand(5, 6, seed=8).abs()
    y, aux = moe(x)
    (y.square().sum() + aux["balance_loss"]).backward()
    assert moe.router.weight.grad.abs().sum() > 0
    assert moe.experts[1].linear1.weight.grad.abs().sum() > 0
    for e in (0, 2, 3):
        assert moe.experts[e].linear1.weight.grad is None  # never called


def test_structure():
    moe = MoEFeedForward(8, 16, 3)
    assert moe.top_k == 2
    assert moe.router.weight.shape == (3, 8) and moe.router.bias is None
    assert len(moe.experts) == 3
    assert all(isinstance(e, FeedForward) for e in moe.experts)
    assert all(e.d_model == 8 and e.d_ff == 16 for e in moe.experts)


@pytest.mark.parametrize("top_k", [0, 5, -1, 2.0, True])
def test_top_k_out_of_range(top_k):
    with pytest.raises(ValueError, match=r"top_k must be an integer in 1..num_experts=4, got"):
        MoEFeedForward(8, 16, 4, top_k=top_k)


def test_bad_arguments():
    with pytest.raises(ValueError, match="num_experts must be a positive integer, got 0"):
        MoEFeedForward(8, 16, 0)
    with pytest.raises(ValueError, match="d_ff must be a positive integer, got -2"):
        MoEFeedForward(8, -2, 2)
    moe = make_moe()
    with pytest.raises(ValueError, match=r"x has shape \(3, 5\) but this module has d_model=6"):
        moe(rand(3, 5))
    with pytest.raises(ValueError, match=r"x has shape \(0, 6\), no tokens"):
        moe(rand(0, 6))
    with pytest.raises(TypeError, match="x must be a floating-point tensor"):
        moe(torch.ones(3, 6, dtype=torch.long))
    with pytest.raises(TypeError, match="module's weights have dtype torch.float64"):
        moe(torch.ones(3, 6))


# ----- top_k_gates, router_statistics --------------------------------------------------


@pytest.mark.parametrize("top_k", [1, 2, 3, 5])
@pytest.mark.parametrize("temperature", [0.5, 1.0, 3.0])
def test_top_k_gates_against_a_loop(top_k, temperature):
    logits = rand(2, 7, 5, seed=top_k)
    gates = top_k_gates(logits, top_k, temperature)
    for row, got in zip(logits.reshape(-1, 5), gates.reshape(-1, 5), strict=True):
        order = sorted(range(5), key=lambda e: -float(row[e]))[:top_k]
        z = sum(math.exp(float(row[e]) / temperature) for e in order)
        for e in range(5):
            want = math.exp(float(row[e]) / temperature) / z if e in order else 0.0
            assert float(got[e]) == pytest.approx(want, rel=1e-12, abs=1e-15)


def test_top_k_gates_is_the_renormalised_full_softmax():
    logits = rand(6, 4, seed=3)
    full = torch.softmax(logits, dim=-1)
    kept = full * (top_k_gates(logits, 2) > 0)
    torch.testing.assert_close(top_k_gates(logits, 2), kept / kept.sum(-1, keepdim=True))


@pytest.mark.parametrize("top_k", [1, 2, 4])
def test_router_statistics_at_temperature_one_are_the_layers_aux(top_k):
    moe = make_moe(top_k=top_k, seed=top_k)
    x = rand(3, 5, 6, seed=9)
    y, aux = moe(x)
    stats = router_statistics(moe.router(x).detach(), top_k)
    torch.testing.assert_close(stats["load"], aux["load"])
    torch.testing.assert_close(stats["balance_loss"], aux["balance_loss"].detach())
    expert_out = torch.stack([e(x) for e in moe.experts], dim=-1).detach()  # (3, 5, 6, E)
    mixed = (expert_out * stats["gates"].reshape(3, 5, 1, -1)).sum(-1)
    torch.testing.assert_close(mixed, y.detach())


def test_temperature_keeps_the_choice_and_flattens_p():
    logits = rand(50, 4, seed=4)
    cold, hot = router_statistics(logits, 1, 0.1), router_statistics(logits, 1, 100.0)
    assert torch.equal(cold["experts"], hot["experts"])
    assert torch.equal(cold["load"], hot["load"])
    torch.testing.assert_close(hot["mean_prob"], torch.full((4,), 0.25, dtype=torch.float64),
                               atol=1e-2, rtol=0)
    assert hot["balance_loss"].item() == pytest.approx(1.0, abs=1e-2)


def test_router_gates_bad_arguments():
    with pytest.raises(ValueError, match=r"top_k must be an integer in 1..num_experts=3, got 4"):
        top_k_gates(rand(2, 3), 4)
    with pytest.raises(ValueError, match="temperature must be a positive, finite number"):
        top_k_gates(rand(2, 3), 1, 0.0)
    with pytest.raises(TypeError, match="logits must be a floating-point tensor"):
        top_k_gates(torch.ones(2, 3, dtype=torch.long), 1)
    with pytest.raises(ValueError, match=r"logits has shape \(0, 3\), no tokens"):
        router_statistics(rand(0, 3), 1)


# ----- capacity -------------------------------------------------------------------------


def test_expert_capacity():
    assert expert_capacity(64, 8, 2, 1.0) == 16
    assert expert_capacity(64, 8, 2, 1.25) == 20
    assert expert_capacity(10, 4, 1, 1.0) == 3  # rounded up
    with pytest.raises(ValueError, match="capacity_factor must be a positive"):
        expert_capacity(10, 4, 1, 0)
    with pytest.raises(ValueError, match="top_k must be an integer in 1..num_experts=4"):
        expert_capacity(10, 4, 5, 1.0)


def keep_by_loop(experts, num_experts, capacity):
    """First choices of every token, in order, then second choices; each expert has slots."""
    used = [0] * num_experts
    keep = torch.zeros(experts.shape, dtype=torch.bool)
    for rank in range(experts.shape[1]):
        for t in range(experts.shape[0]):
            e = int(experts[t, rank])
            if used[e] < capacity:
                used[e] += 1
                keep[t, rank] = True
    return keep


@pytest.mark.parametrize("capacity", [0, 1, 3, 100])
def test_capacity_keep_against_a_loop(capacity):
    g = torch.Generator().manual_seed(capacity)
    experts = torch.stack([torch.randperm(5, generator=g)[:2] for _ in range(12)])  # (12, 2)
    keep = capacity_keep(experts, 5, capacity)
    assert torch.equal(keep, keep_by_loop(experts, 5, capacity))
    per_expert = torch.bincount(experts[keep], minlength=5)
    assert int(per_expert.max()) <= capacity


def test_capacity_keep_bad_arguments():
    with pytest.raises(ValueError, match=r"experts has shape \(3,\) but needs at least 2"):
        capacity_keep(torch.tensor([0, 1, 2]), 3, 1)
    with pytest.raises(ValueError, match="experts must lie in 0..2"):
        capacity_keep(torch.tensor([[0], [3]]), 3, 1)
    with pytest.raises(ValueError, match="it must be an integer tensor"):
        capacity_keep(torch.zeros(2, 1), 3, 1)


# ----- parameter counts -----------------------------------------------------------------


class TinyMoEDecoder(nn.Module):
    """A Mixtral-shaped decoder built from PyTorch and the package's modules, to count."""

    def __init__(self, vocab_size, d_model, d_ff, num_layers, num_heads, num_kv_heads,
                 num_experts, tied):
        super().__init__()
        d_head = d_model // num_heads
        self.embed = nn.Embedding(vocab_size, d_model)
        self.layers = nn.ModuleList()
        for _ in range(num_layers):
            layer = nn.ModuleDict({
                "q": nn.Linear(d_model, num_heads * d_head, bias=False),
                "k": nn.Linear(d_model, num_kv_heads * d_head, bias=False),
                "v": nn.Linear(d_model, num_kv_heads * d_head, bias=False),
                "o": nn.Linear(num_heads * d_head, d_model, bias=False),
                "router": nn.Linear(d_model, num_experts, bias=False),
                "experts": nn.ModuleList(SwiGLU(d_model, d_ff) for _ in range(num_experts)),
                "norm1": RMSNorm(d_model),
                "norm2": RMSNorm(d_model),
            })
            self.layers.append(layer)
        self.norm = RMSNorm(d_model)
        self.lm_head = None if tied else nn.Linear(d_model, vocab_size, bias=False)


@pytest.mark.parametrize("tied", [False, True])
@pytest.mark.parametrize("num_experts, top_k, num_kv_heads", [(4, 2, 2), (3, 1, 4), (2, 2, 1)])
def test_parameter_counts_match_a_built_model(tied, num_experts, top_k, num_kv_heads):
    config = dict(vocab_size=50, d_model=16, d_ff=24, num_layers=3, num_heads=4,
                  num_kv_heads=num_kv_heads, num_experts=num_experts)
    model = TinyMoEDecoder(**config, tied=tied)
    counts = moe_parameter_counts(**config, top_k=top_k, tied=tied)
    total = sum(p.numel() for p in model.parameters())
    skipped = sum(
        p.numel()
        for layer in model.layers
        for expert in layer["experts"][top_k:]
        for p in expert.parameters()
    )
    assert counts["total"] == total
    assert counts["active"] == total - skipped
    assert counts["experts"] == sum(
        p.numel() for layer in model.layers for p in layer["experts"].parameters()
    )


def test_mixtral_counts_are_the_published_46_7_and_12_9_billion():
    counts = moe_parameter_counts(**MIXTRAL_8X7B)
    assert round(counts["total"] / 1e9, 1) == 46.7
    assert round(counts["active"] / 1e9, 1) == 12.9


def test_parameter_counts_bad_arguments():
    good = dict(MIXTRAL_8X7B)
    with pytest.raises(ValueError, match="top_k must be an integer in 1..num_experts=8, got 9"):
        moe_parameter_counts(**{**good, "top_k": 9})
    with pytest.raises(ValueError, match="num_kv_heads=5 must divide num_heads"):
        moe_parameter_counts(**{**good, "num_kv_heads": 5})
    with pytest.raises(ValueError, match="d_ff must be a positive integer"):
        moe_parameter_counts(**{**good, "d_ff": 0})
