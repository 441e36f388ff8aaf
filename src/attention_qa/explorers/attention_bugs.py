"""q06's explorer: the weights of a classic attention bug next to the correct ones.

Each bug is one switch of the slip model that ``attention_qa.checks.check_attention`` uses
to name mistakes, so the panel shows exactly what the checker recognises, and its verdict.
The reference is softmax(q kᵀ / √d_k) v (Vaswani et al., 2017, equation 1) with a padding
mask in PyTorch's convention (True = may attend).
"""

from functools import lru_cache

import torch

from attention_qa.checks.attention import attention_variant, check_attention
from attention_qa.masks import padding_mask
from attention_qa.panel import Control, Explorer, Frame, InvalidSetting, View
from attention_qa.panel.palette import RED

# label → (switch of the slip model, softmax axis)
BUGS = {
    "none (correct)": (None, -1),
    "softmax over the queries": ("softmax_dim", -2),
    "k @ qᵀ (wrong transpose)": ("scores_transposed", -1),
    "scaled by √d_model (512)": ("scale_d_model_512", -1),
    "mask convention flipped": ("mask_inverted", -1),
    "no scaling": ("no_scale", -1),
}
SIZES = (4, 6, 8)
D_K, D_V = 16, 4
NUM_PADDING = 2  # the last keys are padding: the mask blocks them
MAX_SIZE = max(SIZES)


def bug_inputs(n: int, m: int, seed: int = 0):
    """q (n, D_K), k (m, D_K), v (m, D_V) standard normal, and a padding mask (1, m)."""
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(n, D_K, generator=g)  # (n, d_k)
    k = torch.randn(m, D_K, generator=g)  # (m, d_k)
    v = torch.randn(m, D_V, generator=g)  # (m, d_v)
    mask = padding_mask([m - NUM_PADDING], m)  # (1, m), True = a real key
    return q, k, v, mask


@lru_cache(maxsize=None)
def checker_verdict(bug: str) -> str:
    """What check_attention says about the slip ``bug`` (a key of BUGS)."""
    switch, dim = BUGS[bug]

    def attention(q, k, v, mask=None):
        return attention_variant(q, k, v, mask, switch, dim)

    try:
        check_attention(attention)
    except AssertionError as err:
        return str(err)  # it names the checker's own test case, not the panel's sizes
    return "passes every check"


def bug_frame(bug: str, n: int, m: int) -> Frame:
    if bug not in BUGS:
        raise ValueError(f"bug must be one of {list(BUGS)}, got {bug!r}")
    switch, dim = BUGS[bug]
    if switch == "scores_transposed" and n != m:
        raise InvalidSetting(
            f"k @ qᵀ has shape (m, n) = ({m}, {n}), which cannot multiply v of shape "
            f"({m}, {D_V}) when n ≠ m: this bug shows up as a shape error. Pick n = m to "
            "see its weights."
        )
    q, k, v, mask = bug_inputs(n, m)
    expected, weights = attention_variant(q, k, v, mask)  # (n, d_v), (n, m)
    got, bug_weights = attention_variant(q, k, v, mask, switch, dim)
    weight_error = (bug_weights - weights).abs().max().item()
    output_error = (got - expected).abs().max().item()
    row_sums_ok = torch.allclose(bug_weights.sum(-1), torch.ones(n), atol=1e-5)
    padding_weight = bug_weights[:, m - NUM_PADDING :].sum(-1).max().item()
    data = {"weights": weights, "bug_weights": bug_weights, "n": n, "m": m, "bug": bug}
    figures = {
        "max |weight error|": f"{weight_error:.3f}",
        "max |output error|": f"{output_error:.3f}",
        "each query's weights sum to 1": "yes" if row_sums_ok else "no",
        "largest weight on padding keys (per query)": f"{padding_weight:.3f}",
        "checker": checker_verdict(bug),
    }
    return Frame(data=data, figures=figures)


class BugView(View):
    figsize = (6.3, 3.5)

    def setup(self, fig):
        axes = fig.subplots(1, 2, sharey=True)
        blank = torch.zeros(MAX_SIZE, MAX_SIZE).numpy()
        self.images, self.bounds = [], []
        for ax, title in zip(axes, ("correct", "with the bug"), strict=True):
            image = ax.imshow(blank, cmap="cividis", vmin=0, vmax=1, animated=True)
            (bound,) = ax.plot(
                [0, 0], [-0.5, MAX_SIZE - 0.5], color=RED, linewidth=1.5, animated=True
            )
            ax.set(
                title=title,
                xlim=(-0.5, MAX_SIZE - 0.5),
                ylim=(MAX_SIZE - 0.5, -0.5),
                xticks=range(MAX_SIZE),
                yticks=range(MAX_SIZE),
            )
            self.images.append(image)
            self.bounds.append(bound)
        self.title = axes[1].set_title("with the bug", animated=True)  # names the bug
        axes[0].set_ylabel("query")
        fig.supxlabel("key (right of the red line: padding)", fontsize="medium")
        fig.colorbar(self.images[0], ax=axes, shrink=0.8, label="weight")

    def update(self, data):
        n, m = data["n"], data["m"]
        extent = (-0.5, m - 0.5, n - 0.5, -0.5)
        for image, weights in zip(self.images, (data["weights"], data["bug_weights"]), strict=True):
            image.set_data(weights.numpy())
            image.set_extent(extent)
        for bound in self.bounds:
            x = m - NUM_PADDING - 0.5
            bound.set_data([x, x], [-0.5, n - 0.5])
        self.title.set_text(data["bug"])


def attention_bug_explorer() -> Explorer:
    """bug × n × m → the buggy weights beside the correct ones, the error and the verdict."""
    return Explorer(
        "Classic self-attention bugs, and what the checker says",
        [
            Control("bug", "bug", tuple(BUGS), default="softmax over the queries"),
            Control("n", "queries n", SIZES, default=6),
            Control("m", "keys m", SIZES, default=6),
        ],
        bug_frame,
        BugView(),
        lesson_errors=True,  # a mismatched shape is what this panel teaches
        caption=(
            f"Random q, k (d_k = {D_K}) and v (d_v = {D_V}); the last {NUM_PADDING} keys are "
            "padding, blocked by the mask (True = may attend). The checker's verdict comes from "
            "running check_attention on the buggy function."
        ),
    )
