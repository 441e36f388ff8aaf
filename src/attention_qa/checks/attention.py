"""Checkers for single-head attention: pooling (q01), shapes (q02), one query step by step (q03),
the softmax Jacobian (q04), additive scores (q05) and self-attention itself (q06).
"""

from __future__ import annotations

from functools import partial
from typing import Callable

import torch

from attention_qa.checks.common import NAN_SCORES, call_learner, close, diagnose, require_shape
from attention_qa.masks import padding_mask


def _softmax_jacobian_reference(p: torch.Tensor) -> torch.Tensor:
    return torch.diag_embed(p) - p.unsqueeze(-1) * p.unsqueeze(-2)  # (..., m, m)


def check_softmax_jacobian(fn: Callable) -> None:
    """Check ``fn(p) -> diag(p) − p pᵀ`` for probability vectors p of shape (..., m)."""
    g = torch.Generator().manual_seed(4)

    def random_p(*shape):
        return torch.softmax(torch.randn(*shape, generator=g, dtype=torch.float64), dim=-1)

    cases = [
        ("p of shape (3,)", random_p(3)),
        ("a one-hot p of shape (4,)", torch.tensor([0.0, 1.0, 0.0, 0.0], dtype=torch.float64)),
        ("p of shape (2, 5)", random_p(2, 5)),
    ]
    for case, p in cases:
        expected = _softmax_jacobian_reference(p)
        got = call_learner(fn, case, p.clone())
        got = require_shape(got, expected.shape, case, "the Jacobian")
        outer = p.unsqueeze(-1) * p.unsqueeze(-2)  # (..., m, m)
        mistakes = [
            (-expected, "the sign is flipped: it is diag(p) − p pᵀ, not p pᵀ − diag(p)"),
            (torch.diag_embed(p), "the − p pᵀ term is missing: off-diagonal entries are −pᵢpⱼ"),
            (-outer, "the diag(p) term is missing: diagonal entries are pᵢ(1 − pᵢ)"),
            (
                torch.diag_embed(p - p * p),
                "only the diagonal is right: off-diagonal entries are −pᵢpⱼ, not 0",
            ),
        ]
        wrongs = dict(enumerate(wrong for wrong, _ in mistakes))
        slips = dict(enumerate(message for _, message in mistakes))
        diagnose(got, expected, case, "the Jacobian", "diag(p) − p pᵀ", slips, wrongs.get)


# --- check_pooling_weights (q01) ------------------------------------------------------------


def pooling_variant(queries, keys, bandwidth, bug: str | None = None):
    """Gaussian-kernel pooling weights (n, m) with one known slip switched on."""
    diffs = queries.unsqueeze(1) - keys.unsqueeze(0)  # (n, m)
    h = bandwidth
    scores = {
        "no_minus": diffs**2 / (2 * h**2),
        "not_squared": -diffs.abs() / (2 * h**2),
        "no_two": -(diffs**2) / h**2,
        "bandwidth_not_squared": -(diffs**2) / (2 * h),
    }.get(bug, -(diffs**2) / (2 * h**2))
    if bug == "not_normalised":
        return torch.exp(scores)
    return torch.softmax(scores, dim=0 if bug == "softmax_over_queries" else -1)


POOLING_SLIPS = {
    "softmax_over_queries": (
        "the softmax runs over the queries (dim=0): each query's weights must sum to 1 over "
        "the keys, so normalise along dim=-1"
    ),
    "no_minus": (
        "the minus sign is missing: near keys must get the largest weights, so the score is "
        "−(x − x_j)² / (2h²)"
    ),
    "not_squared": (
        "the distance is not squared: the Gaussian kernel uses (x − x_j)², not |x − x_j|"
    ),
    "no_two": "the factor 2 is missing: the score is −(x − x_j)² / (2h²), not −(x − x_j)² / h²",
    "bandwidth_not_squared": "the bandwidth is not squared: divide by 2h², not by 2h",
    "not_normalised": (
        "the weights are not normalised: exp(score) must be divided by its sum over the keys "
        "(that is what softmax does)"
    ),
}


def check_pooling_weights(fn: Callable) -> None:
    """Check ``fn(queries, keys, bandwidth) -> weights`` of Gaussian-kernel pooling.

    queries (n,), keys (m,), bandwidth a positive float; the weights are (n, m) with
    ``weights[i, j] = softmax_j(−(queries[i] − keys[j])² / (2·bandwidth²))``, the weights of
    ``attention.attention_pooling`` (Nadaraya, 1964; Watson, 1964).
    """
    from attention_qa.attention import attention_pooling

    g = torch.Generator().manual_seed(7)
    cases = [
        (
            "3 queries, 5 keys, bandwidth 0.5",
            torch.rand(3, generator=g) * 4,
            torch.rand(5, generator=g) * 4,
            0.5,
        ),
        (
            "1 query, 4 keys, bandwidth 2.0",
            torch.tensor([1.5]),
            torch.tensor([0.0, 1.0, 2.5, 4.0]),
            2.0,
        ),
        (
            "4 queries, 6 keys, one query far from every key, bandwidth 0.1",
            torch.tensor([0.0, 1.2, 2.6, 20.0]),
            torch.tensor([-3.0, 0.5, 1.0, 2.0, 6.0, 9.0]),
            0.1,
        ),
    ]
    for case, queries, keys, bandwidth in cases:
        _, expected = attention_pooling(queries, keys, torch.zeros_like(keys), bandwidth)
        n, m = queries.shape[0], keys.shape[0]
        got = call_learner(fn, case, queries.clone(), keys.clone(), bandwidth)
        if isinstance(got, torch.Tensor) and tuple(got.shape) == (m, n) and n != m:
            raise AssertionError(
                f"on {case}, the weights have shape {(m, n)} = (m, n): they should be "
                f"(n, m) = {(n, m)}, one row per query"
            )
        got = require_shape(got, (n, m), case, "the weights")
        diagnose(
            got, expected, case, "the weights", "softmax(−(x − x_j)² / (2h²)) over the keys",
            POOLING_SLIPS, partial(pooling_variant, queries, keys, bandwidth),
            nan_hint="exp of very negative scores underflows to 0 and 0/0 follows; use "
            "torch.softmax, which subtracts the largest score first",
        )


# --- check_output_shape (q02) ---------------------------------------------------------------


def _shape_cases() -> list:
    """(case, q shape, k shape, v shape): valid ones first, then two that must fail."""
    return [
        ("q (3, 4), k (5, 4), v (5, 2)", (3, 4), (5, 4), (5, 2)),
        ("q (2, 6, 8), k (2, 6, 8), v (2, 6, 8) (self-attention)", (2, 6, 8), (2, 6, 8), (2, 6, 8)),
        (
            "q (2, 3, 4, 6), k (2, 3, 7, 6), v (2, 3, 7, 5)",
            (2, 3, 4, 6),
            (2, 3, 7, 6),
            (2, 3, 7, 5),
        ),
        ("q (1, 4), k (9, 4), v (9, 3)", (1, 4), (9, 4), (9, 3)),
        ("q (3, 4), k (5, 6), v (5, 2) (q and k disagree on d_k)", (3, 4), (5, 6), (5, 2)),
        ("q (3, 4), k (5, 4), v (6, 2) (5 keys but 6 values)", (3, 4), (5, 4), (6, 2)),
    ]


def check_output_shape(fn: Callable) -> None:
    """Check ``fn(q_shape, k_shape, v_shape)`` returns the shape of attention's output.

    The shapes are tuples, q (..., n, d_k), k (..., m, d_k), v (..., m, d_v) with the same
    leading dims. ``fn`` must return ``(..., n, d_v)``, and raise ``ValueError`` when q and k
    disagree on d_k or k and v on m. The reference is what
    ``attention.scaled_dot_product_attention`` returns or raises on zero tensors.
    """
    from attention_qa.attention import scaled_dot_product_attention

    for case, q_shape, k_shape, v_shape in _shape_cases():
        try:
            out, _ = scaled_dot_product_attention(
                torch.zeros(q_shape), torch.zeros(k_shape), torch.zeros(v_shape)
            )
            expected = tuple(out.shape)
        except ValueError:
            expected = None
        try:
            got = call_learner(fn, case, q_shape, k_shape, v_shape, passthrough=(ValueError,))
        except ValueError:
            if expected is None:
                continue
            raise AssertionError(
                f"on {case}, your function raised ValueError, but these shapes are fine: "
                f"the output is {expected}"
            ) from None
        if expected is None:
            if q_shape[-1] != k_shape[-1]:
                raise AssertionError(
                    f"on {case}, your function returned {got!r} instead of raising ValueError: "
                    f"q·k needs vectors of one length, d_k = {q_shape[-1]} vs {k_shape[-1]}"
                )
            raise AssertionError(
                f"on {case}, your function returned {got!r} instead of raising ValueError: "
                f"every key needs one value, so k and v must both have m rows"
            )
        if not isinstance(got, (tuple, list, torch.Size)):
            raise AssertionError(
                f"on {case}, your function should return a tuple, got {type(got).__name__}"
            )
        got = tuple(int(x) for x in got)
        if got == expected:
            continue
        lead, n, d_k = q_shape[:-2], q_shape[-2], q_shape[-1]
        m, d_v = k_shape[-2], v_shape[-1]
        mistakes = [
            ((*lead, n, d_k), "the last dim is d_k: the output has d_v columns, taken from v"),
            (
                (*lead, n, m),
                "that is the shape of the weights (..., n, m): the output is "
                "weights @ v, with d_v columns",
            ),
            ((*lead, m, d_v), "the output has one row per query (n), not per key (m)"),
            ((n, d_v), "the leading (batch) dims are missing: keep q's leading dims"),
            ((*lead, d_v, n), "the output is transposed: it is (..., n, d_v)"),
        ]
        for wrong, message in mistakes:
            if got == tuple(wrong):
                raise AssertionError(f"on {case}, you returned {got}: {message}")
        raise AssertionError(f"on {case}, you returned {got}, but the output is {expected}")


# --- check_attend_one (q03) -----------------------------------------------------------------


def attend_one_variant(q, k, v, bug: str | None = None):
    """One query's attention output (d_v,) with one known slip switched on."""
    d_k = q.shape[-1]
    scores = k @ q  # (m,)
    scale = {
        "no_scale": 1.0,
        "scale_d_k": 1.0 / d_k,
        "scale_d_v": v.shape[-1] ** -0.5,
        "scale_m": k.shape[0] ** -0.5,
        "scale_after_softmax": 1.0,
    }.get(bug, d_k**-0.5)
    weights = torch.softmax(scores * scale, dim=-1)  # (m,)
    if bug == "scale_after_softmax":
        weights = weights / d_k**0.5
    if bug == "not_normalised":
        weights = torch.exp(scores * scale)
    if bug == "sum_values":
        weights = torch.ones_like(weights)
    if bug == "mean_values":
        weights = torch.full_like(weights, 1.0 / k.shape[0])
    return weights @ v  # (d_v,)


ATTEND_ONE_SLIPS = {
    "no_scale": "the scores are not scaled: divide each q·k_j by √d_k before the softmax",
    "scale_d_k": "the scores are divided by d_k instead of √d_k",
    "scale_d_v": "the scale uses d_v = V.shape[-1]; it must use d_k = len(q)",
    "scale_m": "the scale uses m, the number of keys; it must use d_k = len(q)",
    "scale_after_softmax": (
        "the scale is applied after the softmax: divide the scores by √d_k, then take softmax"
    ),
    "not_normalised": (
        "the weights are exp(score) without dividing by their sum: they must sum to 1"
    ),
    "sum_values": (
        "the output is the plain sum of the values, Σ_j v_j: each value must be multiplied "
        "by its weight first, Σ_j p_j v_j"
    ),
    "mean_values": (
        "the output is the plain mean of the values: the weights must come from the scores"
    ),
}


def check_attend_one(fn: Callable) -> None:
    """Check ``fn(q, k, v) -> output`` for one query written out step by step.

    q (d_k,), k (m, d_k), v (m, d_v); the output is (d_v,) =
    ``Σ_j softmax_j(q·k_j / √d_k) v_j``, compared with ``attention.scaled_dot_product_attention``.
    The last case has scores in the hundreds, which overflow a naive ``exp``.
    """
    from attention_qa.attention import scaled_dot_product_attention

    g = torch.Generator().manual_seed(5)
    cases = [
        ("q (4,), k (3, 4), v (3, 4)", 4, 3, 4, 1.0),
        ("q (6,), k (5, 6), v (5, 2)", 6, 5, 2, 1.0),
        ("q (8,), k (4, 8), v (4, 3) with scores in the hundreds", 8, 4, 3, 60.0),
    ]
    for case, d_k, m, d_v, size in cases:
        q = torch.randn(d_k, generator=g) * size
        k = torch.randn(m, d_k, generator=g)
        v = torch.randn(m, d_v, generator=g)
        expected = scaled_dot_product_attention(q.unsqueeze(0), k, v)[0][0]  # (d_v,)
        got = call_learner(fn, case, q.clone(), k.clone(), v.clone())
        if isinstance(got, torch.Tensor) and tuple(got.shape) == (m,) and m != d_v:
            raise AssertionError(
                f"on {case}, you returned a vector of length m = {m}, the weights: the output "
                f"is the weighted sum of the values, of length d_v = {d_v}"
            )
        got = require_shape(got, (d_v,), case, "the output")
        diagnose(
            got, expected, case, "the output", "Σ_j softmax_j(q·k_j / √d_k) v_j",
            ATTEND_ONE_SLIPS, partial(attend_one_variant, q, k, v),
            nan_hint="exp of a large score overflows; subtract the largest score from every "
            "score before exp (softmax does)",
        )


# --- check_additive_scores (q05) ------------------------------------------------------------

ADDITIVE_SLIPS = {
    "no_tanh": (
        "the tanh is missing: without it w_vᵀ(W_q q + W_k k) splits into a query part plus a "
        "key part, and the query part cancels in the softmax; apply tanh before w_v"
    ),
    "tanh_after_w_v": (
        "the tanh is applied after w_v: the score is w_vᵀ tanh(W_q q + W_k k), tanh on the "
        "(..., n, m, d_hidden) features, then the dot product with w_v"
    ),
    "no_w_v": (
        "w_v is not used: the hidden features are summed instead of weighted by w_v; "
        "the score is w_vᵀ tanh(W_q q + W_k k)"
    ),
    "projections_swapped": (
        "W_q and W_k are swapped: the queries go through W_q and the keys through W_k"
    ),
    "weights_not_transposed": (
        "the projections are applied as q @ W_q instead of q @ W_qᵀ: W_q has shape "
        "(d_hidden, d_query), like an nn.Linear weight"
    ),
    "scores_transposed": (
        "the scores are transposed: they must be (..., n, m), one row per query, so "
        "broadcast the queries over the key axis (q_h.unsqueeze(-2) + k_h.unsqueeze(-3))"
    ),
}


def additive_variant(q, k, W_q, W_k, w_v, bug: str | None = None):
    """Additive scores w_vᵀ tanh(W_q q + W_k k) with one known slip switched on (None: none)."""
    if bug == "projections_swapped":
        W_q, W_k = W_k, W_q
    if bug == "weights_not_transposed":
        q_h, k_h = q @ W_q, k @ W_k
    else:
        q_h, k_h = q @ W_q.T, k @ W_k.T  # (..., n, d_hidden), (..., m, d_hidden)
    if bug == "scores_transposed":
        pre = q_h.unsqueeze(-3) + k_h.unsqueeze(-2)  # (..., m, n, d_hidden)
    else:
        pre = q_h.unsqueeze(-2) + k_h.unsqueeze(-3)  # (..., n, m, d_hidden)
    if bug == "no_tanh":
        return pre @ w_v
    if bug == "tanh_after_w_v":
        return torch.tanh(pre @ w_v)
    if bug == "no_w_v":
        return torch.tanh(pre).sum(dim=-1)
    return torch.tanh(pre) @ w_v  # (..., n, m)


def check_additive_scores(fn: Callable) -> None:
    """Check a learner's ``fn(q, k, W_q, W_k, w_v)`` for additive (Bahdanau) scores.

    q: (..., n, d_query), k: (..., m, d_key), W_q: (d_hidden, d_query), W_k:
    (d_hidden, d_key), w_v: (d_hidden,). It must return the scores
    ``w_vᵀ tanh(W_q q + W_k k)`` of shape (..., n, m) (Bahdanau et al., 2015, appendix
    A.1.2), the score of ``attention_qa.attention.AdditiveAttention``. The global random
    state is left untouched.
    """
    g = torch.Generator().manual_seed(5)
    cases = [
        ("q (4, 4), k (4, 4), d_hidden 4 (n = m, d_query = d_key = d_hidden)", (4, 4), (4, 4), 4),
        ("q (3, 6), k (5, 4), d_hidden 8", (3, 6), (5, 4), 8),
        ("q (2, 3, 5), k (2, 4, 5), d_hidden 6 (batch dims)", (2, 3, 5), (2, 4, 5), 6),
    ]
    for case, q_shape, k_shape, d_hidden in cases:
        q = torch.randn(q_shape, generator=g, dtype=torch.float64)
        k = torch.randn(k_shape, generator=g, dtype=torch.float64)
        W_q = torch.randn(d_hidden, q_shape[-1], generator=g, dtype=torch.float64)
        W_k = torch.randn(d_hidden, k_shape[-1], generator=g, dtype=torch.float64)
        w_v = torch.randn(d_hidden, generator=g, dtype=torch.float64)
        m = k_shape[-2]
        expected = additive_variant(q, k, W_q, W_k, w_v)  # (..., n, m)
        got = call_learner(fn, case, q.clone(), k.clone(), W_q.clone(), W_k.clone(), w_v.clone())
        if isinstance(got, torch.Tensor) and got.shape != expected.shape:
            if tuple(got.shape) == (*expected.shape[:-2], m, q_shape[-2]):
                raise AssertionError(f"on {case}, {ADDITIVE_SLIPS['scores_transposed']}")
            if got.ndim == expected.ndim + 1 and got.shape[:-1] == expected.shape:
                raise AssertionError(
                    f"on {case}, the scores have shape {tuple(got.shape)}: the hidden axis "
                    f"(..., n, m, d_hidden) must be reduced by the dot product with w_v"
                )
        got = require_shape(got, expected.shape, case, "the scores")
        diagnose(
            got, expected, case, "the scores", "w_vᵀ tanh(W_q q + W_k k)",
            ADDITIVE_SLIPS, partial(additive_variant, q, k, W_q, W_k, w_v),
        )


# --- check_attention ------------------------------------------------------------------------

# One line of feedback per known slip, keyed by the switch of ``attention_variant`` that
# copies it. The softmax-axis slip is added per case, since which axes exist depends on it.
ATTENTION_SLIPS = {
    "k_not_transposed": (
        "k is not transposed: the scores are q @ kᵀ, i.e. q @ k.transpose(-2, -1), "
        "of shape (..., n, m)"
    ),
    "scores_transposed": (
        "the scores are transposed: they are q @ kᵀ, of shape (..., n, m) (one row per "
        "query), not k @ qᵀ"
    ),
    "weights_transposed": (
        "the weights are transposed before they multiply v: the output is weights @ v "
        "with weights of shape (..., n, m)"
    ),
    "no_scale": "the scores are not scaled: divide q @ kᵀ by √d_k before the softmax",
    "scale_d_k": "the scores are divided by d_k instead of √d_k",
    "scale_times_sqrt_d_k": "the scores are multiplied by √d_k instead of divided by it",
    "scale_d_v": (
        "the scale uses d_v = v.shape[-1]; it must use d_k = q.shape[-1], the length of "
        "the vectors in each dot product"
    ),
    "scale_m": (
        "the scale uses m = k.shape[-2], the number of keys; it must use d_k = k.shape[-1], "
        "the length of each key vector"
    ),
    "scale_n": (
        "the scale uses n = q.shape[-2], the number of queries; it must use "
        "d_k = q.shape[-1], the length of each query vector"
    ),
    "scale_d_model_512": (
        "the scores are divided by √512, d_model of the paper's base model; divide by "
        "√d_k of these inputs, q.shape[-1]"
    ),
    "mask_ignored": "the mask is ignored: a key where mask is False must get zero weight",
    "mask_inverted": (
        "the mask is read the wrong way round: True means may attend (the convention of "
        "F.scaled_dot_product_attention), so fill the scores where mask is False"
    ),
    "mask_zero": (
        "the masked scores are set to 0, which still gives those keys weight; set them to "
        "−∞ (or the dtype's most negative value) before the softmax"
    ),
    "mask_after_softmax": (
        "the mask is applied after the softmax, so the remaining weights no longer sum "
        "to 1; mask the scores before the softmax"
    ),
}


def attention_variant(q, k, v, mask, bug: str | None = None, dim: int = -1):
    """Scaled dot-product attention with one known slip switched on (None: no slip).

    Returns ``(output, weights)``; ``dim`` is the softmax axis for the "softmax_dim" slip.
    """
    d_k = q.shape[-1]
    if bug == "k_not_transposed":
        scores = q @ k  # only runs when d_k = m
    elif bug == "scores_transposed":
        scores = k @ q.transpose(-2, -1)  # (..., m, n); only lines up with v when n = m
    else:
        scores = q @ k.transpose(-2, -1)  # (..., n, m)
    scale = {
        "no_scale": 1.0,
        "scale_d_k": 1.0 / d_k,
        "scale_times_sqrt_d_k": d_k**0.5,
        "scale_d_v": v.shape[-1] ** -0.5,
        "scale_m": k.shape[-2] ** -0.5,
        "scale_n": q.shape[-2] ** -0.5,
        "scale_d_model_512": 512**-0.5,
    }.get(bug, d_k**-0.5)
    scores = scores * scale
    if mask is not None and bug not in ("mask_ignored", "mask_after_softmax"):
        if bug == "mask_zero":
            scores = scores.masked_fill(~mask, 0.0)
        else:
            blocked = mask if bug == "mask_inverted" else ~mask
            scores = scores.masked_fill(blocked, torch.finfo(scores.dtype).min)
    weights = torch.softmax(scores, dim=dim if bug == "softmax_dim" else -1)  # (..., n, m)
    if mask is not None and bug == "mask_after_softmax":
        weights = weights * mask
    if bug == "weights_transposed":
        weights = weights.transpose(-2, -1)
    return weights @ v, weights  # (..., n, d_v), (..., n, m)


def _attention_cases() -> list:
    """(case, q shape, k shape, v shape, mask) for check_attention.

    The first case has n = m = d_k so that the transposition slips still run and can be
    named; the later ones make n, m, d_k and d_v differ, so that each scale slip differs
    from the others. Every mask row has a True and a False, so no query is fully masked
    (a hand-written softmax over -inf scores returns NaN there, while the pinned
    F.scaled_dot_product_attention returns zeros, so a correct answer could disagree with
    the reference) and the inverted mask has no fully masked query either.
    """
    n, m = 4, 6
    i = torch.arange(n).unsqueeze(1)  # (n, 1)
    j = torch.arange(m).unsqueeze(0)  # (1, m)
    window = (j - i - (m - n)).abs() <= 1  # (n, m): each query sees its neighbours only
    return [
        (
            "q (4, 4), k (4, 4), v (4, 3) (no batch dims, n = m = d_k, no mask)",
            (4, 4),
            (4, 4),
            (4, 3),
            None,
        ),
        ("q (3, 6), k (5, 6), v (5, 2) (no batch dims, no mask)", (3, 6), (5, 6), (5, 2), None),
        (
            "q (2, 3, 8), k (2, 5, 8), v (2, 5, 4) (batch dims, no mask)",
            (2, 3, 8),
            (2, 5, 8),
            (2, 5, 4),
            None,
        ),
        (
            "q (2, 2, 4, 6), k (2, 2, 7, 6), v (2, 2, 7, 5) (dims (B, h, n, d), no mask)",
            (2, 2, 4, 6),
            (2, 2, 7, 6),
            (2, 2, 7, 5),
            None,
        ),
        (
            "q (2, 4, 5), k (2, 6, 5), v (2, 6, 3) with a padding mask of shape (2, 1, 6)",
            (2, 4, 5),
            (2, 6, 5),
            (2, 6, 3),
            padding_mask([4, 2], 6).unsqueeze(1),
        ),
        (
            "q (3, 4, 8), k (3, 6, 8), v (3, 6, 2) with a sliding-window mask of shape (4, 6)",
            (3, 4, 8),
            (3, 6, 8),
            (3, 6, 2),
            window,
        ),
        (
            "q (2, 2, 3, 4), k (2, 2, 5, 4), v (2, 2, 5, 6) with a padding mask of shape "
            "(2, 1, 1, 5)",
            (2, 2, 3, 4),
            (2, 2, 5, 4),
            (2, 2, 5, 6),
            padding_mask([3, 4], 5)[:, None, None, :],
        ),
    ]


def _axis_name(dim: int, ndim: int) -> str:
    return "the queries" if dim == ndim - 2 else "a batch axis"


def _attention_output_variant(q, k, v, mask, switch: tuple) -> torch.Tensor:
    bug, dim = switch
    return attention_variant(q, k, v, mask, bug, dim)[0]


def check_attention(fn: Callable) -> None:
    """Check a learner's ``fn(q, k, v, mask=None)`` against PyTorch's attention.

    ``fn`` gets q (..., n, d_k), k (..., m, d_k), v (..., m, d_v) and, in the masked cases,
    a boolean mask (True = may attend) as a fourth argument; it returns the output
    (..., n, d_v), or ``(output, weights)`` with weights (..., n, m). The reference is
    ``torch.nn.functional.scaled_dot_product_attention``, i.e. ``softmax(q kᵀ / √d_k) v``
    (Vaswani et al., 2017, equation 1). The global random state is left untouched.
    """
    g = torch.Generator().manual_seed(11)
    passed_without_batch = False
    for case, q_shape, k_shape, v_shape, mask in _attention_cases():
        q = torch.randn(q_shape, generator=g)
        k = torch.randn(k_shape, generator=g)
        v = torch.randn(v_shape, generator=g)
        expected = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        _, expected_weights = attention_variant(q, k, v, mask)
        args = (q.clone(), k.clone(), v.clone()) + (() if mask is None else (mask.clone(),))
        try:
            result = call_learner(fn, case, *args)
        except AssertionError as err:
            if q.ndim > 2 and passed_without_batch:
                raise AssertionError(
                    f"{err}. It works without batch dims, so look for an operation that "
                    f"only handles 2-D tensors: use k.transpose(-2, -1) (not k.T or k.t()) "
                    f"and @ (not torch.mm)"
                ) from None
            raise
        got = result[0] if isinstance(result, (tuple, list)) else result
        n, m, d_v = q.shape[-2], k.shape[-2], v.shape[-1]
        if isinstance(got, torch.Tensor) and got.shape != expected.shape:
            if tuple(got.shape) == (*expected.shape[:-2], n, m):
                raise AssertionError(
                    f"on {case}, the output has shape {tuple(got.shape)} = (..., n, m), the "
                    f"shape of the weights: multiply them by v to get (..., n, d_v)"
                )
            if tuple(got.shape) == (*expected.shape[:-2], d_v, n):
                raise AssertionError(
                    f"on {case}, the output has shape {tuple(got.shape)} = (..., d_v, n): it "
                    f"is transposed; it should be (..., n, d_v) = {tuple(expected.shape)}"
                )
        require_shape(got, expected.shape, case, "the output")
        if not got.is_floating_point():
            raise AssertionError(f"on {case}, the output has dtype {got.dtype}, not a float")
        # A switch is (slip, softmax axis); the axis slip is named per case, since which
        # axes exist depends on it.
        slips = {
            ("softmax_dim", d): (
                f"the softmax runs over the wrong axis (dim={d}, {_axis_name(d, q.ndim)}): it "
                f"must run over the keys, dim=-1, so that each query's weights sum to 1"
            )
            for d in range(q.ndim - 1)
        }
        slips.update({(bug, -1): message for bug, message in ATTENTION_SLIPS.items()})
        diagnose(
            got, expected, case, "the output",
            "softmax(q kᵀ / √d_k) v (Vaswani et al., 2017, equation 1)",
            slips, partial(_attention_output_variant, q, k, v, mask),
            nan_hint=NAN_SCORES,
        )
        if isinstance(result, (tuple, list)) and len(result) > 1 and result[1] is not None:
            weights = require_shape(result[1], expected_weights.shape, case, "the weights")
            if not close(weights, expected_weights):
                raise AssertionError(
                    f"on {case}, the output is right but the weights are not "
                    f"softmax(q kᵀ / √d_k) with masked keys at 0, shape (..., n, m)"
                )
        passed_without_batch = passed_without_batch or q.ndim == 2
