import math

import pytest
import torch
import torch.nn.functional as F

from attention_qa.activations import (
    GLU_ACTIVATIONS,
    continue_tiny_ffn,
    dead_fraction,
    derivative,
    gelu,
    glu_ffn,
    swish,
    train_tiny_ffn,
)

X = torch.linspace(-8, 8, 2001, dtype=torch.float64)


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_is_pytorchs(approximate):
    assert torch.allclose(gelu(X, approximate), F.gelu(X, approximate=approximate), atol=1e-15)


def test_gelu_is_x_times_the_normal_cdf():
    normal = torch.distributions.Normal(torch.tensor(0.0, dtype=torch.float64), 1.0)
    assert torch.allclose(gelu(X), X * normal.cdf(X), atol=1e-15)


@pytest.mark.parametrize("beta", [0.5, 1.0, 1.702, 4.0])
def test_swish_is_x_sigmoid_beta_x(beta):
    assert torch.allclose(swish(X, beta), X / (1 + torch.exp(-beta * X)), atol=1e-15)


def test_swish_at_beta_one_is_silu_and_tends_to_relu():
    assert torch.allclose(swish(X), F.silu(X), atol=1e-15)
    assert torch.allclose(swish(X, 0.0), X / 2)
    assert (swish(X, 200.0) - F.relu(X)).abs().max() < 2e-3


@pytest.mark.parametrize("activation", GLU_ACTIVATIONS)
def test_glu_ffn_against_linear_layers(activation):
    torch.manual_seed(0)
    d_model, d_ff = 6, 10
    x = torch.randn(2, 3, d_model, dtype=torch.float64)
    gate = torch.nn.Linear(d_model, d_ff, bias=False).double()
    up = torch.nn.Linear(d_model, d_ff, bias=False).double()
    down = torch.nn.Linear(d_ff, d_model, bias=False).double()
    act = {"sigmoid": torch.sigmoid, "relu": F.relu, "gelu": F.gelu, "silu": F.silu,
           "identity": lambda t: t}[activation]
    with torch.no_grad():
        expected = down(act(gate(x)) * up(x))
        got = glu_ffn(x, gate.weight.T, up.weight.T, down.weight.T, activation)
    assert got.shape == (2, 3, d_model)
    assert torch.allclose(got, expected, atol=1e-12)


def test_bad_inputs_are_named():
    x, w, w_down = torch.randn(3, 4), torch.randn(4, 8), torch.randn(8, 4)
    with pytest.raises(ValueError, match="w_gate has shape"):
        glu_ffn(x, torch.randn(5, 8), w, w_down)
    with pytest.raises(ValueError, match="w_up has shape"):
        glu_ffn(x, w, torch.randn(4, 7), w_down)
    with pytest.raises(ValueError, match="w_down has shape"):
        glu_ffn(x, w, w, torch.randn(4, 8))
    with pytest.raises(ValueError, match="activation must be one of"):
        glu_ffn(x, w, w, w_down, "tanh")
    with pytest.raises(ValueError, match="approximate"):
        gelu(x, "erf")
    with pytest.raises(ValueError, match="beta"):
        swish(x, math.inf)
    with pytest.raises(TypeError, match="floating"):
        gelu(torch.arange(3))


def test_derivative_matches_closed_forms():
    sig = torch.sigmoid(2.0 * X)
    assert torch.allclose(derivative(X, "swish", 2.0), sig + 2.0 * X * sig * (1 - sig))
    normal_pdf = torch.exp(-X**2 / 2) / math.sqrt(2 * math.pi)
    assert torch.allclose(derivative(X, "gelu"), 0.5 * (1 + torch.erf(X / math.sqrt(2)))
                          + X * normal_pdf)
    assert torch.equal(derivative(X, "relu"), (X > 0).double())


def test_dead_fraction_counts_units_negative_on_every_input():
    z = torch.tensor([[-1.0, 2.0, -3.0], [-0.5, -1.0, -2.0]], dtype=torch.float64)
    assert dead_fraction(z, "relu") == pytest.approx(2 / 3)
    assert dead_fraction(z, "gelu") == 0.0  # GELU still passes gradient at −3 (slope ≈ −0.012)
    assert dead_fraction(z - 10, "gelu") == 1.0


def test_large_steps_kill_relu_units_only():
    relu = train_tiny_ffn("relu", lr=0.5, steps=60)
    silu = train_tiny_ffn("swish", 1.0, lr=0.5, steps=60)
    assert relu["dead_before"] == 0 and relu["dead_after"] > 0.5
    assert silu["dead_after"] == 0 and silu["losses"][-1] < relu["losses"][-1] / 10
    small = train_tiny_ffn("relu", lr=0.1, steps=60)
    assert small["dead_after"] == 0 and small["losses"][-1] < small["losses"][0]


@pytest.mark.parametrize("bad", [math.nan, math.inf])
def test_dead_fraction_refuses_non_finite_pre_activations(bad):
    # NaN < threshold is False: a diverged run must not read as "no dead unit"
    z = torch.tensor([[-1.0, 2.0], [bad, -1.0]], dtype=torch.float64)
    with pytest.raises(ValueError, match="NaN or infinite"):
        dead_fraction(z, "relu")


def test_a_diverged_run_reports_nan_dead_fraction():
    run = train_tiny_ffn("relu", lr=0.5, steps=60, seed=7)  # this seed diverges
    assert math.isnan(run["dead_after"])


def test_more_steps_leave_dead_units_exactly_where_they_were():
    run = train_tiny_ffn("relu", lr=0.5, steps=60)
    dead = (run["after"] <= 0).all(dim=0)
    more = continue_tiny_ffn(run, "relu", steps=20, lr=0.1)
    old, new = more["before"], more["after"]
    assert dead.any() and torch.equal(new["w1"][:, dead], old["w1"][:, dead])
    assert torch.equal(new["b1"][dead], old["b1"][dead])
    assert (new["w1"][:, ~dead] != old["w1"][:, ~dead]).any(dim=0).all()
    assert (more["pre_activations"][:, dead] <= 0).all()
    assert more["losses"][-1] < more["losses"][0]
