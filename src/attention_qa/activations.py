"""Activation functions of the feed-forward network and its gated (GLU) variants.

- ``gelu``: GELU(x) = x·Φ(x), Φ the standard normal CDF, and its tanh approximation
  0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))) (Hendrycks and Gimpel, 2016, §2);
- ``swish``: Swish_β(x) = x·σ(βx) (Ramachandran et al., 2017); β = 1 is SiLU;
- ``glu_activation``: one of the five by name, as ``glu_ffn`` takes it;
- ``glu_ffn``: (act(x W_gate) ⊙ x W_up) W_down, the gated feed-forward networks of Shazeer
  (2020), "GLU Variants Improve Transformer", eq. (4)–(6): sigmoid is GLU (Dauphin et al.,
  2017), relu ReGLU, gelu GEGLU, silu SwiGLU, identity the bilinear layer; no biases;
- ``dead_fraction`` and ``train_tiny_ffn``: how many hidden units of a small trained FFN pass
  no gradient on any input (dead ReLU units and their smooth counterparts).

The weights use the package's x @ W layout: W_gate and W_up are (d_model, d_ff), W_down is
(d_ff, d_model).
"""

from __future__ import annotations

import math

import torch

from attention_qa.validation import require_positive_int, require_tensor, shape_str

GELU_APPROXIMATIONS = ("none", "tanh")
GLU_ACTIVATIONS = ("sigmoid", "relu", "gelu", "silu", "identity")
GLU_NAMES = {"sigmoid": "GLU", "relu": "ReGLU", "gelu": "GEGLU", "silu": "SwiGLU",
             "identity": "bilinear"}


def gelu(x: torch.Tensor, approximate: str = "none") -> torch.Tensor:
    """x·Φ(x) (``"none"``) or its tanh approximation (``"tanh"``), elementwise."""
    require_tensor("x", x, floating=True)
    if approximate == "none":
        return x * 0.5 * (1.0 + torch.erf(x / math.sqrt(2.0)))  # x·Φ(x)
    if approximate == "tanh":
        inner = math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3)
        return 0.5 * x * (1.0 + torch.tanh(inner))
    raise ValueError(f"approximate must be one of {GELU_APPROXIMATIONS}, got {approximate!r}")


def swish(x: torch.Tensor, beta: float = 1.0) -> torch.Tensor:
    """x·σ(βx), elementwise: SiLU at β = 1, x/2 at β = 0, ReLU as β → ∞."""
    require_tensor("x", x, floating=True)
    if isinstance(beta, bool) or not isinstance(beta, (int, float)) or not math.isfinite(beta):
        raise ValueError(f"beta must be a finite number, got {beta!r}")
    return x * torch.sigmoid(beta * x)


def glu_activation(x: torch.Tensor, name: str) -> torch.Tensor:
    """The activation ``glu_ffn`` names: sigmoid, relu, gelu (exact), silu or identity."""
    if name == "sigmoid":
        return torch.sigmoid(x)
    if name == "relu":
        return torch.relu(x)
    if name == "gelu":
        return gelu(x)
    if name == "silu":
        return swish(x, 1.0)
    if name == "identity":
        return x
    raise ValueError(f"activation must be one of {GLU_ACTIVATIONS}, got {name!r}")


def glu_ffn(x: torch.Tensor, w_gate: torch.Tensor, w_up: torch.Tensor, w_down: torch.Tensor,
            activation: str = "silu") -> torch.Tensor:
    """(act(x W_gate) ⊙ x W_up) W_down for x of shape (..., d_model)."""
    _check_glu(x, w_gate, w_up, w_down, activation)
    gate = glu_activation(x @ w_gate, activation)  # (..., d_ff)
    up = x @ w_up  # (..., d_ff)
    return (gate * up) @ w_down  # (..., d_model)



def _check_glu(x, w_gate, w_up, w_down, name) -> None:
    if name not in GLU_ACTIVATIONS:
        raise ValueError(f"activation must be one of {GLU_ACTIVATIONS}, got {name!r}")
    require_tensor("x", x, min_ndim=1, floating=True)
    for arg, w in (("w_gate", w_gate), ("w_up", w_up), ("w_down", w_down)):
        require_tensor(arg, w, min_ndim=2)
        if w.ndim != 2:
            raise ValueError(f"{arg} has shape {shape_str(w.shape)} but must be a matrix")
    d_model, d_ff = x.shape[-1], w_gate.shape[1]
    if w_gate.shape[0] != d_model:
        raise ValueError(
            f"w_gate has shape {shape_str(w_gate.shape)} but x has d_model={d_model}: "
            f"it must be (d_model, d_ff) = ({d_model}, d_ff)"
        )
    if w_up.shape != w_gate.shape:
        raise ValueError(
            f"w_up has shape {shape_str(w_up.shape)} but w_gate has "
            f"{shape_str(w_gate.shape)}: both are (d_model, d_ff)"
        )
    if w_down.shape != (d_ff, d_model):
        raise ValueError(
            f"w_down has shape {shape_str(w_down.shape)} but must be (d_ff, d_model) = "
            f"({d_ff}, {d_model})"
        )


# --- dead units in a small trained FFN ------------------------------------------------------

def derivative(x: torch.Tensor, name: str, beta: float = 1.0) -> torch.Tensor:
    """d act / dx of ``"relu"``, ``"gelu"``, ``"gelu_tanh"`` or ``"swish"`` (with β),
    by autograd in x's dtype (ReLU's derivative at 0 taken as 0, as PyTorch takes it)."""
    z = x.detach().clone().requires_grad_(True)
    y = pointwise(z, name, beta)
    (grad,) = torch.autograd.grad(y.sum(), z)
    return grad


POINTWISE = ("relu", "gelu", "gelu_tanh", "swish")


def pointwise(x: torch.Tensor, name: str, beta: float = 1.0) -> torch.Tensor:
    """The unit-wise activations of a plain (two-matrix) FFN, by name."""
    if name == "relu":
        return torch.relu(x)
    if name == "gelu":
        return gelu(x)
    if name == "gelu_tanh":
        return gelu(x, "tanh")
    if name == "swish":
        return swish(x, beta)
    raise ValueError(f"name must be one of {POINTWISE}, got {name!r}")


def dead_fraction(pre_activations: torch.Tensor, name: str, beta: float = 1.0,
                  threshold: float = 1e-3) -> float:
    """Share of hidden units whose |act'(z)| < ``threshold`` on every row of
    ``pre_activations`` (n, d_ff): units that pass (almost) no gradient to their weights.
    For ReLU that is z ≤ 0 on every input, a dead unit."""
    require_tensor("pre_activations", pre_activations, min_ndim=2, floating=True)
    if not torch.isfinite(pre_activations).all():
        # NaN < threshold is False: a diverged run would count as "no dead unit"
        raise ValueError("pre_activations holds NaN or infinite values (a diverged run?); "
                         "dead_fraction needs finite pre-activations")
    slope = derivative(pre_activations, name, beta).abs()  # (n, d_ff)
    return (slope < threshold).all(dim=0).double().mean().item()


def train_tiny_ffn(name: str, beta: float = 1.0, *, d_model: int = 4, d_ff: int = 32,
                   num_examples: int = 64, steps: int = 40, lr: float = 0.5,
                   seed: int = 39) -> dict:
    """Train act(x W1 + b1) W2 + b2 in float64 by full-batch gradient descent (``steps`` steps
    of size ``lr``) to fit a fixed random ReLU teacher on Gaussian inputs; return the
    pre-activations on the training inputs before and after, the losses, the dead
    fractions (NaN after a run that diverged) and the final ``state`` (inputs, target,
    weights) that ``continue_tiny_ffn`` goes on from.

    A toy: its large steps push some units' pre-activations below zero on every input, which
    kills ReLU units and leaves smooth units alive but weak. It shows the mechanism, not a
    rate of dead units in real models. Few steps keep it reproducible to the last bits that
    matter: rounding differences cannot grow into a different count.
    """
    require_positive_int("d_model", d_model)
    require_positive_int("d_ff", d_ff)
    require_positive_int("steps", steps)
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(num_examples, d_model, generator=g, dtype=torch.float64)  # (n, d_model)
    teacher_w1 = torch.randn(d_model, 8, generator=g, dtype=torch.float64)
    teacher_w2 = torch.randn(8, 1, generator=g, dtype=torch.float64)
    y = torch.relu(x @ teacher_w1) @ teacher_w2  # (n, 1)
    y = (y - y.mean()) / y.std()  # a unit-variance target
    bound1, bound2 = 1 / math.sqrt(d_model), 1 / math.sqrt(d_ff)
    w1 = (torch.rand(d_model, d_ff, generator=g, dtype=torch.float64) * 2 - 1) * bound1
    b1 = (torch.rand(d_ff, generator=g, dtype=torch.float64) * 2 - 1) * bound1
    w2 = (torch.rand(d_ff, 1, generator=g, dtype=torch.float64) * 2 - 1) * bound2
    b2 = torch.zeros(1, dtype=torch.float64)
    before = x @ w1 + b1  # (n, d_ff)
    (w1, b1, w2, b2), losses = _gradient_steps(x, y, (w1, b1, w2, b2), name, beta, lr, steps)
    after = x @ w1 + b1
    losses.append((((pointwise(after, name, beta) @ w2 + b2) - y) ** 2).mean().item())
    return {
        "before": before,
        "after": after,
        "losses": losses,
        "dead_before": dead_fraction(before, name, beta),
        # a run that diverged (NaN or inf weights) has no dead fraction to report
        "dead_after": (dead_fraction(after, name, beta) if torch.isfinite(after).all()
                       else math.nan),
        "state": {"x": x, "y": y, "w1": w1, "b1": b1, "w2": w2, "b2": b2},
    }


def _gradient_steps(x, y, weights, name, beta, lr, steps):
    """``steps`` full-batch gradient-descent steps on the mean squared error of
    act(x w1 + b1) w2 + b2; return the new weights and the loss before each step."""
    w1, b1, w2, b2 = weights
    num_examples = x.shape[0]
    losses = []
    for _ in range(steps):
        z = x @ w1 + b1  # (n, d_ff)
        h = pointwise(z, name, beta)  # (n, d_ff)
        err = h @ w2 + b2 - y  # (n, 1)
        losses.append((err**2).mean().item())
        d_out = 2 * err / num_examples  # dL/d out
        d_z = (d_out @ w2.T) * derivative(z, name, beta)  # (n, d_ff)
        w2 = w2 - lr * h.T @ d_out
        b2 = b2 - lr * d_out.sum(0)
        w1 = w1 - lr * x.T @ d_z
        b1 = b1 - lr * d_z.sum(0)
    return (w1, b1, w2, b2), losses


def continue_tiny_ffn(run: dict, name: str, beta: float = 1.0, *, steps: int = 20,
                      lr: float = 0.1) -> dict:
    """Go on training a ``train_tiny_ffn`` result on the same inputs for ``steps`` more steps of
    size ``lr``; return the weights before and after and the new pre-activations."""
    require_positive_int("steps", steps)
    state = run["state"]
    old = (state["w1"], state["b1"], state["w2"], state["b2"])
    new, losses = _gradient_steps(state["x"], state["y"], old, name, beta, lr, steps)
    return {"before": dict(zip(("w1", "b1", "w2", "b2"), old, strict=True)),
            "after": dict(zip(("w1", "b1", "w2", "b2"), new, strict=True)),
            "pre_activations": state["x"] @ new[0] + new[1], "losses": losses}
