"""q39's explorer: an activation and its β → its curve and slope, the dead units of a small
trained FFN, and the weights and FLOPs of the FFN at a given width.

Everything comes from ``attention_qa.activations`` (the curves, the slope by autograd, a
two-layer FFN of 32 hidden units trained in float64 by ``train_tiny_ffn``) and
``attention_qa.costs.swiglu_hidden_dim`` (LLaMA's width). Top left, the activation and its
derivative on [−4, 4], ReLU dashed for comparison. Top right, for each of the 32 hidden units
of the trained toy FFN, the share of its 64 training inputs on which the unit passes
gradient (|act'(z)| ≥ 10⁻³); a unit at 0 is dead. Bottom, the FFN's weights per layer at
d_model = 4096 against the 2017 FFN's 8·d² (two matrices, d_ff = 4·d).
"""

from functools import lru_cache

import torch

from attention_qa.activations import derivative, pointwise, train_tiny_ffn
from attention_qa.costs import swiglu_hidden_dim
from attention_qa.panel import Control, Explorer, Frame, InvalidSetting, View

ACTIVATIONS = ("relu", "gelu", "gelu_tanh", "swish")
ACTIVATION_LABELS = ("ReLU", "GELU", "GELU (tanh)", "Swish")
BETAS = (0.5, 1, 1.702, 4, 10)
STEP_SIZES = (0.1, 0.5)
FFNS = ("plain", "gated_4d", "gated_llama")
FFN_LABELS = ("plain, d_ff = 4·d", "gated, d_ff = 4·d", "gated, d_ff = 2/3 · 4·d (LLaMA)")
D_MODEL = 4096
X_RANGE = (-4.0, 4.0)
GRID = torch.linspace(*X_RANGE, 161, dtype=torch.float64)
THRESHOLD = 1e-3  # |act'(z)| below this on every input: a dead unit


@lru_cache(maxsize=None)
def _trained(activation: str, beta: float, step: float) -> dict:
    result = train_tiny_ffn(activation, beta, lr=step, steps=60)
    slope = derivative(result["after"], activation, beta).abs()  # (n, d_ff)
    alive = (slope >= THRESHOLD).double().mean(dim=0)  # (d_ff,): share of inputs passing
    return {"alive": alive.sort(descending=True).values, "loss_before": result["losses"][0],
            "loss_after": result["losses"][-1], "dead": result["dead_after"]}


def ffn_weights(ffn: str, d_model: int = D_MODEL) -> tuple[int, int]:
    """(d_ff, weights per layer) of a plain or gated FFN without biases."""
    if ffn == "plain":
        return 4 * d_model, 2 * d_model * 4 * d_model
    if ffn == "gated_4d":
        return 4 * d_model, 3 * d_model * 4 * d_model
    d_ff = swiglu_hidden_dim(d_model)
    return d_ff, 3 * d_model * d_ff


def activation_frame(activation: str, beta: float, step: float, ffn: str) -> Frame:
    if activation != "swish" and beta != 1:
        raise InvalidSetting("β is Swish's parameter: set β = 1 for this activation")
    curve = pointwise(GRID, activation, beta)
    slope = derivative(GRID, activation, beta)
    trained = _trained(activation, float(beta), float(step))
    d_ff, weights = ffn_weights(ffn)
    units = len(trained["alive"])
    dead = round(trained["dead"] * units)
    data = {"curve": curve, "slope": slope, "alive": trained["alive"],
            "weights": weights / D_MODEL**2, "dead": dead, "units": units}
    figures = {
        "minimum of the curve": f"{curve.min().item():.3f}",
        "dead units after training": f"{dead} of {units}",
        "training loss": f"{trained['loss_before']:.3f} → {trained['loss_after']:.3f}",
        "d_ff": f"{d_ff:,}",
        "FFN weights per layer": f"{weights / 1e6:,.1f} M = {weights / D_MODEL**2:.2f} · d²",
        "FLOPs per token": f"{2 * weights / 1e6:,.1f} M",
    }
    return Frame(data=data, figures=figures)


class ActivationView(View):
    figsize = (6.4, 4.8)

    def setup(self, fig):
        grid = fig.add_gridspec(2, 2, height_ratios=(2.2, 1))
        ax_curve, ax_units = fig.add_subplot(grid[0, 0]), fig.add_subplot(grid[0, 1])
        ax_weights = fig.add_subplot(grid[1, :])
        x = GRID.numpy()
        ax_curve.plot(x, torch.relu(GRID).numpy(), color="#bbbbbb", linestyle="--",
                      linewidth=1, label="ReLU")
        (self.curve,) = ax_curve.plot(x, x, color="#4477aa", animated=True, label="act(z)")
        (self.slope,) = ax_curve.plot(x, x, color="#ee6677", animated=True, label="act'(z)")
        ax_curve.axhline(0, color="#dddddd", linewidth=0.8)
        ax_curve.set(xlim=X_RANGE, ylim=(-1.0, 4.0), xlabel="z")
        ax_curve.legend(loc="upper left", frameon=False)
        self.edges = [i - 0.5 for i in range(33)]  # one step per hidden unit
        self.bars = ax_units.stairs([0.0] * 32, self.edges, fill=True, color="#228833",
                                    animated=True)
        self.units_title = ax_units.set_title("dead units: 0 of 32", animated=True)
        ax_units.set(xlim=(-0.5, 31.5), ylim=(0, 1.05), xlabel="hidden unit (sorted)",
                     ylabel="inputs passing gradient", xticks=())
        (self.weight_bar,) = ax_weights.barh([0], [0.0], height=0.5, color="#4477aa",
                                             animated=True)
        ax_weights.axvline(8, color="#888888", linestyle="--", linewidth=1)
        ax_weights.text(8.15, 0.42, "2017: 8·d²", ha="left", va="center")  # above the bar
        ax_weights.set(ylim=(-0.6, 0.6), xlim=(0, 13), yticks=(), xlabel="FFN weights / d²")

    def update(self, data):
        self.curve.set_ydata(data["curve"].numpy())
        self.slope.set_ydata(data["slope"].numpy())
        self.bars.set_data(data["alive"].numpy(), self.edges)
        self.units_title.set_text(f"dead units: {data['dead']} of {data['units']}")
        self.weight_bar.set_width(data["weights"])


def activation_explorer() -> Explorer:
    """activation × β × step size × FFN kind → curve and slope, dead units, FFN weights."""
    return Explorer(
        "Activations: the curve, dead units and the FFN's size",
        [
            Control("activation", "activation", ACTIVATIONS, default="relu",
                    labels=ACTIVATION_LABELS),
            Control("beta", "β (Swish)", BETAS, default=1),
            Control("step", "step size (toy FFN)", STEP_SIZES, default=0.5),
            Control("ffn", "feed-forward network", FFNS, default="plain", labels=FFN_LABELS),
        ],
        activation_frame,
        ActivationView(),
        caption=(
            "Top right: a toy FFN (4 → 32 → 1, float64) trained for 60 full-batch gradient "
            "steps to fit a fixed ReLU network on 64 Gaussian inputs; each bar is one hidden "
            "unit's share of inputs with |act'(z)| ≥ 0.001. Bottom: weights of one FFN at "
            "d_model = 4096, no biases; FLOPs per token are twice the weights."
        ),
    )
