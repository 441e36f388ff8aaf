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


# --- check_pooling_weights (q01) ------------------------------------------------------------


def _pooling_variant(queries, keys, bandwidth, bug: str | None = None):
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


_POOLING_BUGS = {
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
        ("3 queries, 5 keys, bandwidth 0.5", torch.rand(3, generator=g) * 4,
         torch.rand(5, generator=g) * 4, 0.5),
        ("1 query, 4 keys, bandwidth 2.0", torch.tensor([1.5]),
         torch.tensor([0.0, 1.0, 2.5, 4.0]), 2.0),
        ("4 queries, 6 keys, one query far from every key, bandwidth 0.1",
         torch.tensor([0.0, 1.2, 2.6, 20.0]), torch.tensor([-3.0, 0.5, 1.0, 2.0, 6.0, 9.0]),
         0.1),
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
        if torch.allclose(got.to(expected.dtype), expected, atol=1e-5):
            continue
        for bug, message in _POOLING_BUGS.items():
            slip = _pooling_variant(queries, keys, bandwidth, bug)
            if torch.allclose(got.to(slip.dtype), slip, atol=1e-5, equal_nan=True):
                raise AssertionError(f"on {case}, {message}")
        if not torch.isfinite(got).all():
            raise AssertionError(
                f"on {case}, some weights are NaN or inf: exp of very negative scores "
                f"underflows to 0 and 0/0 follows; use torch.softmax, which subtracts the "
                f"largest score first"
            )
        worst = (got.to(expected.dtype) - expected).abs().max().item()
        raise AssertionError(
            f"on {case}, the weights are off by up to {worst:.3g} from "
            f"softmax(−(x − x_j)² / (2h²)) over the keys"
        )


# --- check_output_shape (q02) ---------------------------------------------------------------


def _shape_cases() -> list:
    """(case, q shape, k shape, v shape): valid ones first, then two that must fail."""
    return [
        ("q (3, 4), k (5, 4), v (5, 2)", (3, 4), (5, 4), (5, 2)),
        ("q (2, 6, 8), k (2, 6, 8), v (2, 6, 8) (self-attention)", (2, 6, 8), (2, 6, 8),
         (2, 6, 8)),
        ("q (2, 3, 4, 6), k (2, 3, 7, 6), v (2, 3, 7, 5)", (2, 3, 4, 6), (2, 3, 7, 6),
         (2, 3, 7, 5)),
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
            got = fn(q_shape, k_shape, v_shape)
        except ValueError:
            if expected is None:
                continue
            raise AssertionError(
                f"on {case}, your function raised ValueError, but these shapes are fine: "
                f"the output is {expected}"
            ) from None
        except NotImplementedError:
            raise
        except Exception as err:
            raise AssertionError(
                f"your function raised {type(err).__name__} on {case}: {err}"
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
            ((*lead, n, m), "that is the shape of the weights (..., n, m): the output is "
                            "weights @ v, with d_v columns"),
            ((*lead, m, d_v), "the output has one row per query (n), not per key (m)"),
            ((n, d_v), "the leading (batch) dims are missing: keep q's leading dims"),
            ((*lead, d_v, n), "the output is transposed: it is (..., n, d_v)"),
        ]
        for wrong, message in mistakes:
            if got == tuple(wrong):
                raise AssertionError(f"on {case}, you returned {got}: {message}")
        raise AssertionError(f"on {case}, you returned {got}, but the output is {expected}")


# --- check_attend_one (q03) -----------------------------------------------------------------


def _attend_one_variant(q, k, v, bug: str | None = None):
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


_ATTEND_ONE_BUGS = {
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
        if torch.allclose(got.to(expected.dtype), expected, rtol=1e-4, atol=1e-5):
            continue
        if not torch.isfinite(got).all():
            raise AssertionError(
                f"on {case}, the output holds NaN or inf: exp of a large score overflows; "
                f"subtract the largest score from every score before exp (softmax does)"
            )
        for bug, message in _ATTEND_ONE_BUGS.items():
            slip = _attend_one_variant(q, k, v, bug)
            if torch.allclose(got.to(slip.dtype), slip, rtol=1e-4, atol=1e-5):
                raise AssertionError(f"on {case}, {message}")
        worst = (got.to(expected.dtype) - expected).abs().max().item()
        raise AssertionError(
            f"on {case}, the output is off by up to {worst:.3g} from "
            f"Σ_j softmax_j(q·k_j / √d_k) v_j"
        )


# --- check_cross_attention ------------------------------------------------------------------

_CROSS_BUGS = {
    "kv_from_decoder": (
        "the keys and values come from the decoder (target): in cross-attention only the "
        "queries come from the decoder; keys and values come from the encoder output, memory"
    ),
    "kv_from_decoder_causal": (
        "this is masked decoder self-attention (Q, K and V from the target, causal mask); "
        "cross-attention takes keys and values from memory, with the source padding mask"
    ),
    "q_from_encoder": (
        "the roles are swapped: the queries must come from the decoder (target) and the "
        "keys and values from memory, i.e. mha(target, memory, memory, mask)"
    ),
    "no_padding_mask": (
        "the source padding is not masked: memory positions at or beyond src_lengths[b] "
        "must get zero weight (padding_mask(src_lengths, m) shaped to (B, 1, 1, m))"
    ),
    "mask_inverted": (
        "the padding mask is read the wrong way round: True means may attend, so the real "
        "source tokens are the True positions"
    ),
    "causal_mask": (
        "a causal mask is applied to cross-attention: every target position may see the "
        "whole (unpadded) source, which was fully available before decoding started"
    ),
}


def _cross_variant(mha, target, memory, src_lengths, bug: str | None = None):
    """Cross-attention with one known slip switched on (None: no slip)."""
    n, m = target.shape[1], memory.shape[1]
    pad = padding_mask(src_lengths, m)[:, None, None, :]  # (B, 1, 1, m)
    if bug == "kv_from_decoder":
        return mha(target, target, target)
    if bug == "kv_from_decoder_causal":
        return mha(target, target, target, causal_mask(n))
    if bug == "q_from_encoder":
        return mha(memory, target, target)
    mask = {
        "no_padding_mask": None,
        "mask_inverted": ~pad,
        "causal_mask": pad & causal_mask(n, m),
    }.get(bug, pad)
    return mha(target, memory, memory, mask)  # (B, n, d_model), (B, h, n, m)


def check_cross_attention(fn: Callable) -> None:
    """Check ``fn(mha, target, memory, src_lengths)``: the decoder's cross-attention.

    ``mha`` is a :class:`~attention_qa.multihead.MultiHeadAttention`; ``target`` (B, n, d_model)
    is the decoder's input to the layer, ``memory`` (B, m, d_model) the encoder's output and
    ``src_lengths`` a list of B valid source lengths (the rest of memory is padding). ``fn``
    returns the output (B, n, d_model), or ``(output, weights)`` with weights (B, h, n, m).
    The reference follows Vaswani et al. (2017), section 3.2.3: queries from the decoder, keys
    and values from the encoder output. The global random state is left untouched.
    """
    cases = [
        ("B=2, n=3 target tokens, m=6 memory tokens, src_lengths=[6, 4], h=2", 2, 3, 6, [6, 4], 2),
        ("B=2, n=5, m=4, src_lengths=[3, 4], h=4", 2, 5, 4, [3, 4], 4),
        ("B=2, n=m=5, src_lengths=[5, 2], h=2", 2, 5, 5, [5, 2], 2),
        ("B=1, n=4, m=7, src_lengths=[5], h=1", 1, 4, 7, [5], 1),
    ]
    d_model = 8
    with torch.random.fork_rng(devices=[]), torch.no_grad():
        torch.manual_seed(13)
        for case, B, n, m, lengths, h in cases:
            mha = MultiHeadAttention(d_model, h).eval()
            target = torch.randn(B, n, d_model)
            memory = torch.randn(B, m, d_model)
            expected, expected_weights = _cross_variant(mha, target, memory, lengths)
            result = call_learner(fn, case, mha, target.clone(), memory.clone(), list(lengths))
            got = result[0] if isinstance(result, (tuple, list)) else result
            if isinstance(got, torch.Tensor) and n != m and tuple(got.shape) == (B, m, d_model):
                raise AssertionError(
                    f"on {case}, the output has shape {tuple(got.shape)} = (B, m, d_model), one "
                    f"row per memory token: {_CROSS_BUGS['q_from_encoder']}"
                )
            require_shape(got, expected.shape, case, "the output")
            if not torch.allclose(got, expected, rtol=1e-4, atol=1e-5):
                for bug, message in _CROSS_BUGS.items():
                    slip, _ = _cross_variant(mha, target, memory, lengths, bug)
                    if slip.shape == got.shape and torch.allclose(got, slip, rtol=1e-4, atol=1e-5):
                        raise AssertionError(f"on {case}, {message}")
                if torch.isnan(got).any():
                    raise AssertionError(f"on {case}, the output contains NaN")
                worst = (got - expected).abs().max().item()
                raise AssertionError(
                    f"on {case}, the output is off by up to {worst:.3g} from "
                    f"mha(target, memory, memory, source padding mask)"
                )
            if isinstance(result, (tuple, list)) and len(result) > 1 and result[1] is not None:
                weights = result[1]
                if (isinstance(weights, torch.Tensor) and n != m
                        and tuple(weights.shape) == (B, h, n, n)):
                    raise AssertionError(
                        f"on {case}, the weights have shape {tuple(weights.shape)} = "
                        f"(B, h, n, n): {_CROSS_BUGS['kv_from_decoder']}"
                    )
                weights = require_shape(weights, expected_weights.shape, case, "the weights")
                if not torch.allclose(weights, expected_weights, rtol=1e-4, atol=1e-6):
                    raise AssertionError(
                        f"on {case}, the output is right but the weights are not those of "
                        f"mha(target, memory, memory, mask), shape (B, h, n, m)"
                    )


# --- check_attention_mask (q07) -------------------------------------------------------------


def _mask_variant(lengths, n: int, causal: bool, bug: str | None = None) -> torch.Tensor:
    """The (B, n, n) mask, True = may attend, with one known slip switched on."""
    keys = padding_mask(lengths, n)  # (B, n)
    if bug == "padding_on_queries":
        allowed = keys.unsqueeze(2).expand(-1, n, n)  # hides rows instead of columns
    elif bug == "padding_ignored":
        allowed = torch.ones(len(lengths), n, n, dtype=torch.bool)
    else:
        allowed = keys.unsqueeze(1).expand(-1, n, n)  # (B, n, n): column j hidden past length
    if causal and bug != "causal_ignored":
        diagonal = -1 if bug == "diagonal_blocked" else 0
        allowed = allowed & torch.ones(n, n, dtype=torch.bool).tril(diagonal)
    return ~allowed if bug == "inverted" else allowed


_MASK_BUGS = {
    "inverted": (
        "the mask is inverted: True must mean may attend (the convention of "
        "F.scaled_dot_product_attention), so real tokens and the past are True"
    ),
    "padding_on_queries": (
        "the padding hides queries, not keys: mask[b, i, j] must be False when key j is "
        "padding (j ≥ lengths[b]), whatever the query i"
    ),
    "padding_ignored": "the padding is ignored: keys at j ≥ lengths[b] must be False",
    "causal_ignored": "the causal part is missing: with causal=True, key j > i must be False",
    "diagonal_blocked": (
        "the diagonal is blocked: a position may attend to itself, so the causal part is "
        "j ≤ i (tril with diagonal=0), not j < i"
    ),
}


def check_attention_mask(fn: Callable) -> None:
    """Check ``fn(lengths, n, causal) -> (B, n, n)`` boolean, True = may attend.

    Query i of sequence b may see key j when j < lengths[b] and, if causal, j ≤ i.
    """
    cases = [
        ("lengths=[3, 5], n=5, causal=False", [3, 5], 5, False),
        ("lengths=[3, 5], n=5, causal=True", [3, 5], 5, True),
        ("lengths=[2], n=4, causal=True", [2], 4, True),
        ("lengths=[6, 1, 4], n=6, causal=False", [6, 1, 4], 6, False),
    ]
    for case, lengths, n, causal in cases:
        expected = _mask_variant(lengths, n, causal)
        got = call_learner(fn, case, list(lengths), n, causal)
        got = require_shape(got, expected.shape, case, "the mask")
        if got.dtype != torch.bool:
            raise AssertionError(
                f"on {case}, the mask has dtype {got.dtype}; return a boolean tensor "
                f"(True = may attend)"
            )
        if torch.equal(got, expected):
            continue
        for bug, message in _MASK_BUGS.items():
            if torch.equal(got, _mask_variant(lengths, n, causal, bug)):
                raise AssertionError(f"on {case}, {message}")
        wrong = (got != expected).nonzero()[0].tolist()
        raise AssertionError(
            f"on {case}, the mask is wrong at [b, i, j] = {wrong}: it should be "
            f"{bool(expected[tuple(wrong)])}"
        )


# --- check_shift_right (q08) ----------------------------------------------------------------


def check_shift_right(fn: Callable) -> None:
    """Check ``fn(targets, bos) -> decoder inputs``: (B, T) → (B, T), ``[bos, y_0 … y_{T-2}]``."""
    cases = [
        ("targets [[5, 6, 7, 8]], bos=1", torch.tensor([[5, 6, 7, 8]]), 1),
        ("targets [[4, 9, 2], [3, 3, 7]], bos=0", torch.tensor([[4, 9, 2], [3, 3, 7]]), 0),
        ("targets [[6]], bos=2", torch.tensor([[6]]), 2),
    ]
    for case, targets, bos in cases:
        B, T = targets.shape
        start = torch.full((B, 1), bos, dtype=targets.dtype)
        expected = torch.cat([start, targets[:, :-1]], dim=1)  # (B, T)
        got = call_learner(fn, case, targets.clone(), bos)
        if isinstance(got, torch.Tensor) and got.ndim == 2 and got.shape[0] == B:
            if got.shape[1] == T + 1 and torch.equal(got[:, :-1], expected):
                raise AssertionError(
                    f"on {case}, the last target is kept: drop it, so the inputs have T={T} "
                    f"tokens like the targets (y_{T - 1} is only ever predicted, never read)"
                )
            if got.shape[1] == T - 1 and torch.equal(got, targets[:, :-1]):
                raise AssertionError(
                    f"on {case}, the start token bos is missing: the inputs begin with bos"
                )
        got = require_shape(got, expected.shape, case, "the decoder inputs")
        if torch.equal(got, expected):
            continue
        mistakes = [
            (targets.roll(1, dims=1),
             "the last target wraps round to the front (roll): the first input is bos, so "
             "position 0 cannot see the answer"),
            (torch.cat([targets[:, 1:], start], dim=1),
             "the targets are shifted left, not right: input t must be y_{t-1}, with bos "
             "first"),
            (targets, "the targets are not shifted: each position would read its own answer"),
        ]
        for wrong, message in mistakes:
            if torch.equal(got, wrong):
                raise AssertionError(f"on {case}, {message}")
        raise AssertionError(
            f"on {case}, got {got.tolist()} but the decoder inputs are {expected.tolist()}"
        )


# --- check_greedy_decode (q09) --------------------------------------------------------------


def check_greedy_decode(fn: Callable) -> None:
    """Check ``fn(model, tokens, max_new_tokens) -> (B, T + max_new_tokens)`` greedy tokens.

    Compared with ``TinyTransformerLM.generate`` on a seeded tiny model; the global random
    state is left as it was.
    """
    from attention_qa.models import TinyTransformerLM

    with torch.random.fork_rng(devices=[]), torch.no_grad():
        torch.manual_seed(11)
        model = TinyTransformerLM(vocab_size=13, d_model=16, num_heads=2, num_layers=2,
                                  max_len=16).eval()
        g = torch.Generator().manual_seed(12)
        cases = [
            ("a prompt of shape (1, 3), 5 new tokens", torch.randint(13, (1, 3), generator=g), 5),
            ("a prompt of shape (2, 4), 6 new tokens", torch.randint(13, (2, 4), generator=g), 6),
            ("a prompt of shape (1, 1), 1 new token", torch.randint(13, (1, 1), generator=g), 1),
        ]
        for case, prompt, steps in cases:
            expected = model.generate(prompt, steps, use_cache=False)
            B, T = prompt.shape
            got = call_learner(fn, case, model, prompt.clone(), steps)
            if isinstance(got, torch.Tensor) and tuple(got.shape) == (B, steps):
                raise AssertionError(
                    f"on {case}, only the new tokens came back: return the prompt followed "
                    f"by them, shape {(B, T + steps)}"
                )
            if isinstance(got, torch.Tensor) and got.ndim == 2 and got.shape[0] == B and (
                got.shape[1] == T + steps - 1 and torch.equal(got, expected[:, :-1])
            ):
                raise AssertionError(f"on {case}, one step is missing: append {steps} tokens")
            got = require_shape(got, expected.shape, case, "the tokens")
            if torch.equal(got, expected):
                continue
            if not torch.equal(got[:, :T], prompt):
                raise AssertionError(f"on {case}, the prompt was changed: keep it as it is")
            first = prompt
            for _ in range(steps):
                nxt = model(first)[:, 0].argmax(-1, keepdim=True)  # (B, 1)
                first = torch.cat([first, nxt], dim=1)
            if torch.equal(got, first):
                raise AssertionError(
                    f"on {case}, the next token is read from position 0: the prediction "
                    f"for the next token is at the last position, logits[:, -1]"
                )
            wrong = (got != expected).nonzero()[0].tolist()
            raise AssertionError(
                f"on {case}, token {wrong[1]} of row {wrong[0]} is {int(got[tuple(wrong)])} but "
                f"greedy decoding gives {int(expected[tuple(wrong)])}: take the argmax of "
                f"the last position's logits at every step"
            )


# --- check_additive_scores (q05) ------------------------------------------------------------

_ADDITIVE_BUGS = {
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


def _additive_variant(q, k, W_q, W_k, w_v, bug: str | None = None):
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
        expected = _additive_variant(q, k, W_q, W_k, w_v)  # (..., n, m)
        got = call_learner(fn, case, q.clone(), k.clone(), W_q.clone(), W_k.clone(), w_v.clone())
        if isinstance(got, torch.Tensor) and got.shape != expected.shape:
            if tuple(got.shape) == (*expected.shape[:-2], m, q_shape[-2]):
                raise AssertionError(f"on {case}, {_ADDITIVE_BUGS['scores_transposed']}")
            if got.ndim == expected.ndim + 1 and got.shape[:-1] == expected.shape:
                raise AssertionError(
                    f"on {case}, the scores have shape {tuple(got.shape)}: the hidden axis "
                    f"(..., n, m, d_hidden) must be reduced by the dot product with w_v"
                )
        got = require_shape(got, expected.shape, case, "the scores")
        if torch.allclose(got.to(expected.dtype), expected, atol=1e-8):
            continue
        for bug, message in _ADDITIVE_BUGS.items():
            try:
                slip = _additive_variant(q, k, W_q, W_k, w_v, bug)
            except RuntimeError:
                continue  # this slip cannot run on these shapes
            if slip.shape == got.shape and torch.allclose(got.to(slip.dtype), slip, atol=1e-8):
                raise AssertionError(f"on {case}, {message}")
        worst = (got.to(expected.dtype) - expected).abs().max().item()
        raise AssertionError(
            f"on {case}, the scores are off by up to {worst:.3g} from w_vᵀ tanh(W_q q + W_k k)"
        )


# --- q15: the sinusoidal positional encoding ------------------------------------------------

_SINUSOIDAL_BUGS = {
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


def _sinusoidal_variant(num_positions: int, d_model: int, bug: str | None = None):
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
        expected = _sinusoidal_variant(num_positions, d_model)
        got = call_learner(fn, case, num_positions, d_model)
        got = require_shape(got, expected.shape, case, "the encoding")
        got = got.to(torch.float64)
        if torch.allclose(got, expected, atol=1e-4):
            continue
        for bug, message in _SINUSOIDAL_BUGS.items():
            if torch.allclose(got, _sinusoidal_variant(num_positions, d_model, bug), atol=1e-4):
                raise AssertionError(f"on {case}, {message}")
        worst = (got - expected).abs().max().item()
        raise AssertionError(
            f"on {case}, the encoding is off by up to {worst:.3g} from "
            f"PE[pos, 2i] = sin(pos / 10000^(2i/d_model)), PE[pos, 2i+1] = cos(…)"
        )


# --- check_attention_flops (q11) --------------------------------------------------------------

def _flops_variant(batch: int, n: int, m: int, d: int, h: int, bug: str | None = None) -> float:
    """Matrix-product FLOPs of multi-head attention with one known slip (None: no slip)."""
    d_k = d // h
    projections = 2 * batch * (2 * n * d * d + 2 * m * d * d)  # W_Q, W_O on n; W_K, W_V on m
    if bug == "no_output_projection":
        projections -= 2 * batch * n * d * d
    if bug == "all_on_n":
        projections = 2 * batch * 4 * n * d * d
    attention = 2 * batch * 2 * n * m * d  # Q Kᵀ and weights × V, all heads together
    if bug == "per_head_d_k_squared":
        attention = 2 * batch * 2 * n * m * d_k  # one head's width counted once
    if bug == "full_width_heads":
        projections, attention = h * projections, h * attention
    if bug == "scores_only":
        attention //= 2
    total = projections + attention
    if bug == "multiply_adds":
        total //= 2
    return total


_FLOPS_BUGS = {
    "multiply_adds": (
        "you counted multiply-adds: a multiply-add is 2 FLOPs (one multiply, one add), so a "
        "(p × q) @ (q × r) product costs 2·p·q·r FLOPs"
    ),
    "full_width_heads": (
        "the count grows h-fold: each head works in d_k = d_model / h, so the h heads together "
        "cost what one full-width head costs"
    ),
    "per_head_d_k_squared": (
        "the attention products are counted for one head only: Q Kᵀ and weights × V cost "
        "2·B·n·m·d_k per head, times h heads = 2·B·n·m·d_model each"
    ),
    "no_output_projection": "the output projection W_O (2·B·n·d_model²) is missing",
    "scores_only": "only Q Kᵀ is counted: the weights × V product costs as much again",
    "all_on_n": (
        "every projection is counted on the n queries: W_K and W_V run on the m keys and "
        "values (2·B·m·d_model² each)"
    ),
}


def check_attention_flops(fn: Callable) -> None:
    """Check ``fn(batch, n, m, d_model, num_heads) -> FLOPs`` of one multi-head attention.

    The reference is ``attention_qa.multihead.attention_flops``: matrix products only,
    a multiply-add counting as 2 FLOPs, as ``torch.utils.flop_counter.FlopCounterMode``
    counts them. The answer must not depend on ``num_heads``.
    """
    from attention_qa.multihead import attention_flops

    cases = [
        ("batch=1, n=m=4, d_model=8, num_heads=4", 1, 4, 4, 8, 4),
        ("batch=2, n=3, m=5, d_model=12, num_heads=3 (cross-attention)", 2, 3, 5, 12, 3),
        ("batch=3, n=m=16, d_model=64, num_heads=8", 3, 16, 16, 64, 8),
        ("batch=1, n=7, m=2, d_model=32, num_heads=1", 1, 7, 2, 32, 1),
    ]
    for case, batch, n, m, d, h in cases:
        expected = attention_flops(batch, n, m, d)
        got = call_learner(fn, case, batch, n, m, d, h)
        if isinstance(got, torch.Tensor) and got.numel() == 1:
            got = got.item()
        if isinstance(got, bool) or not isinstance(got, (int, float)):
            raise AssertionError(f"on {case}, the result should be a number, got "
                                 f"{type(got).__name__}")
        if got == expected:
            continue
        for bug, message in _FLOPS_BUGS.items():
            if got == _flops_variant(batch, n, m, d, h, bug) and (bug != "full_width_heads"
                                                                  or h > 1):
                raise AssertionError(f"on {case}, {message}")
        raise AssertionError(
            f"on {case}, got {got:,} FLOPs but one multi-head attention costs {expected:,}: "
            f"projections 2·B·(2n + 2m)·d_model², plus Q Kᵀ and weights × V at "
            f"2·B·n·m·d_model each"
        )


# --- check_repeat_kv ------------------------------------------------------------------------

_REPEAT_KV_BUGS = {
    "tiled": (
        "the K/V heads are tiled (repeat): query head i must use K/V head "
        "i // (num_heads // num_kv_heads), so each K/V head is repeated for its group "
        "consecutively (repeat_interleave), not cycled as i % num_kv_heads"
    ),
}


def _repeat_kv_variant(kv: torch.Tensor, num_heads: int, bug: str | None = None):
    group = num_heads // kv.shape[1]
    if bug == "tiled":
        return kv.repeat(1, group, 1, 1)  # (B, h, m, d_k), heads in the wrong order
    return kv.repeat_interleave(group, dim=1)  # (B, h, m, d_k)


def check_repeat_kv(fn: Callable) -> None:
    """Check ``fn(kv, num_heads)``: (B, h_kv, m, d_k) → (B, num_heads, m, d_k) for GQA.

    Query head i must read K/V head ``i // (num_heads // h_kv)``, the grouping of PyTorch's
    ``scaled_dot_product_attention(..., enable_gqa=True)`` (Ainslie et al., 2023). The
    global random state is left untouched.
    """
    g = torch.Generator().manual_seed(14)
    cases = [
        ("kv of shape (2, 2, 5, 3), num_heads=4 (GQA, groups of 2)", (2, 2, 5, 3), 4),
        ("kv of shape (1, 2, 4, 2), num_heads=6 (GQA, groups of 3)", (1, 2, 4, 2), 6),
        ("kv of shape (2, 1, 3, 4), num_heads=4 (MQA: one K/V head)", (2, 1, 3, 4), 4),
        ("kv of shape (1, 3, 4, 2), num_heads=3 (MHA: nothing to repeat)", (1, 3, 4, 2), 3),
    ]
    for case, shape, num_heads in cases:
        kv = torch.randn(shape, generator=g)
        expected = _repeat_kv_variant(kv, num_heads)
        got = call_learner(fn, case, kv.clone(), num_heads)
        if isinstance(got, torch.Tensor) and tuple(got.shape) == tuple(kv.shape) != tuple(
            expected.shape
        ):
            raise AssertionError(
                f"on {case}, the result has the input's shape {tuple(got.shape)}: repeat the "
                f"K/V heads along dim 1 up to num_heads={num_heads}"
            )
        if isinstance(got, torch.Tensor) and got.ndim == 4 and got.shape[1] == shape[1] and (
            got.shape[2] != shape[2]
        ):
            raise AssertionError(
                f"on {case}, the result has shape {tuple(got.shape)}: the repetition went "
                f"along the token axis; repeat along the head axis, dim=1"
            )
        require_shape(got, expected.shape, case)
        if torch.equal(got, expected):
            continue
        for bug, message in _REPEAT_KV_BUGS.items():
            if torch.equal(got, _repeat_kv_variant(kv, num_heads, bug)):
                raise AssertionError(f"on {case}, {message}")
        raise AssertionError(
            f"on {case}, the result differs from kv.repeat_interleave(num_heads // h_kv, dim=1)"
        )


# --- check_linear_attention, check_online_softmax, check_previous_token_score (q20–q22) -----

def _linear_attention_variant(q, k, v, bug: str | None = None):
    """Non-causal linear attention with φ = elu + 1, or with one known slip switched on."""
    import torch.nn.functional as F

    if bug == "softmax":
        return torch.softmax(q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5, dim=-1) @ v
    if bug == "scaled_q":
        q = q / q.shape[-1] ** 0.5
    plus = 0.0 if bug == "no_plus_one" else 1.0
    phi_q, phi_k = F.elu(q) + plus, F.elu(k) + plus  # (..., n, d_k), (..., m, d_k)
    out = phi_q @ (phi_k.transpose(-2, -1) @ v)  # (..., n, d_v)
    if bug == "no_normalisation":
        return out
    den = phi_q @ phi_k.sum(dim=-2).unsqueeze(-1)  # (..., n, 1)
    return out / den


_LINEAR_BUGS = {
    "no_normalisation": (
        "the output is not normalised: divide φ(q_i)ᵀ(Σ_j φ(k_j) v_jᵀ) by φ(q_i)ᵀ Σ_j φ(k_j), "
        "so that the weights of each query sum to 1"
    ),
    "no_plus_one": (
        "the feature map is elu(x), not elu(x) + 1: without the + 1 features can be negative, "
        "and so can the weights and the denominator"
    ),
    "scaled_q": (
        "q is divided by √d_k: linear attention has no softmax to temper, so φ is applied to "
        "q and k as they are"
    ),
    "softmax": (
        "this is softmax attention, not linear attention: replace exp(q·k/√d_k) by "
        "φ(q)·φ(k) with φ = elu + 1 and group the product as φ(Q) (φ(K)ᵀ V)"
    ),
}


def check_linear_attention(fn: Callable) -> None:
    """Check ``fn(q, k, v)`` against non-causal linear attention with φ(x) = elu(x) + 1.

    q: (..., n, d_k), k: (..., m, d_k), v: (..., m, d_v) → (..., n, d_v)
    (``attention_qa.efficient.linear_attention``, Katharopoulos et al., 2020).
    """
    g = torch.Generator().manual_seed(20)
    shapes = [
        ("q (4, 8), k (4, 8), v (4, 8)", (4, 8), (4, 8), (4, 8)),
        ("q (2, 3, 4), k (2, 6, 4), v (2, 6, 5)", (2, 3, 4), (2, 6, 4), (2, 6, 5)),
        ("q (1, 2, 5, 16), k (1, 2, 9, 16), v (1, 2, 9, 3)", (1, 2, 5, 16), (1, 2, 9, 16),
         (1, 2, 9, 3)),
    ]
    for case, qs, ks, vs in shapes:
        q, k, v = (torch.randn(s, generator=g, dtype=torch.float64) for s in (qs, ks, vs))
        expected = _linear_attention_variant(q, k, v)
        got = call_learner(fn, case, q.clone(), k.clone(), v.clone())
        got = require_shape(got, expected.shape, case, "the output")
        if torch.allclose(got.to(expected.dtype), expected, atol=1e-8):
            continue
        for bug, message in _LINEAR_BUGS.items():
            slip = _linear_attention_variant(q, k, v, bug)
            if torch.allclose(got.to(slip.dtype), slip, atol=1e-8):
                raise AssertionError(f"on {case}, {message}")
        worst = (got.to(expected.dtype) - expected).abs().max().item()
        raise AssertionError(
            f"on {case}, the output is off by up to {worst:.3g} from linear attention "
            "with φ = elu + 1"
        )


def _online_softmax_variant(scores, block_size: int, bug: str | None = None):
    """Block-by-block softmax over the last dim, or with one known slip switched on."""
    m = scores.shape[-1]
    run_max = scores.new_full((*scores.shape[:-1], 1), float("-inf"))
    run_sum = scores.new_zeros((*scores.shape[:-1], 1))
    for start in range(0, m, block_size):
        block = scores[..., start : start + block_size]
        new_max = torch.maximum(run_max, block.amax(dim=-1, keepdim=True))
        fresh = torch.exp(block - new_max).sum(dim=-1, keepdim=True)
        if bug == "no_rescale":
            run_sum = run_sum + fresh
        elif bug == "last_block_only":
            run_sum = fresh
        else:
            run_sum = run_sum * torch.exp(run_max - new_max) + fresh
        run_max = new_max
    return torch.exp(scores - run_max) / run_sum


_ONLINE_BUGS = {
    "no_rescale": (
        "the running sum is not rescaled when the max grows: multiply it by "
        "exp(old max − new max) before adding the new block's exponentials"
    ),
    "last_block_only": (
        "the sum keeps only the last block: add each block's exponentials to the running sum "
        "instead of replacing it"
    ),
}


def check_online_softmax(fn: Callable) -> None:
    """Check ``fn(scores, block_size)``: softmax over the last dim, normaliser by blocks.

    It must equal ``torch.softmax(scores, dim=-1)`` for shapes (m,), (n, m), (B, n, m), block
    sizes that do and do not divide m, and scores too large for a plain exp. It must not
    call softmax itself: the checker disables ``torch.softmax`` while it runs.
    """
    from unittest import mock

    g = torch.Generator().manual_seed(21)
    big = torch.randn(3, 9, generator=g, dtype=torch.float64) * 500
    rising = torch.arange(10, dtype=torch.float64) * 3  # the max keeps moving to later blocks
    cases = [
        ("scores of shape (7,), block_size 2", torch.randn(7, generator=g, dtype=torch.float64),
         2),
        ("rising scores 0, 3, …, 27, block_size 3", rising, 3),
        ("scores of shape (2, 3, 8), block_size 4",
         torch.randn(2, 3, 8, generator=g, dtype=torch.float64), 4),
        ("scores of shape (4, 5), block_size 1",
         torch.randn(4, 5, generator=g, dtype=torch.float64), 1),
        ("scores of shape (3, 9) as large as ±1500, block_size 4", big, 4),
        ("scores of shape (2, 6), block_size 10 (one block)",
         torch.randn(2, 6, generator=g, dtype=torch.float64), 10),
    ]

    def forbidden(*args, **kwargs):
        raise AssertionError(
            "your function calls softmax: compute the running max and sum block by block"
        )

    for case, scores, block_size in cases:
        expected = torch.softmax(scores, dim=-1)
        with mock.patch.object(torch, "softmax", forbidden), \
                mock.patch.object(torch.nn.functional, "softmax", forbidden), \
                mock.patch.object(torch.Tensor, "softmax", forbidden):
            try:
                got = fn(scores.clone(), block_size)
            except AssertionError:
                raise
            except NotImplementedError:
                raise
            except Exception as err:
                raise AssertionError(
                    f"your function raised {type(err).__name__} on {case}: {err}"
                ) from None
        got = require_shape(got, expected.shape, case, "the softmax")
        if not torch.isfinite(got).all():
            raise AssertionError(
                f"on {case}, the result has inf or NaN: exp overflowed. Subtract the running "
                "max before exponentiating"
            )
        if torch.allclose(got.to(expected.dtype), expected, atol=1e-10):
            continue
        for bug, message in _ONLINE_BUGS.items():
            slip = _online_softmax_variant(scores, block_size, bug)
            if torch.allclose(got.to(slip.dtype), slip, atol=1e-10):
                raise AssertionError(f"on {case}, {message}")
        worst = (got.to(expected.dtype) - expected).abs().max().item()
        raise AssertionError(f"on {case}, the result is off by up to {worst:.3g} from softmax")


_PREVIOUS_TOKEN_BUGS = {
    "self": "this is the weight on the token itself, w[i, i]: the previous token is w[i, i − 1]",
    "next": (
        "this is the weight on the next token, w[i, i + 1] (rows and columns swapped): "
        "query i is row i, and its previous token is column i − 1"
    ),
    "divide_by_n": (
        "the mean counts query 0, which has no previous token: average over the n − 1 "
        "queries i = 1 … n − 1"
    ),
}


def _previous_token_variant(weights, bug: str | None = None):
    n = weights.shape[-1]
    if bug == "self":
        return weights.diagonal(dim1=-2, dim2=-1).mean(dim=-1)
    if bug == "next":
        return weights.diagonal(offset=1, dim1=-2, dim2=-1).mean(dim=-1)
    sub = weights.diagonal(offset=-1, dim1=-2, dim2=-1)  # (..., n − 1)
    return sub.sum(dim=-1) / n if bug == "divide_by_n" else sub.mean(dim=-1)


def check_previous_token_score(fn: Callable) -> None:
    """Check ``fn(weights)``: (..., n, n) maps → (...) mean over i ≥ 1 of w[i, i − 1]."""
    g = torch.Generator().manual_seed(22)

    def maps(*shape):
        return torch.softmax(torch.randn(*shape, generator=g, dtype=torch.float64), dim=-1)

    shift = torch.zeros(5, 5, dtype=torch.float64)
    shift[0, 0] = 1.0
    shift[torch.arange(1, 5), torch.arange(4)] = 1.0  # a perfect previous-token head
    cases = [
        ("one map of shape (6, 6)", maps(6, 6)),
        ("a perfect previous-token head of shape (5, 5)", shift),
        ("maps of shape (2, 3, 4, 4)", maps(2, 3, 4, 4)),
    ]
    for case, weights in cases:
        expected = _previous_token_variant(weights)
        got = call_learner(fn, case, weights.clone())
        if isinstance(got, float) and expected.ndim == 0:
            got = torch.tensor(got, dtype=torch.float64)
        got = require_shape(got, expected.shape, case, "the score")
        if torch.allclose(got.to(expected.dtype), expected, atol=1e-10):
            continue
        for bug, message in _PREVIOUS_TOKEN_BUGS.items():
            slip = _previous_token_variant(weights, bug)
            if torch.allclose(got.to(slip.dtype), slip, atol=1e-10):
                raise AssertionError(f"on {case}, {message}")
        worst = (got.to(expected.dtype) - expected).abs().max().item()
        raise AssertionError(
            f"on {case}, the score is off by up to {worst:.3g} from the mean of w[i, i − 1]"
        )


# --- q17: layer normalisation ---------------------------------------------------------------

_LAYER_NORM_BUGS = {
    "unbiased": (
        "the variance is the unbiased one (divided by d_model − 1); LayerNorm divides by d_model "
        "(var(..., unbiased=False) or correction=0)"
    ),
    "no_mean": (
        "the mean is not subtracted: x / √(mean(x²) + eps) is RMSNorm, not LayerNorm"
    ),
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


def _layer_norm_variant(x, weight, bias, eps, bug: str | None = None):
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
        got = got.to(torch.float64)
        if torch.allclose(got, expected, atol=1e-6):
            continue
        for bug, message in _LAYER_NORM_BUGS.items():
            if torch.allclose(got, _layer_norm_variant(x, weight, bias, eps, bug), atol=1e-6):
                raise AssertionError(f"on {case}, {message}")
        worst = (got - expected).abs().max().item()
        raise AssertionError(
            f"on {case}, the output is off by up to {worst:.3g} from "
            f"(x − mean) / √(var + eps) · weight + bias over the last axis"
        )


# --- q18: the position-wise feed-forward network -------------------------------------------

_FEED_FORWARD_BUGS = {
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


def _feed_forward_variant(x, w1, b1, w2, b2, bug: str | None = None):
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
        expected = _feed_forward_variant(x, w1, b1, w2, b2)
        got = call_learner(fn, case, x.clone(), w1.clone(), b1.clone(), w2.clone(), b2.clone())
        got = require_shape(got, expected.shape, case, "the output")
        got = got.to(torch.float64)
        if torch.allclose(got, expected, atol=1e-8):
            continue
        for bug, message in _FEED_FORWARD_BUGS.items():
            if torch.allclose(got, _feed_forward_variant(x, w1, b1, w2, b2, bug), atol=1e-8):
                raise AssertionError(f"on {case}, {message}")
        # Mixing positions: a change at one position must not move another position's output.
        moved = x.clone()
        moved[..., 0, :] += 1.0
        again = call_learner(fn, case, moved, w1.clone(), b1.clone(), w2.clone(), b2.clone())
        if isinstance(again, torch.Tensor) and again.shape == got.shape:
            if not torch.allclose(again[..., 1:, :].to(torch.float64), got[..., 1:, :]):
                raise AssertionError(
                    f"on {case}, changing position 0 changed the output at other positions: "
                    f"the FFN must treat every position on its own"
                )
        worst = (got - expected).abs().max().item()
        raise AssertionError(
            f"on {case}, the output is off by up to {worst:.3g} from max(0, x w1 + b1) w2 + b2"
        )


# --- q16: token embeddings scaled by √d_model -----------------------------------------------

_EMBEDDING_BUGS = {
    "no_scale": "the rows are not scaled: multiply the looked-up rows by √d_model",
    "scale_d": "the rows are multiplied by d_model; the factor is √d_model",
    "divide": "the rows are divided by √d_model; they must be multiplied by it",
    "scale_vocab": "the rows are scaled by √vocab_size; the factor is √d_model (weight.shape[1])",
}


def _embedding_variant(tokens, weight, bug: str | None = None):
    vocab_size, d_model = weight.shape
    factor = {
        None: d_model**0.5, "no_scale": 1.0, "scale_d": float(d_model),
        "divide": d_model**-0.5, "scale_vocab": vocab_size**0.5,
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
        expected = _embedding_variant(tokens, weight)
        got = call_learner(fn, case, tokens.clone(), weight.clone())
        got = require_shape(got, expected.shape, case, "the embeddings")
        got = got.to(torch.float64)
        if torch.allclose(got, expected, atol=1e-8):
            continue
        for bug, message in _EMBEDDING_BUGS.items():
            if torch.allclose(got, _embedding_variant(tokens, weight, bug), atol=1e-8):
                raise AssertionError(f"on {case}, {message}")
        raise AssertionError(
            f"on {case}, the embeddings are not the rows weight[tokens] times √d_model"
        )


# --- q19: FLOPs of a self-attention and a recurrent layer -----------------------------------

_LAYER_FLOPS_BUGS = {
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


def _layer_flops_variant(n: int, d: int, bug: str | None = None) -> tuple[int, int]:
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
        if got == _layer_flops_variant(n, d):
            continue
        for bug, message in _LAYER_FLOPS_BUGS.items():
            if got == _layer_flops_variant(n, d, bug):
                raise AssertionError(f"on {case}, {message}")
        raise AssertionError(
            f"on {case}, got {got} but expected {_layer_flops_variant(n, d)}: "
            f"self-attention 4·n²·d, recurrent 4·n·d²"
        )
