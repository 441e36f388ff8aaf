"""The checker of q10's exercise: ``check_multihead``."""

from __future__ import annotations

import inspect
from functools import partial
from typing import Callable

import torch

from attention_qa.checks.common import (
    NAN_SCORES,
    as_answer,
    call_learner,
    check_weights,
    diagnose,
    require_shape,
)
from attention_qa.masks import causal_mask, padding_mask
from attention_qa.multihead import MultiHeadAttention

_MHA_LAYERS = ("w_q", "w_k", "w_v", "w_o")


# One line of feedback per known slip, keyed by the switch of ``mha_variant`` that copies it.
MHA_SLIPS = {
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


def mha_variant(layers, query, key, value, mask, h: int, h_kv: int, bug: str | None = None):
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


def _multihead_cases(with_kv_heads: bool, mask_layout: str) -> list:
    """(case, d_model, h, h_kv, B, n, m, self_attention, mask) for check_multihead.

    ``mask_layout`` "(B, h, n, m)": the padding mask has shape (B, 1, 1, m), broadcastable to
    every head's scores at once. "(B, n, m)": every mask has shape (n, m) or (B, n, m), the
    shapes a loop over heads can apply to one head's (B, n, m) scores directly. No case has a
    query whose keys are all masked, so a learner who masks with -inf (NaN on such a row) is
    not failed for a choice the exercise leaves open, and the padding mask read the wrong way
    round still leaves every query a key (lengths 6 and 4 of 7), so that slip is named.
    """
    if mask_layout == "(B, n, m)":
        pad = padding_mask([6, 4], 7)[:, None, :].expand(2, 4, 7).clone()  # (B, n, m)
    else:
        pad = padding_mask([6, 4], 7)[:, None, None, :]  # (B, 1, 1, m)
    pad_text = f"a padding mask of shape {tuple(pad.shape)}"
    cases = [
        ("self-attention, B=2, n=m=5, d_model=16, h=4, no mask", 16, 4, 4, 2, 5, 5, True, None),
        ("cross-attention, B=2, n=3, m=6, d_model=16, h=2, no mask", 16, 2, 2, 2, 3, 6, False,
         None),
        (f"cross-attention, B=2, n=4, m=7, d_model=16, h=8, {pad_text}", 16, 8, 8, 2, 4, 7,
         False, pad),
        ("causal self-attention, B=1, n=m=6, d_model=12, h=3, causal_mask(6) of shape (6, 6)",
         12, 3, 3, 1, 6, 6, True, causal_mask(6)),
        ("self-attention, B=2, n=m=4, d_model=8, h=1, no mask", 8, 1, 1, 2, 4, 4, True, None),
        ("cross-attention, B=1, n=3, m=7, d_model=16, h=4, a non-square mask of shape (3, 7)",
         16, 4, 4, 1, 3, 7, False, causal_mask(3, 7)),
    ]
    if with_kv_heads:
        cases += [
            (f"grouped-query cross-attention, B=2, n=4, m=7, d_model=16, h=4, num_kv_heads=2, "
             f"{pad_text}", 16, 4, 2, 2, 4, 7, False, pad),
            ("multi-query causal self-attention, B=1, n=m=6, d_model=12, h=3, num_kv_heads=1, "
             "causal_mask(6) of shape (6, 6)", 12, 3, 1, 1, 6, 6, True, causal_mask(6)),
        ]
    return cases


MASK_LAYOUTS = ("(B, h, n, m)", "(B, n, m)")


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


def check_multihead(module_cls: Callable, mask_layout: str = "(B, h, n, m)") -> None:
    """Check a learner's multi-head attention class against the package's MultiHeadAttention.

    ``module_cls(d_model, num_heads)`` must build an ``nn.Module`` with ``nn.Linear`` layers
    ``w_q``, ``w_k``, ``w_v`` and ``w_o``, called as ``module(query, key, value)`` or
    ``module(query, key, value, mask)`` (boolean, True = may attend) and returning the output
    (B, n, d_model), or ``(output, weights)`` with weights (B, h, n, m). If the constructor
    takes ``num_kv_heads``, grouped-query cases are checked too.

    The masks passed: none, ``causal_mask(6)`` of shape (6, 6), a non-square (3, 7) mask, and
    a padding mask whose shape ``mask_layout`` sets: "(B, h, n, m)" passes (B, 1, 1, m),
    broadcastable to all heads' scores (B, h, n, m); "(B, n, m)" passes (B, n, m), the shape
    of one head's scores in a loop over heads. The checker overwrites the
    learner's weights with seeded ones and copies them into the reference, and leaves the
    global random state as it found it.
    """
    if mask_layout not in MASK_LAYOUTS:
        raise ValueError(f"mask_layout is {mask_layout!r} but should be one of {MASK_LAYOUTS}")
    try:
        with_kv_heads = "num_kv_heads" in inspect.signature(module_cls).parameters
    except (TypeError, ValueError):
        with_kv_heads = False
    with torch.random.fork_rng(devices=[]), torch.no_grad():
        g = torch.Generator().manual_seed(7)
        cases = _multihead_cases(with_kv_heads, mask_layout)
        for case, d_model, h, h_kv, B, n, m, self_attn, mask in cases:
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
            # The reference and the slips attend all heads at once: a (B, n, m) mask gets a
            # head axis.
            ref_mask = mask[:, None] if mask is not None and mask.ndim == 3 else mask
            expected, expected_weights = reference(query, key, value, ref_mask)
            args = (query.clone(), key.clone(), value.clone()) + (() if mask is None else (mask,))
            result = call_learner(module, case, *args)
            got = as_answer(result, case, "the output", output_only=True)
            if isinstance(got, torch.Tensor) and tuple(got.shape) == (B, h, n, d_k) and h > 1:
                raise AssertionError(
                    f"on {case}, the output has shape {tuple(got.shape)} = (B, h, n, d_k): the "
                    f"heads are not merged back; transpose to (B, n, h, d_k), reshape to "
                    f"(B, n, d_model) and apply w_o"
                )
            if (
                mask is not None
                and isinstance(got, torch.Tensor)
                and tuple(got.shape) != tuple(expected.shape)
            ):
                raise AssertionError(
                    f"on {case}, the output has shape {tuple(got.shape)} but should be "
                    f"{tuple(expected.shape)}; the mask has shape {tuple(mask.shape)}: check "
                    f"that it broadcasts to the scores it masks, (B, h, n, m) when all heads "
                    f"are scored at once, (B, n, m) for one head in a loop"
                )
            got = require_shape(got, expected.shape, case, "the output")
            diagnose(
                got, expected, case, "the output",
                "multi-head attention (Vaswani et al., 2017, section 3.2.2)",
                MHA_SLIPS, partial(mha_variant, layers, query, key, value, ref_mask, h, h_kv),
                nan_hint=NAN_SCORES,
            )
            check_weights(
                result, expected_weights, case,
                "softmax(Q Kᵀ / √d_k) per head, shape (B, h, n, m)",
            )
