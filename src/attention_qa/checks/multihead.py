"""Checkers for multi-head attention: MHA (q10, q12), its FLOPs (q11), cross-attention (q13),
repeating K/V heads for GQA (q14).
"""

from __future__ import annotations

import inspect
from functools import partial
from typing import Callable

import torch

from attention_qa.checks.common import NAN_SCORES, call_learner, close, diagnose, require_shape
from attention_qa.masks import causal_mask, padding_mask
from attention_qa.multihead import MultiHeadAttention

# --- check_multihead ------------------------------------------------------------------------

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
            got = result[0] if isinstance(result, (tuple, list)) else result
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
            require_shape(got, expected.shape, case, "the output")
            diagnose(
                got, expected, case, "the output",
                "multi-head attention (Vaswani et al., 2017, section 3.2.2)",
                MHA_SLIPS, partial(mha_variant, layers, query, key, value, ref_mask, h, h_kv),
                nan_hint=NAN_SCORES,
            )
            if isinstance(result, (tuple, list)) and len(result) > 1:
                weights = require_shape(result[1], expected_weights.shape, case, "the weights")
                if not close(weights, expected_weights):
                    raise AssertionError(
                        f"on {case}, the output is right but the weights are not "
                        f"softmax(Q Kᵀ / √d_k) per head, shape (B, h, n, m)"
                    )


# --- check_attention_flops (q11) --------------------------------------------------------------


def flops_variant(batch: int, n: int, m: int, d: int, h: int, bug: str | None = None) -> float:
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


FLOPS_SLIPS = {
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
            raise AssertionError(
                f"on {case}, the result should be a number, got {type(got).__name__}"
            )
        if got == expected:
            continue
        for bug, message in FLOPS_SLIPS.items():
            if got == flops_variant(batch, n, m, d, h, bug) and (
                bug != "full_width_heads" or h > 1
            ):
                raise AssertionError(f"on {case}, {message}")
        raise AssertionError(
            f"on {case}, got {got:,} FLOPs but one multi-head attention costs {expected:,}: "
            f"projections 2·B·(2n + 2m)·d_model², plus Q Kᵀ and weights × V at "
            f"2·B·n·m·d_model each"
        )


# --- check_cross_attention ------------------------------------------------------------------

CROSS_SLIPS = {
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


def cross_variant(mha, target, memory, src_lengths, bug: str | None = None):
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


def _cross_output_variant(mha, target, memory, src_lengths, bug: str) -> torch.Tensor:
    return cross_variant(mha, target, memory, src_lengths, bug)[0]


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
            expected, expected_weights = cross_variant(mha, target, memory, lengths)
            result = call_learner(fn, case, mha, target.clone(), memory.clone(), list(lengths))
            got = result[0] if isinstance(result, (tuple, list)) else result
            if isinstance(got, torch.Tensor) and n != m and tuple(got.shape) == (B, m, d_model):
                raise AssertionError(
                    f"on {case}, the output has shape {tuple(got.shape)} = (B, m, d_model), one "
                    f"row per memory token: {CROSS_SLIPS['q_from_encoder']}"
                )
            require_shape(got, expected.shape, case, "the output")
            diagnose(
                got, expected, case, "the output",
                "mha(target, memory, memory, source padding mask)",
                CROSS_SLIPS, partial(_cross_output_variant, mha, target, memory, lengths),
                nan_hint=NAN_SCORES,
            )
            if isinstance(result, (tuple, list)) and len(result) > 1 and result[1] is not None:
                weights = result[1]
                if (
                    isinstance(weights, torch.Tensor)
                    and n != m
                    and tuple(weights.shape) == (B, h, n, n)
                ):
                    raise AssertionError(
                        f"on {case}, the weights have shape {tuple(weights.shape)} = "
                        f"(B, h, n, n): {CROSS_SLIPS['kv_from_decoder']}"
                    )
                weights = require_shape(weights, expected_weights.shape, case, "the weights")
                if not close(weights, expected_weights):
                    raise AssertionError(
                        f"on {case}, the output is right but the weights are not those of "
                        f"mha(target, memory, memory, mask), shape (B, h, n, m)"
                    )


# --- check_repeat_kv ------------------------------------------------------------------------

REPEAT_KV_SLIPS = {
    "tiled": (
        "the K/V heads are tiled (repeat): query head i must use K/V head "
        "i // (num_heads // num_kv_heads), so each K/V head is repeated for its group "
        "consecutively (repeat_interleave), not cycled as i % num_kv_heads"
    ),
}


def repeat_kv_variant(kv: torch.Tensor, num_heads: int, bug: str | None = None):
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
        expected = repeat_kv_variant(kv, num_heads)
        got = call_learner(fn, case, kv.clone(), num_heads)
        if isinstance(got, torch.Tensor) and tuple(got.shape) == tuple(kv.shape) != tuple(
            expected.shape
        ):
            raise AssertionError(
                f"on {case}, the result has the input's shape {tuple(got.shape)}: repeat the "
                f"K/V heads along dim 1 up to num_heads={num_heads}"
            )
        if (
            isinstance(got, torch.Tensor)
            and got.ndim == 4
            and got.shape[1] == shape[1]
            and (got.shape[2] != shape[2])
        ):
            raise AssertionError(
                f"on {case}, the result has shape {tuple(got.shape)}: the repetition went "
                f"along the token axis; repeat along the head axis, dim=1"
            )
        require_shape(got, expected.shape, case)
        if torch.equal(got, expected):
            continue
        for bug, message in REPEAT_KV_SLIPS.items():
            if torch.equal(got, repeat_kv_variant(kv, num_heads, bug)):
                raise AssertionError(f"on {case}, {message}")
        raise AssertionError(
            f"on {case}, the result differs from kv.repeat_interleave(num_heads // h_kv, dim=1)"
        )
