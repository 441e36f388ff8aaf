"""Automatic checkers for the book's exercises.

A checker runs a learner's function on several cases against the package's reference.
It returns None when every case agrees; otherwise it raises ``AssertionError`` whose
message names the likely bug, so the feedback reads like a teacher's, not a diff.
"""

from __future__ import annotations

import inspect
from typing import Callable

import torch

from attention_qa.masks import causal_mask, padding_mask
from attention_qa.multihead import MultiHeadAttention


def call_learner(fn: Callable, case: str, *args, **kwargs):
    """Call the learner's function; if it raises, say which input it failed on."""
    try:
        return fn(*args, **kwargs)
    except NotImplementedError:
        raise
    except Exception as err:
        raise AssertionError(
            f"your function raised {type(err).__name__} on {case}: {err}"
        ) from None


def require_shape(result, expected: tuple, case: str, name: str = "result") -> torch.Tensor:
    if not isinstance(result, torch.Tensor):
        raise AssertionError(f"on {case}, {name} should be a tensor, got {type(result).__name__}")
    if tuple(result.shape) != tuple(expected):
        raise AssertionError(
            f"on {case}, {name} has shape {tuple(result.shape)} but should be {tuple(expected)}"
        )
    return result


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
        if torch.allclose(got, expected, atol=1e-9):
            continue
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
        for wrong, message in mistakes:
            if torch.allclose(got, wrong, atol=1e-9):
                raise AssertionError(f"on {case}, {message}")
        worst = (got - expected).abs().max().item()
        raise AssertionError(
            f"on {case}, the Jacobian is off by up to {worst:.3g} from diag(p) − p pᵀ"
        )


# --- check_multihead ------------------------------------------------------------------------

_MHA_LAYERS = ("w_q", "w_k", "w_v", "w_o")

# One line of feedback per known slip, keyed by the switch of ``_mha_variant`` that copies it.
_MHA_BUGS = {
    "split_without_transpose": (
        "the heads are split wrongly: view(B, h, n, d_k) cuts the token axis into pieces; "
        "split the features with view(B, n, h, d_k), then transpose(1, 2) to (B, h, n, d_k)"
    ),
    "merge_without_transpose": (
        "the heads are not merged back correctly: transpose (B, h, n, d_k) to (B, n, h, d_k) "
        "before the final view/reshape to (B, n, d_model)"
    ),
    "no_scale": "the scores are not scaled: divide Q Kᵀ by √d_k before the softmax",
    "scale_d_model": (
        "the scores are divided by √d_model, but each head's dot product has only "
        "d_k = d_model / h terms: divide by √d_k"
    ),
    "v_is_k": (
        "V is built from K: v must come from w_v(value), but yours matches the keys "
        "(did you reshape k_flat where v_flat was meant?)"
    ),
    "v_from_key": "V is computed from the key input: it must be w_v(value), not w_v(key)",
    "softmax_over_queries": (
        "the softmax runs over the wrong axis: each query's weights must sum to 1 over the "
        "keys (dim=-1), not over the queries (dim=-2)"
    ),
    "softmax_over_heads": (
        "the softmax runs over the wrong axis: it must normalise over the keys (dim=-1), "
        "not over the heads (dim=1)"
    ),
    "mask_ignored": "the mask is ignored: a key where mask is False must get zero weight",
    "mask_inverted": (
        "the mask is read the wrong way round: True means may attend (the convention of "
        "F.scaled_dot_product_attention), the opposite of nn.MultiheadAttention's bool masks"
    ),
    "no_output_projection": "the output projection w_o is not applied after merging the heads",
    "kv_heads_tiled": (
        "query heads use the wrong key/value heads: query head i must use K/V head "
        "i // (num_heads // num_kv_heads), i.e. repeat_interleave, not repeat (i % num_kv_heads)"
    ),
}


def _mha_variant(layers, query, key, value, mask, h: int, h_kv: int, bug: str | None = None):
    """Multi-head attention written out with one known slip switched on (None: no slip)."""
    w_q, w_k, w_v, w_o = layers
    B, n, d_model = query.shape
    m = key.shape[1]
    d_k = d_model // h
    q = w_q(query)  # (B, n, d_model)
    k = w_k(key)  # (B, m, h_kv·d_k)
    if bug == "v_is_k":
        v = w_k(key)
    elif bug == "v_from_key":
        v = w_v(key)
    else:
        v = w_v(value)  # (B, m, h_kv·d_k)
    if bug == "split_without_transpose":
        q, k, v = q.reshape(B, h, n, d_k), k.reshape(B, h_kv, m, d_k), v.reshape(B, h_kv, m, d_k)
    else:
        q = q.view(B, n, h, d_k).transpose(1, 2)  # (B, h, n, d_k)
        k = k.view(B, m, h_kv, d_k).transpose(1, 2)  # (B, h_kv, m, d_k)
        v = v.view(B, m, h_kv, d_k).transpose(1, 2)  # (B, h_kv, m, d_k)
    if h_kv != h:
        if bug == "kv_heads_tiled":
            k, v = k.repeat(1, h // h_kv, 1, 1), v.repeat(1, h // h_kv, 1, 1)  # (B, h, m, d_k)
        else:
            k = k.repeat_interleave(h // h_kv, dim=1)  # (B, h, m, d_k)
            v = v.repeat_interleave(h // h_kv, dim=1)  # (B, h, m, d_k)
    scale = {"no_scale": 1.0, "scale_d_model": d_model**-0.5}.get(bug, d_k**-0.5)
    scores = (q @ k.transpose(-2, -1)) * scale  # (B, h, n, m)
    if mask is not None and bug != "mask_ignored":
        blocked = mask if bug == "mask_inverted" else ~mask
        scores = scores.masked_fill(blocked, torch.finfo(scores.dtype).min)
    dim = {"softmax_over_queries": -2, "softmax_over_heads": 1}.get(bug, -1)
    weights = torch.softmax(scores, dim=dim)  # (B, h, n, m)
    out = weights @ v  # (B, h, n, d_k)
    if bug == "merge_without_transpose":
        out = out.reshape(B, n, d_model)
    else:
        out = out.transpose(1, 2).reshape(B, n, d_model)  # (B, n, h, d_k) → (B, n, d_model)
    return out if bug == "no_output_projection" else w_o(out)  # (B, n, d_model)


def _multihead_cases(with_kv_heads: bool) -> list:
    """(case, d_model, h, h_kv, B, n, m, self_attention, mask) for check_multihead.

    No case has a query whose keys are all masked, so a learner who masks with -inf
    (NaN on such a row) is not failed for a choice the exercise leaves open.
    """
    pad = padding_mask([7, 4], 7)[:, None, None, :]  # (B, 1, 1, m)
    cases = [
        ("self-attention, B=2, n=m=5, d_model=16, h=4, no mask", 16, 4, 4, 2, 5, 5, True, None),
        ("cross-attention, B=2, n=3, m=6, d_model=16, h=2, no mask", 16, 2, 2, 2, 3, 6, False,
         None),
        ("cross-attention, B=2, n=4, m=7, d_model=16, h=8, a padding mask of shape (2, 1, 1, 7)",
         16, 8, 8, 2, 4, 7, False, pad),
        ("causal self-attention, B=1, n=m=6, d_model=12, h=3, causal_mask(6)", 12, 3, 3, 1, 6,
         6, True, causal_mask(6)),
        ("self-attention, B=2, n=m=4, d_model=8, h=1, no mask", 8, 1, 1, 2, 4, 4, True, None),
        ("cross-attention, B=1, n=3, m=7, d_model=16, h=4, causal_mask(3, 7)", 16, 4, 4, 1, 3,
         7, False, causal_mask(3, 7)),
    ]
    if with_kv_heads:
        cases += [
            ("grouped-query cross-attention, B=2, n=4, m=7, d_model=16, h=4, num_kv_heads=2, "
             "a padding mask of shape (2, 1, 1, 7)", 16, 4, 2, 2, 4, 7, False, pad),
            ("multi-query causal self-attention, B=1, n=m=6, d_model=12, h=3, num_kv_heads=1",
             12, 3, 1, 1, 6, 6, True, causal_mask(6)),
        ]
    return cases


def _learner_layers(module, d_model: int, d_kv: int, where: str) -> list:
    layers = []
    for name in _MHA_LAYERS:
        layer = getattr(module, name, None)
        weight = getattr(layer, "weight", None)
        if not isinstance(weight, torch.Tensor):
            raise AssertionError(
                f"{where} has no layer {name} with a weight; name the four projections "
                f"{', '.join(_MHA_LAYERS)} (nn.Linear) so the checker can set their weights"
            )
        is_kv = name in ("w_k", "w_v")
        out_features = d_kv if is_kv else d_model
        if tuple(weight.shape) != (out_features, d_model):
            want = "(num_kv_heads · d_k, d_model)" if is_kv else "(d_model, d_model)"
            raise AssertionError(
                f"{where}: {name}.weight has shape {tuple(weight.shape)} but should be "
                f"{(out_features, d_model)} = {want}"
            )
        layers.append(layer)
    return layers


def check_multihead(module_cls: Callable) -> None:
    """Check a learner's multi-head attention class against the package's MultiHeadAttention.

    ``module_cls(d_model, num_heads)`` must build an ``nn.Module`` with ``nn.Linear`` layers
    ``w_q``, ``w_k``, ``w_v`` and ``w_o``, called as ``module(query, key, value)`` or
    ``module(query, key, value, mask)`` (boolean, True = may attend) and returning the output
    (B, n, d_model), or ``(output, weights)`` with weights (B, h, n, m). If the constructor
    takes ``num_kv_heads``, grouped-query cases are checked too. The checker overwrites the
    learner's weights with seeded ones and copies them into the reference, and leaves the
    global random state as it found it.
    """
    try:
        with_kv_heads = "num_kv_heads" in inspect.signature(module_cls).parameters
    except (TypeError, ValueError):
        with_kv_heads = False
    with torch.random.fork_rng(devices=[]), torch.no_grad():
        g = torch.Generator().manual_seed(7)
        for case, d_model, h, h_kv, B, n, m, self_attn, mask in _multihead_cases(with_kv_heads):
            d_k = d_model // h
            kwargs = {"num_kv_heads": h_kv} if with_kv_heads else {}
            where = f"{getattr(module_cls, '__name__', 'your class')}({d_model}, {h}" + (
                f", num_kv_heads={h_kv})" if with_kv_heads else ")"
            )
            module = call_learner(module_cls, f"building {where}", d_model, h, **kwargs)
            if isinstance(module, torch.nn.Module):
                module.eval()  # no dropout while comparing
            layers = _learner_layers(module, d_model, h_kv * d_k, where)
            reference = MultiHeadAttention(d_model, h, h_kv, bias=True)
            ref_layers = [getattr(reference, name) for name in _MHA_LAYERS]
            for layer, ref_layer in zip(layers, ref_layers, strict=True):
                layer.weight.copy_(torch.randn(layer.weight.shape, generator=g) / d_model**0.5)
                ref_layer.weight.copy_(layer.weight)
                bias = getattr(layer, "bias", None)
                if isinstance(bias, torch.Tensor):
                    bias.copy_(0.1 * torch.randn(bias.shape, generator=g))
                    ref_layer.bias.copy_(bias)
                else:
                    ref_layer.bias.zero_()
            query = torch.randn(B, n, d_model, generator=g)
            key = query if self_attn else torch.randn(B, m, d_model, generator=g)
            value = query if self_attn else torch.randn(B, m, d_model, generator=g)
            expected, expected_weights = reference(query, key, value, mask)
            args = (query.clone(), key.clone(), value.clone()) + (() if mask is None else (mask,))
            result = call_learner(module, case, *args)
            got = result[0] if isinstance(result, (tuple, list)) else result
            if isinstance(got, torch.Tensor) and tuple(got.shape) == (B, h, n, d_k) and h > 1:
                raise AssertionError(
                    f"on {case}, the output has shape {tuple(got.shape)} = (B, h, n, d_k): the "
                    f"heads are not merged back; transpose to (B, n, h, d_k), reshape to "
                    f"(B, n, d_model) and apply w_o"
                )
            require_shape(got, expected.shape, case, "the output")
            if not torch.allclose(got, expected, rtol=1e-4, atol=1e-5):
                for bug, message in _MHA_BUGS.items():
                    slip = _mha_variant(layers, query, key, value, mask, h, h_kv, bug)
                    if torch.allclose(got, slip, rtol=1e-4, atol=1e-5):
                        raise AssertionError(f"on {case}, {message}")
                if torch.isnan(got).any():
                    raise AssertionError(f"on {case}, the output contains NaN")
                worst = (got - expected).abs().max().item()
                raise AssertionError(
                    f"on {case}, the output is off by up to {worst:.3g} from multi-head "
                    f"attention (Vaswani et al., 2017, section 3.2.2)"
                )
            if isinstance(result, (tuple, list)) and len(result) > 1:
                weights = require_shape(result[1], expected_weights.shape, case, "the weights")
                if not torch.allclose(weights, expected_weights, rtol=1e-4, atol=1e-6):
                    raise AssertionError(
                        f"on {case}, the output is right but the weights are not "
                        f"softmax(Q Kᵀ / √d_k) per head, shape (B, h, n, m)"
                    )


# --- check_attention ------------------------------------------------------------------------

# One line of feedback per known slip, keyed by the switch of ``_attention_variant`` that
# copies it. The softmax-axis slip is added per case, since which axes exist depends on it.
_ATTENTION_BUGS = {
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


def _attention_variant(q, k, v, mask, bug: str | None = None, dim: int = -1):
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
    (PyTorch returns NaN there) and the inverted mask has no fully masked query either.
    """
    n, m = 4, 6
    i = torch.arange(n).unsqueeze(1)  # (n, 1)
    j = torch.arange(m).unsqueeze(0)  # (1, m)
    window = (j - i - (m - n)).abs() <= 1  # (n, m): each query sees its neighbours only
    return [
        ("q (4, 4), k (4, 4), v (4, 3) (no batch dims, n = m = d_k, no mask)",
         (4, 4), (4, 4), (4, 3), None),
        ("q (3, 6), k (5, 6), v (5, 2) (no batch dims, no mask)",
         (3, 6), (5, 6), (5, 2), None),
        ("q (2, 3, 8), k (2, 5, 8), v (2, 5, 4) (batch dims, no mask)",
         (2, 3, 8), (2, 5, 8), (2, 5, 4), None),
        ("q (2, 2, 4, 6), k (2, 2, 7, 6), v (2, 2, 7, 5) (dims (B, h, n, d), no mask)",
         (2, 2, 4, 6), (2, 2, 7, 6), (2, 2, 7, 5), None),
        ("q (2, 4, 5), k (2, 6, 5), v (2, 6, 3) with a padding mask of shape (2, 1, 6)",
         (2, 4, 5), (2, 6, 5), (2, 6, 3), padding_mask([4, 2], 6).unsqueeze(1)),
        ("q (3, 4, 8), k (3, 6, 8), v (3, 6, 2) with a sliding-window mask of shape (4, 6)",
         (3, 4, 8), (3, 6, 8), (3, 6, 2), window),
        ("q (2, 2, 3, 4), k (2, 2, 5, 4), v (2, 2, 5, 6) with a padding mask of shape "
         "(2, 1, 1, 5)",
         (2, 2, 3, 4), (2, 2, 5, 4), (2, 2, 5, 6), padding_mask([3, 4], 5)[:, None, None, :]),
    ]


def _axis_name(dim: int, ndim: int) -> str:
    return "the queries" if dim == ndim - 2 else "a batch axis"


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
        _, expected_weights = _attention_variant(q, k, v, mask)
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
        if not torch.allclose(got.to(expected.dtype), expected, rtol=1e-4, atol=1e-5):
            bugs = [("softmax_dim", d, f"the softmax runs over the wrong axis (dim={d}, "
                     f"{_axis_name(d, q.ndim)}): it must run over the keys, dim=-1, so "
                     f"that each query's weights sum to 1") for d in range(q.ndim - 1)]
            bugs += [(bug, -1, message) for bug, message in _ATTENTION_BUGS.items()]
            for bug, dim, message in bugs:
                try:
                    slip, _ = _attention_variant(q, k, v, mask, bug, dim)
                except RuntimeError:
                    continue  # this slip cannot run on these shapes
                if slip.shape == got.shape and torch.allclose(
                    got.to(slip.dtype), slip, rtol=1e-4, atol=1e-5
                ):
                    raise AssertionError(f"on {case}, {message}")
            if torch.isnan(got).any():
                raise AssertionError(f"on {case}, the output contains NaN")
            worst = (got.to(expected.dtype) - expected).abs().max().item()
            raise AssertionError(
                f"on {case}, the output is off by up to {worst:.3g} from "
                f"softmax(q kᵀ / √d_k) v (Vaswani et al., 2017, equation 1)"
            )
        if isinstance(result, (tuple, list)) and len(result) > 1 and result[1] is not None:
            weights = require_shape(result[1], expected_weights.shape, case, "the weights")
            if not torch.allclose(
                weights.to(expected_weights.dtype), expected_weights, rtol=1e-4, atol=1e-6
            ):
                raise AssertionError(
                    f"on {case}, the output is right but the weights are not "
                    f"softmax(q kᵀ / √d_k) with masked keys at 0, shape (..., n, m)"
                )
        passed_without_batch = passed_without_batch or q.ndim == 2
