"""Every exercise checker that compares numbers accepts a right answer in any float dtype.

A learner may compute in float32 (the PyTorch default), in float64 (as the checkers' cases
come) or in float16. Each right answer below is independent of the checker's own reference
(PyTorch's functions where there is one); it is run with every floating input cast to the
dtype under test, so its result carries that dtype's rounding, which differs from one CPU to
another. `make nbval` runs this file again under each machine setting it tests.
"""

import math

import pytest
import torch
import torch.nn.functional as F

from attention_qa import checks
from attention_qa.efficient import linear_attention
from attention_qa.heads import previous_token_score
from attention_qa.positional import sinusoidal_encoding
from tests.test_checks_vision import by_masked_sdpa


def computed_in(fn, dtype):
    """``fn`` with every floating tensor argument cast to ``dtype`` first."""

    def cast(x):
        return x.to(dtype) if isinstance(x, torch.Tensor) and x.is_floating_point() else x

    def learner(*args, **kwargs):
        return fn(*map(cast, args), **{key: cast(value) for key, value in kwargs.items()})

    return learner


def rope_by_pairs(x, positions, base):
    """A learner's RoPE: angles from the integer positions, the rotation in x's dtype."""
    d = x.shape[-1]
    theta = base ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)  # (d/2,)
    angles = positions.double().unsqueeze(-1) * theta  # (n, d/2)
    cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)
    even, odd = x[..., 0::2], x[..., 1::2]
    return torch.stack([even * cos - odd * sin, even * sin + odd * cos], -1).flatten(-2)


def online_softmax_by_blocks(scores, block_size):
    """A learner's online softmax: running max and rescaled running sum, block by block,
    returned with the trace of (max, sum) after each block."""
    running_max = torch.full(scores.shape[:-1], -math.inf, dtype=scores.dtype)  # (...)
    running_sum = torch.zeros(scores.shape[:-1], dtype=scores.dtype)  # (...)
    trace = []
    for start in range(0, scores.shape[-1], block_size):
        block = scores[..., start : start + block_size]  # (..., b)
        new_max = torch.maximum(running_max, block.amax(dim=-1))  # (...)
        running_sum = running_sum * torch.exp(running_max - new_max) + torch.exp(
            block - new_max.unsqueeze(-1)
        ).sum(dim=-1)
        running_max = new_max
        trace.append((running_max, running_sum))
    result = torch.exp(scores - running_max.unsqueeze(-1)) / running_sum.unsqueeze(-1)
    return result, trace


def top_k_gates_by_masking(logits, top_k):
    """A learner's gates: mask every logit below the k-th largest with −inf, then softmax."""
    kth = logits.topk(top_k, dim=-1).values[..., -1:]  # (..., 1)
    return torch.softmax(logits.masked_fill(logits < kth, -math.inf), dim=-1)  # (..., E)
def absmax_rows(x, bits):
    """A learner's fake quantisation: one absmax scale per row, a zero row kept at zero."""
    qmax = 2 ** (bits - 1) - 1
    s = (x.abs().amax(-1, keepdim=True) / qmax).clamp(min=torch.finfo(x.dtype).tiny)
    return torch.round(x / s) * s


def nucleus_by_hand(logits, temperature, top_p):
    """A learner's top-p: sort, keep while the mass before a token is below p, renormalise."""
    probs = torch.softmax(logits / temperature, dim=-1)
    sorted_probs, order = probs.sort(dim=-1, descending=True)
    keep_sorted = sorted_probs.cumsum(dim=-1) - sorted_probs < top_p
    kept = sorted_probs * keep_sorted
    out = torch.zeros_like(probs).scatter(-1, order, kept)
    return out / out.sum(dim=-1, keepdim=True)


def selective_scan_by_cumulative_sums(x, delta, A, B, C, D):
    """A learner's selective scan without a loop: h_t from cumulative sums of Δ A."""
    cum = torch.cumsum(delta.unsqueeze(-1) * A, dim=1)  # (batch, L, d, N)
    L = x.shape[1]
    keep = torch.tril(torch.ones(L, L, dtype=torch.bool))[None, :, :, None, None]
    gaps = cum.unsqueeze(2) - cum.unsqueeze(1)  # (batch, t, s, d, N)
    weights = torch.where(keep, torch.exp(torch.where(keep, gaps, 0)), 0)
    h = (weights * ((delta * x).unsqueeze(-1) * B.unsqueeze(-2)).unsqueeze(1)).sum(2)
    y = (h * C.unsqueeze(-2)).sum(-1)  # (batch, L, d)
    return y if D is None else y + D * x


def merge_by_softmax_of_lses(out_a, lse_a, out_b, lse_b):
    """A learner's merge of two partial attentions: the two weights as a softmax over the
    pair of log-sum-exps."""
    lses = torch.stack([lse_a, lse_b], -1)  # (..., n, 2)
    w = torch.softmax(lses, -1)
    return w[..., :1] * out_a + w[..., 1:] * out_b, torch.logsumexp(lses, -1)


RIGHT_ANSWERS = {
    "softmax_jacobian": (
        checks.check_softmax_jacobian,
        lambda p: torch.diag_embed(p) - p.unsqueeze(-1) * p.unsqueeze(-2),
    ),
    "pooling_weights": (
        checks.check_pooling_weights,
        lambda queries, keys, h: torch.softmax(
            -((queries.unsqueeze(1) - keys.unsqueeze(0)) ** 2) / (2 * h**2), dim=-1
        ),
    ),
    "attend_one": (
        checks.check_attend_one,
        lambda q, k, v: F.scaled_dot_product_attention(q[None], k, v)[0],
    ),
    "additive_scores": (
        checks.check_additive_scores,
        lambda q, k, W_q, W_k, w_v: torch.tanh(
            (q @ W_q.T).unsqueeze(-2) + (k @ W_k.T).unsqueeze(-3)
        ) @ w_v,
    ),
    "attention": (
        checks.check_attention,
        lambda q, k, v, mask=None: F.scaled_dot_product_attention(q, k, v, attn_mask=mask),
    ),
    "sinusoidal_encoding": (
        checks.check_sinusoidal_encoding,
        lambda num_positions, d_model: sinusoidal_encoding(num_positions, d_model),
    ),
    "embedding": (
        checks.check_embedding,
        lambda tokens, weight: F.embedding(tokens, weight) * math.sqrt(weight.shape[-1]),
    ),
    "layer_norm": (
        checks.check_layer_norm,
        lambda x, weight, bias, eps: F.layer_norm(x, x.shape[-1:], weight, bias, eps),
    ),
    "feed_forward": (
        checks.check_feed_forward,
        lambda x, w1, b1, w2, b2: F.relu(x @ w1 + b1) @ w2 + b2,
    ),
    "rms_norm": (
        checks.check_rms_norm,
        lambda x, weight, eps: F.rms_norm(x, x.shape[-1:], weight, eps),
    ),
    "swiglu": (
        checks.check_swiglu,
        lambda x, w_gate, w_up, w_down: (F.silu(x @ w_gate) * (x @ w_up)) @ w_down,
    ),
    "acceptance_rate": (checks.check_acceptance_rate,
                        lambda p, q: 1 - 0.5 * (p - q).abs().sum(-1)),
    "nucleus_probs": (checks.check_nucleus_probs, nucleus_by_hand),
    "linear_attention": (checks.check_linear_attention, linear_attention),
    "online_softmax": (checks.check_online_softmax, online_softmax_by_blocks),
    "previous_token_score": (checks.check_previous_token_score, previous_token_score),
    "top_k_gates": (checks.check_top_k_gates, top_k_gates_by_masking),
    "rope": (checks.check_rope, rope_by_pairs),
    "selective_scan": (checks.check_selective_scan, selective_scan_by_cumulative_sums),
    "merge_partials": (checks.check_merge_partials, merge_by_softmax_of_lses),
    "window_attention": (checks.check_window_attention, by_masked_sdpa),
    "masked_lm_loss": (
        checks.check_masked_lm_loss,
        lambda logits, labels: F.cross_entropy(logits.flatten(0, -2), labels.flatten()),
    ),
    "gated_cross_attention": (
        checks.check_gated_cross_attention,
        lambda x, media, w_q, w_k, w_v, w_o, alpha: x + torch.tanh(alpha) * (
            F.scaled_dot_product_attention(x @ w_q, media @ w_k, media @ w_v) @ w_o),
    ),
    "fake_quantize": (checks.check_fake_quantize, absmax_rows),
    "clip_logits": (
        checks.check_clip_logits,
        lambda img, txt, scale: scale * F.cosine_similarity(
            img.unsqueeze(1), txt.unsqueeze(0), dim=-1
        ),
    ),
}

# The sinusoidal encoding is built from integers; its dtype is the learner's choice of the
# result's, so the result is cast instead of the inputs.
RESULT_CAST = {"sinusoidal_encoding"}

# Checkers that refuse half precision, naming it: in float16 a slip hides in the tolerance.
HALF_REFUSED = {"masked_lm_loss"}


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16], ids=str)
@pytest.mark.parametrize("name", sorted(RIGHT_ANSWERS))
def test_a_right_answer_passes_in_any_float_dtype(name, dtype):
    checker, right = RIGHT_ANSWERS[name]
    if name in HALF_REFUSED and dtype == torch.float16:
        pytest.skip("q41 refuses a loss computed in half precision, named (test_checks_q41)")
    if name in RESULT_CAST:
        learner = lambda *args: right(*args).to(dtype)  # noqa: E731
    else:
        learner = computed_in(right, dtype)
    assert checker(learner) is None


@pytest.mark.parametrize("name", sorted(RIGHT_ANSWERS))
def test_a_wrong_answer_still_fails_in_float32(name):
    """The float32 tolerance is loose enough for rounding, not for a slip of 1 %."""
    checker, right = RIGHT_ANSWERS[name]

    def slightly_off(*args, **kwargs):
        result = right(*args, **kwargs)
        if isinstance(result, tuple):  # (result, trace): the trace is shifted as well
            head, trace = result
            off = [tuple(x.float() * 1.01 + 0.01 for x in pair) for pair in trace]
            return head.float() * 1.01 + 0.01, off
        return result.float() * 1.01 + 0.01

    with pytest.raises(AssertionError):
        checker(slightly_off)
