"""Checkers for the rest of the block: positional encoding (q15), embeddings (q16),
LayerNorm (q17), the FFN (q18), layer FLOPs (q19).
"""

from __future__ import annotations

from functools import partial
from typing import Callable

import torch

from attention_qa.checks.common import call_learner, close, diagnose, require_shape

# --- q15: the sinusoidal positional encoding ------------------------------------------------

SINUSOIDAL_SLIPS = {
    "swapped": "the sine and cosine columns are swapped: PE[pos, 2i] is sin and PE[pos, 2i+1] cos",
    "halves": (
        "the sines fill the first half of the columns and the cosines the second; the paper "
        "interleaves them: sin in the even columns 2i, cos in the odd columns 2i+1"
    ),
    "pair_index": (
        "the exponent uses the pair index i over d_model (10000^(i/d_model)); it must be "
        "10000^(2i/d_model), so that the slowest frequency is about 1/10000"
    ),
    "column_index": (
        "each column gets its own frequency 10000^(j/d_model); a sine column 2i and the cosine "
        "column 2i+1 next to it must share the frequency 1/10000^(2i/d_model)"
    ),
    "start_at_1": "the positions start at 1; the first row is position 0 (sin 0 = 0, cos 0 = 1)",
}


def sinusoidal_variant(num_positions: int, d_model: int, bug: str | None = None):
    pos = torch.arange(num_positions, dtype=torch.float64).unsqueeze(1)  # (N, 1)
    if bug == "start_at_1":
        pos = pos + 1
    i = torch.arange(d_model // 2, dtype=torch.float64)  # (d_model/2,)
    exponent = i / d_model if bug == "pair_index" else 2 * i / d_model
    angles = pos / 10000.0**exponent  # (N, d_model/2)
    pe = torch.empty(num_positions, d_model, dtype=torch.float64)
    if bug == "halves":
        half = d_model // 2
        pe[:, :half], pe[:, half:] = torch.sin(angles), torch.cos(angles)
    elif bug == "column_index":
        j = torch.arange(d_model, dtype=torch.float64)
        every = pos / 10000.0 ** (j / d_model)  # (N, d_model)
        pe[:, 0::2], pe[:, 1::2] = torch.sin(every[:, 0::2]), torch.cos(every[:, 1::2])
    elif bug == "swapped":
        pe[:, 0::2], pe[:, 1::2] = torch.cos(angles), torch.sin(angles)
    else:
        pe[:, 0::2], pe[:, 1::2] = torch.sin(angles), torch.cos(angles)
    return pe  # (N, d_model)


def check_sinusoidal_encoding(fn: Callable) -> None:
    """Check ``fn(num_positions, d_model)`` against the encoding of Vaswani et al. (2017) §3.5."""
    cases = [(6, 4), (50, 16), (20, 64)]
    for num_positions, d_model in cases:
        case = f"num_positions={num_positions}, d_model={d_model}"
        expected = sinusoidal_variant(num_positions, d_model)
        got = call_learner(fn, case, num_positions, d_model)
        got = require_shape(got, expected.shape, case, "the encoding")
        diagnose(
            got, expected, case, "the encoding",
            "PE[pos, 2i] = sin(pos / 10000^(2i/d_model)), PE[pos, 2i+1] = cos(…)",
            SINUSOIDAL_SLIPS, partial(sinusoidal_variant, num_positions, d_model),
        )


# --- q16: token embeddings scaled by √d_model -----------------------------------------------

EMBEDDING_SLIPS = {
    "no_scale": "the rows are not scaled: multiply the looked-up rows by √d_model",
    "scale_d": "the rows are multiplied by d_model; the factor is √d_model",
    "divide": "the rows are divided by √d_model; they must be multiplied by it",
    "scale_vocab": "the rows are scaled by √vocab_size; the factor is √d_model (weight.shape[1])",
}


def embedding_variant(tokens, weight, bug: str | None = None):
    vocab_size, d_model = weight.shape
    factor = {
        None: d_model**0.5,
        "no_scale": 1.0,
        "scale_d": float(d_model),
        "divide": d_model**-0.5,
        "scale_vocab": vocab_size**0.5,
    }[bug]
    return weight[tokens] * factor  # (..., d_model)


def check_embedding(fn: Callable) -> None:
    """Check ``fn(tokens, weight)`` = weight[tokens] · √d_model for integer tokens of any shape
    and weight of shape (vocab_size, d_model)."""
    g = torch.Generator().manual_seed(16)
    for case, vocab_size, d_model, shape in (
        ("tokens of shape (2, 5), weight (10, 16)", 10, 16, (2, 5)),
        ("tokens of shape (7,), weight (30, 9)", 30, 9, (7,)),
    ):
        weight = torch.randn(vocab_size, d_model, generator=g, dtype=torch.float64)
        tokens = torch.randint(0, vocab_size, shape, generator=g)
        expected = embedding_variant(tokens, weight)
        got = call_learner(fn, case, tokens.clone(), weight.clone())
        got = require_shape(got, expected.shape, case, "the embeddings")
        diagnose(
            got, expected, case, "the embeddings", "the rows weight[tokens] times √d_model",
            EMBEDDING_SLIPS, partial(embedding_variant, tokens, weight),
        )


# --- q17: layer normalisation ---------------------------------------------------------------

LAYER_NORM_SLIPS = {
    "unbiased": (
        "the variance is the unbiased one (divided by d_model − 1); LayerNorm divides by d_model "
        "(var(..., unbiased=False) or correction=0)"
    ),
    "no_mean": ("the mean is not subtracted: x / √(mean(x²) + eps) is RMSNorm, not LayerNorm"),
    "eps_outside": (
        "eps is added to the standard deviation, (x − mean) / (std + eps); it belongs inside "
        "the square root, (x − mean) / √(var + eps)"
    ),
    "wrong_axis": (
        "the statistics are taken over the sequence axis (dim −2); LayerNorm normalises each "
        "position's features, over the last axis"
    ),
    "batch_axis": (
        "the statistics are taken over the batch axis (dim 0), as BatchNorm does; LayerNorm "
        "normalises each position's features, over the last axis"
    ),
    "no_affine": "weight and bias are not applied: the result must be x̂ · weight + bias",
}


def layer_norm_variant(x, weight, bias, eps, bug: str | None = None):
    dim = {"wrong_axis": -2, "batch_axis": 0}.get(bug, -1)
    mean = x.mean(dim=dim, keepdim=True)
    var = x.var(dim=dim, unbiased=(bug == "unbiased"), keepdim=True)
    if bug == "no_mean":
        x_hat = x / torch.sqrt(x.pow(2).mean(dim=-1, keepdim=True) + eps)
    elif bug == "eps_outside":
        x_hat = (x - mean) / (torch.sqrt(var) + eps)
    else:
        x_hat = (x - mean) / torch.sqrt(var + eps)
    return x_hat if bug == "no_affine" else x_hat * weight + bias


def check_layer_norm(fn: Callable) -> None:
    """Check ``fn(x, weight, bias, eps)`` against ``torch.nn.functional.layer_norm`` over the
    last axis, on inputs of shape (B, n, d_model), including a nearly constant row."""
    g = torch.Generator().manual_seed(17)
    cases = []
    for case, shape, eps in (
        ("x of shape (2, 3, 8), eps 1e-5", (2, 3, 8), 1e-5),
        ("x of shape (3, 4, 6) with a nearly constant row, eps 0.1", (3, 4, 6), 0.1),
    ):
        x = torch.randn(shape, generator=g, dtype=torch.float64) * 3 + 2
        if "constant" in case:
            x[0, 0] = 0.5 + 0.01 * torch.randn(shape[-1], generator=g, dtype=torch.float64)
        weight = torch.randn(shape[-1], generator=g, dtype=torch.float64)
        bias = torch.randn(shape[-1], generator=g, dtype=torch.float64)
        cases.append((case, x, weight, bias, eps))
    for case, x, weight, bias, eps in cases:
        expected = torch.nn.functional.layer_norm(x, x.shape[-1:], weight, bias, eps)
        got = call_learner(fn, case, x.clone(), weight.clone(), bias.clone(), eps)
        got = require_shape(got, expected.shape, case, "the output")
        diagnose(
            got, expected, case, "the output",
            "(x − mean) / √(var + eps) · weight + bias over the last axis",
            LAYER_NORM_SLIPS, partial(layer_norm_variant, x, weight, bias, eps),
        )


# --- q18: the position-wise feed-forward network -------------------------------------------

FEED_FORWARD_SLIPS = {
    "no_relu": (
        "there is no ReLU between the two layers; without it they collapse into one linear "
        "map x @ (w1 @ w2)"
    ),
    "relu_output": (
        "a ReLU is applied to the output too; FFN(x) = max(0, x w1 + b1) w2 + b2 ends linear"
    ),
    "relu_input": "the ReLU is applied to x before w1; it belongs after the first layer",
    "no_b1": "b1 is missing: the hidden layer is max(0, x w1 + b1)",
    "no_b2": "b2 is missing: the output is … w2 + b2",
}


def feed_forward_variant(x, w1, b1, w2, b2, bug: str | None = None):
    inner = torch.relu(x) if bug == "relu_input" else x
    hidden = inner @ w1 + (0 if bug == "no_b1" else b1)  # (..., d_ff)
    if bug not in ("no_relu", "relu_input"):
        hidden = torch.relu(hidden)
    out = hidden @ w2 + (0 if bug == "no_b2" else b2)  # (..., d_model)
    return torch.relu(out) if bug == "relu_output" else out


def check_feed_forward(fn: Callable) -> None:
    """Check ``fn(x, w1, b1, w2, b2)`` = max(0, x w1 + b1) w2 + b2 with w1 (d_model, d_ff) and
    w2 (d_ff, d_model), on x of shape (B, n, d_model) and (n, d_model)."""
    g = torch.Generator().manual_seed(18)
    for case, shape, d_ff in (
        ("x of shape (2, 5, 4), d_ff 8", (2, 5, 4), 8),
        ("x of shape (3, 6), d_ff 12", (3, 6), 12),
    ):
        d_model = shape[-1]
        x = torch.randn(shape, generator=g, dtype=torch.float64)
        w1 = torch.randn(d_model, d_ff, generator=g, dtype=torch.float64)
        b1 = torch.randn(d_ff, generator=g, dtype=torch.float64)
        w2 = torch.randn(d_ff, d_model, generator=g, dtype=torch.float64)
        b2 = torch.randn(d_model, generator=g, dtype=torch.float64)
        expected = feed_forward_variant(x, w1, b1, w2, b2)
        got = call_learner(fn, case, x.clone(), w1.clone(), b1.clone(), w2.clone(), b2.clone())
        got = require_shape(got, expected.shape, case, "the output")
        if not close(got, expected):
            # Mixing positions: a change at one position must not move another's output.
            moved = x.clone()
            moved[..., 0, :] += 1.0
            again = call_learner(fn, case, moved, w1.clone(), b1.clone(), w2.clone(), b2.clone())
            if isinstance(again, torch.Tensor) and again.shape == got.shape:
                if not close(again[..., 1:, :], got[..., 1:, :]):
                    raise AssertionError(
                        f"on {case}, changing position 0 changed the output at other "
                        f"positions: the FFN must treat every position on its own"
                    )
        diagnose(
            got, expected, case, "the output", "max(0, x w1 + b1) w2 + b2",
            FEED_FORWARD_SLIPS, partial(feed_forward_variant, x, w1, b1, w2, b2),
        )


# --- q19: FLOPs of a self-attention and a recurrent layer -----------------------------------

LAYER_FLOPS_SLIPS = {
    "halved": "the counts are half the right ones: a multiply-add is 2 FLOPs",
    "swapped": "the two counts are swapped: attention is O(n²·d), recurrence O(n·d²)",
    "scores_only": (
        "the attention count covers only the scores QKᵀ; the weighted sum of the values "
        "costs as much again"
    ),
    "no_input_term": (
        "the recurrent count covers only hₜ₋₁W; every step also multiplies the input, xₜU"
    ),
}


def layer_flops_variant(n: int, d: int, bug: str | None = None) -> tuple[int, int]:
    attention, recurrent = 4 * n * n * d, 4 * n * d * d
    if bug == "halved":
        return attention // 2, recurrent // 2
    if bug == "swapped":
        return recurrent, attention
    if bug == "scores_only":
        return attention // 2, recurrent
    if bug == "no_input_term":
        return attention, recurrent // 2
    return attention, recurrent


def check_layer_flops(fn: Callable) -> None:
    """Check ``fn(n, d) -> (attention_flops, recurrent_flops)``: 4·n²·d and 4·n·d²."""
    for n, d in ((10, 64), (300, 32), (7, 7)):
        case = f"n={n}, d={d}"
        got = call_learner(fn, case, n, d)
        if not (isinstance(got, tuple) and len(got) == 2):
            raise AssertionError(f"on {case}, return a pair (attention_flops, recurrent_flops)")
        got = tuple(int(v) for v in got)
        if got == layer_flops_variant(n, d):
            continue
        for bug, message in LAYER_FLOPS_SLIPS.items():
            if got == layer_flops_variant(n, d, bug):
                raise AssertionError(f"on {case}, {message}")
        raise AssertionError(
            f"on {case}, got {got} but expected {layer_flops_variant(n, d)}: "
            f"self-attention 4·n²·d, recurrent 4·n·d²"
        )


# --- q26: RMSNorm ---------------------------------------------------------------------------

RMS_NORM_SLIPS = {
    "mean": (
        "the mean is subtracted: that is LayerNorm without its bias; RMSNorm divides x itself "
        "by its root mean square, x / √(mean(x²) + eps)"
    ),
    "eps_outside": (
        "eps is added after the square root, x / (√mean(x²) + eps); it belongs inside it, "
        "x / √(mean(x²) + eps)"
    ),
    "no_weight": "the weight is not applied: the result must be x / √(mean(x²) + eps) · weight",
    "l2_norm": (
        "x is divided by its length √(sum(x²)); RMSNorm divides by the root *mean* square "
        "√(mean(x²)), √d_model times smaller"
    ),
    "no_sqrt": "x is divided by mean(x²) + eps; take its square root first",
    "wrong_axis": (
        "the mean square is taken over the sequence axis (dim −2); RMSNorm normalises each "
        "position's features, over the last axis"
    ),
}


def rms_norm_variant(x, weight, eps, bug: str | None = None):
    dim = -2 if bug == "wrong_axis" else -1
    if bug == "mean":
        x = x - x.mean(dim=-1, keepdim=True)
    mean_square = x.pow(2).mean(dim=dim, keepdim=True)  # (..., 1)
    if bug == "eps_outside":
        x_hat = x / (mean_square.sqrt() + eps)
    elif bug == "l2_norm":
        x_hat = x / torch.sqrt(x.pow(2).sum(dim=-1, keepdim=True) + eps)
    elif bug == "no_sqrt":
        x_hat = x / (mean_square + eps)
    else:
        x_hat = x / torch.sqrt(mean_square + eps)
    return x_hat if bug == "no_weight" else x_hat * weight


def check_rms_norm(fn: Callable) -> None:
    """Check ``fn(x, weight, eps)`` against ``torch.nn.functional.rms_norm`` over the last
    axis, on inputs of shape (B, n, d_model) with a non-zero mean and a small row."""
    g = torch.Generator().manual_seed(26)
    for case, shape, eps in (
        ("x of shape (2, 3, 8), eps 1e-6", (2, 3, 8), 1e-6),
        ("x of shape (3, 4, 6) with a small row, eps 0.1", (3, 4, 6), 0.1),
    ):
        x = torch.randn(shape, generator=g, dtype=torch.float64) * 2 + 1
        if "small" in case:
            x[0, 0] = 0.05 * torch.randn(shape[-1], generator=g, dtype=torch.float64)
        weight = torch.randn(shape[-1], generator=g, dtype=torch.float64)
        expected = torch.nn.functional.rms_norm(x, x.shape[-1:], weight, eps)
        got = call_learner(fn, case, x.clone(), weight.clone(), eps)
        got = require_shape(got, expected.shape, case, "the output")
        diagnose(
            got, expected, case, "the output", "x / √(mean(x²) + eps) · weight over the last axis",
            RMS_NORM_SLIPS, partial(rms_norm_variant, x, weight, eps),
        )
