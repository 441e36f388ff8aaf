"""MoEFeedForward against a per-token loop over the chosen experts, and its balance loss."""

import pytest
import torch

from attention_qa.blocks import FeedForward
from attention_qa.moe import MoEFeedForward

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
