"""q39's explorer shows what the lesson modules compute."""

import torch
import torch.nn.functional as F

from attention_qa.costs import swiglu_hidden_dim
from attention_qa.explorers.activations import GRID, activation_explorer, ffn_weights
from attention_qa.panel import InvalidSetting


def test_the_curves_are_pytorchs():
    explorer = activation_explorer()
    relu = explorer.frame(activation="relu", beta=1, step=0.5, ffn="plain").data
    assert torch.equal(relu["curve"], F.relu(GRID))
    silu = explorer.frame(activation="swish", beta=1, step=0.5, ffn="plain").data
    assert torch.allclose(silu["curve"], F.silu(GRID))
    gelu = explorer.frame(activation="gelu_tanh", beta=1, step=0.5, ffn="plain").data
    assert torch.allclose(gelu["curve"], F.gelu(GRID, approximate="tanh"))


def test_large_steps_kill_relu_units_and_not_smooth_ones():
    explorer = activation_explorer()
    relu = explorer.frame(activation="relu", beta=1, step=0.5, ffn="plain")
    gelu = explorer.frame(activation="gelu", beta=1, step=0.5, ffn="plain")
    small = explorer.frame(activation="relu", beta=1, step=0.1, ffn="plain")
    assert relu.data["dead"] > 16 and gelu.data["dead"] == 0 and small.data["dead"] == 0
    assert relu.figures["dead units after training"] == f"{relu.data['dead']} of 32"


def test_beta_is_refused_for_activations_without_one():
    explorer = activation_explorer()
    for activation in ("relu", "gelu", "gelu_tanh"):
        refused = explorer.frame(activation=activation, beta=4, step=0.1, ffn="plain")
        assert isinstance(refused, InvalidSetting) and "β" in str(refused)


def test_the_weights_are_counted_per_ffn():
    d = 4096
    assert ffn_weights("plain") == (4 * d, 8 * d * d)
    assert ffn_weights("gated_4d") == (4 * d, 12 * d * d)
    assert ffn_weights("gated_llama") == (11008, 3 * d * swiglu_hidden_dim(d))
    frame = activation_explorer().frame(activation="swish", beta=1, step=0.1, ffn="gated_llama")
    assert abs(frame.data["weights"] - 8) < 0.07
    assert frame.figures["d_ff"] == "11,008"
