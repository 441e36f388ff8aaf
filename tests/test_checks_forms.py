"""Every checker tried with every form of a right answer and with wrong answers.

For each chapter's exercise: its reference solution (the ``solution`` cell, read from the
notebook), at least two independent right implementations, each also returned in the other
forms the checker must take (a NumPy array, a list, a Python or NumPy number, an (output,
None) pair, computed in float32 from the float64 inputs, with float32 steps inside a float64
computation); then wrong answers: those the reviews of 2026-11-27 named, the checker's own
slip models (each must be named), and others. Every right form passes; every wrong one fails,
also when returned in another form.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from dataclasses import dataclass, field
from functools import cache, partial
from itertools import pairwise
from pathlib import Path
from typing import Callable

import numpy as np
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from attention_qa import checks
from attention_qa.checks import (
    q01,
    q03,
    q05,
    q06,
    q07,
    q11,
    q13,
    q15,
    q16,
    q17,
    q18,
    q19,
    q20,
    q21,
    q22,
    q23,
    q24,
    q25,
    q26,
    q27,
    q28,
    q29,
    q30,
    q31,
    q32,
    q33,
    q34,
    q35,
    q37,
    q38,
    q39,
    q40,
    q41,
    q42,
    q43,
    q44,
    q45,
    q46,
)
from tests.test_checks_dtypes import (
    merge_by_softmax_of_lses,
    nucleus_by_hand,
    online_softmax_by_blocks,
    rope_by_pairs,
    selective_scan_by_cumulative_sums,
    top_k_gates_by_masking,
)
from tests.test_checks_q40 import by_flat_vector, by_torch_utils
from tests.test_checks_q41 import by_hand, by_nll_loss
from tests.test_checks_q43 import in_numpy as q43_in_numpy
from tests.test_checks_q43 import naive_without_zero_guard as q43_no_zero_guard
from tests.test_checks_q43 import row_by_row as q43_row_by_row
from tests.test_checks_q43 import with_the_package as q43_with_the_package
from tests.test_checks_q44 import by_event_times as q44_by_event_times
from tests.test_checks_q44 import by_slots as q44_by_slots
from tests.test_checks_q45 import by_einsum as q45_by_einsum
from tests.test_checks_q45 import in_numpy as q45_in_numpy
from tests.test_checks_q45 import with_sdpa as q45_with_sdpa
from tests.test_checks_q46 import by_a_loop, by_numpy
from tests.test_checks_vision import by_masked_sdpa

BOOK = Path(__file__).resolve().parents[1] / "book"
PREAMBLE = "import math\nimport torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n" \
           "from attention_qa.masks import padding_mask\n"


@cache
def solution(chapter: str):
    """The function or class the chapter's ``solution`` cell defines."""
    path = next(BOOK.glob(f"{chapter}_*.ipynb"))
    cells = json.loads(path.read_text())["cells"]
    (cell,) = [c for c in cells if "solution" in c.get("metadata", {}).get("tags", [])]
    namespace: dict = {}
    exec(PREAMBLE + "".join(cell["source"]), namespace)  # noqa: S102
    (name,) = [line.split()[1].split("(")[0].rstrip(":")
               for line in "".join(cell["source"]).splitlines()
               if line.startswith(("def ", "class "))]
    return namespace[name]


# --- the forms ------------------------------------------------------------------------------


def _map(x, f):
    """``f`` applied to every tensor in a result (a tensor, or tuples and lists of them)."""
    if isinstance(x, torch.Tensor):
        return f(x)
    if isinstance(x, (tuple, list)):
        return type(x)(_map(item, f) for item in x)
    return x


def _cast_inputs(args, kwargs, dtype):
    def cast(x):
        return x.to(dtype) if isinstance(x, torch.Tensor) and x.is_floating_point() else x
    return [cast(a) for a in args], {k: cast(v) for k, v in kwargs.items()}


def as_numpy(fn):
    return lambda *a, **k: _map(fn(*a, **k), lambda t: t.detach().numpy())


def as_list(fn):
    return lambda *a, **k: _map(fn(*a, **k), lambda t: t.tolist())


def in_float32(fn):
    """Computed in float32 from float64 inputs: a float32 answer."""
    def learner(*args, **kwargs):
        args, kwargs = _cast_inputs(args, kwargs, torch.float32)
        return fn(*args, **kwargs)
    return learner


def float32_inside(fn):
    """float32 steps inside a float64 computation: a float64 answer with float32's error."""
    def learner(*args, **kwargs):
        dtypes = [a.dtype for a in args if isinstance(a, torch.Tensor) and a.is_floating_point()]
        args, kwargs = _cast_inputs(args, kwargs, torch.float32)
        out = fn(*args, **kwargs)
        back = dtypes[0] if dtypes else torch.float64
        return _map(out, lambda t: t.to(back) if t.is_floating_point() else t)
    return learner


def with_none(fn):
    """The output in an (output, None) pair, as F.scaled_dot_product_attention-based code
    returns it."""
    def learner(*args, **kwargs):
        out = fn(*args, **kwargs)
        return (out[0] if isinstance(out, tuple) else out), None
    return learner


def output_only(fn):
    return lambda *a, **k: fn(*a, **k)[0]


def as_numpy_number(fn):
    return lambda *a: np.asarray(fn(*a))[()]


def as_tensor_number(fn):
    return lambda *a: torch.tensor(fn(*a))


def as_float(fn):
    return lambda *a: float(fn(*a))


FLOAT_FORMS = {"numpy": as_numpy, "list": as_list, "float32": in_float32,
               "float32 inside": float32_inside}
EXACT_FORMS = {"numpy": as_numpy, "list": as_list}
NUMBER_FORMS = {"numpy number": as_numpy_number, "0-d tensor": as_tensor_number,
                "float": as_float}


@dataclass
class Exercise:
    check: Callable
    right: dict  # name → a right answer
    forms: dict  # name → a wrapper making another form of a right answer
    wrong: dict = field(default_factory=dict)  # name → (a wrong answer, words its message holds)
    slips: tuple = ()  # (variant, SLIPS): each slip model's answer must get its own message


def slip_learners(variant, slips, drop=()):
    return {f"slip {bug}": ((lambda *a, bug=bug, **k: variant(*a, **k, bug=bug)), message[:40])
            for bug, message in slips.items() if bug not in drop}


# --- independent right answers, and wrong ones ---------------------------------------------


def jacobian_loop(p):
    flat = p.reshape(-1, p.shape[-1])
    rows = [torch.diag(r) - torch.outer(r, r) for r in flat]
    return torch.stack(rows).reshape(*p.shape, p.shape[-1])


def jacobian_autograd(p):
    flat = p.reshape(-1, p.shape[-1])
    # softmax's Jacobian at logits log p is diag(p) − p pᵀ
    rows = [torch.autograd.functional.jacobian(lambda z: torch.softmax(z, -1), r.log())
            for r in flat]
    return torch.stack(rows).reshape(*p.shape, p.shape[-1])


def jacobian_2d_only(p):  # right up to one leading dim, as the q04 review describes
    if p.ndim == 1:
        return torch.diag(p) - torch.outer(p, p)
    return torch.stack([torch.diag(r) - torch.outer(r, r) for r in p])


def shape_by_torch(q, k, v):
    from attention_qa.attention import scaled_dot_product_attention as sdpa
    if q[-1] != k[-1] or k[-2] != v[-2]:
        raise ValueError("shapes disagree")
    return tuple(sdpa(torch.zeros(q), torch.zeros(k), torch.zeros(v))[0].shape)


def shape_2d_indices(q, k, v):  # the wrong answer of the q02 review
    if q[1] != k[1]:
        raise ValueError
    if k[0] != v[0]:
        raise ValueError
    return (*q[:-1], v[-1])


def shape_by_lists(q, k, v):
    if list(q)[-1] != list(k)[-1]:
        raise ValueError("d_k")
    if list(k)[-2] != list(v)[-2]:
        raise ValueError("m")
    return list(q[:-1]) + [v[-1]]


def attend_one_loop(q, K, V):
    scores = [sum(float(a) * float(b) for a, b in zip(q, key, strict=True)) / math.sqrt(len(q))
              for key in K]
    top = max(scores)
    w = [math.exp(s - top) for s in scores]
    total = sum(w)
    return [sum(wi * float(V[i, j]) for i, wi in enumerate(w)) / total
            for j in range(V.shape[1])]


def layer_norm_var_mean(x, weight, bias, eps):
    var, mean = torch.var_mean(x, dim=-1, keepdim=True, correction=0)
    return (x - mean) * torch.rsqrt(var + eps) * weight + bias


def layer_norm_dim2(x, weight, bias, eps):  # hard-coded dim=2: the q17 review's wrong answer
    mean = x.mean(dim=2, keepdim=True)
    var = x.var(dim=2, unbiased=False, keepdim=True)
    return (x - mean) / torch.sqrt(var + eps) * weight + bias


def rms_by_rsqrt(x, weight, eps):
    return x * torch.rsqrt(x.square().mean(-1, keepdim=True) + eps) * weight


def rope_hf(x, positions, base=10000.0):
    """Hugging Face's way: inv_freq in float32 (PyTorch's default), rotate_half on halves of
    each pair laid out as (even, odd) interleaved, the q25 review's right answer."""
    d = x.shape[-1]
    inv_freq = 1.0 / (base ** (torch.arange(0, d, 2).float() / d))  # float32
    angles = positions[:, None].float() * inv_freq  # (n, d/2) float32
    cos = angles.cos().repeat_interleave(2, -1)
    sin = angles.sin().repeat_interleave(2, -1)
    pairs = x.unflatten(-1, (d // 2, 2))
    rotated = torch.stack([-pairs[..., 1], pairs[..., 0]], -1).flatten(-2)
    return x * cos + rotated * sin


def rope_complex(x, positions, base=10000.0):
    d = x.shape[-1]
    theta = base ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)
    turn = torch.polar(torch.ones(len(positions), d // 2, dtype=torch.float64),
                       positions.double()[:, None] * theta)
    z = torch.view_as_complex(x.double().unflatten(-1, (d // 2, 2)).contiguous())
    return torch.view_as_real(z * turn).flatten(-2).to(x.dtype)


def online_logsumexp_blocks(scores, block_size):
    """Per block: logsumexp, folded into a running log-sum; M and L from it."""
    lse = torch.full(scores.shape[:-1], -math.inf, dtype=scores.dtype)
    run_max = torch.full(scores.shape[:-1], -math.inf, dtype=scores.dtype)
    trace = []
    for block in scores.split(block_size, dim=-1):
        lse = torch.logaddexp(lse, torch.logsumexp(block, dim=-1))
        run_max = torch.maximum(run_max, block.amax(-1))
        trace.append((run_max, torch.exp(lse - run_max)))
    return torch.exp(scores - lse.unsqueeze(-1)), trace


def online_with_sanity_check(scores, block_size):  # the q21 review's right answer
    result, trace = online_softmax_by_blocks(scores, block_size)
    assert torch.allclose(result.sum(-1), torch.ones((), dtype=result.dtype), atol=1e-2)
    return result, trace


def online_prefix_recompute(scores, block_size):
    trace = []
    for end in range(block_size, scores.shape[-1] + block_size, block_size):
        seen = scores[..., :end]
        run_max = seen.amax(-1)
        trace.append((run_max, torch.exp(seen - run_max[..., None]).sum(-1)))
    m, s = trace[-1]
    return torch.exp(scores - m[..., None]) / s[..., None], trace


def phi(x):
    return F.elu(x) + 1


def linear_by_einsum(q, k, v):
    kv = torch.einsum("...md,...me->...de", phi(k), v)
    z = phi(k).sum(-2)
    return torch.einsum("...nd,...de->...ne", phi(q), kv) / torch.einsum(
        "...nd,...d->...n", phi(q), z).unsqueeze(-1)


def linear_by_recurrence(q, k, v):
    state = q.new_zeros(*q.shape[:-2], q.shape[-1], v.shape[-1])
    z = q.new_zeros(*q.shape[:-2], q.shape[-1])
    for j in range(k.shape[-2]):
        state = state + phi(k[..., j, :]).unsqueeze(-1) * v[..., j, :].unsqueeze(-2)
        z = z + phi(k[..., j, :])
    return (phi(q) @ state) / (phi(q) @ z.unsqueeze(-1))


def linear_per_query(q, k, v):  # the q20 review: the n × m weights one query at a time
    rows = []
    for i in range(q.shape[-2]):
        w = phi(q[..., i : i + 1, :]) @ phi(k).transpose(-2, -1)
        rows.append((w @ v) / w.sum(-1, keepdim=True))
    return torch.cat(rows, -2)


def linear_chunked(q, k, v, chunk=8):  # the q20 review: in chunks of 8 query rows
    rows = []
    for i in range(0, q.shape[-2], chunk):
        w = phi(q[..., i : i + chunk, :]) @ phi(k).transpose(-2, -1)
        rows.append((w @ v) / w.sum(-1, keepdim=True))
    return torch.cat(rows, -2)


def linear_quadratic(q, k, v):
    w = phi(q) @ phi(k).transpose(-2, -1)
    return (w @ v) / w.sum(-1, keepdim=True)


def pair_by_counter(word_counts):
    counts = Counter()
    for word, count in word_counts.items():
        for pair in pairwise(word):
            counts[pair] += count
    if not counts or max(counts.values()) < 2:
        return None
    return min(counts, key=lambda p: (-counts[p], p))


def pair_by_numpy(word_counts):
    pairs = [(a, b, c) for w, c in word_counts.items() for a, b in pairwise(w)]
    if not pairs:
        return None
    arr = np.array(pairs, dtype=np.int64)
    keys, inverse = np.unique(arr[:, :2], axis=0, return_inverse=True)
    totals = np.bincount(inverse.ravel(), weights=arr[:, 2])
    if totals.max() < 2:
        return None
    return keys[np.flatnonzero(totals == totals.max())[0]]  # np.unique sorts the pairs


def pair_string_ties(word_counts):  # the q31 review: ties broken by string order
    counts = Counter()
    for word, count in word_counts.items():
        for pair in pairwise(word):
            counts[pair] += count
    if not counts or max(counts.values()) < 2:
        return None
    top = max(counts.values())
    return sorted((p for p in counts if counts[p] == top), key=str)[0]


def pair_dense_bytes(word_counts):  # the q31 review: a 256 × 256 table
    table = np.zeros((256, 256), dtype=np.int64)
    for word, count in word_counts.items():
        for a, b in pairwise(word):
            table[a, b] += count
    if table.max() < 2:
        return None
    return tuple(int(i) for i in np.unravel_index(table.argmax(), table.shape))


class LoopHeadsMHA(nn.Module):
    """Per head, F.scaled_dot_product_attention, returning (output, None)."""

    def __init__(self, d_model, num_heads):
        super().__init__()
        self.h, self.d_k = num_heads, d_model // num_heads
        self.w_q, self.w_k = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)
        self.w_v, self.w_o = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)

    def forward(self, query, key, value, mask=None):
        q, k, v = self.w_q(query), self.w_k(key), self.w_v(value)
        outs = []
        for i in range(self.h):
            cols = slice(i * self.d_k, (i + 1) * self.d_k)
            m = None if mask is None else (
                mask[:, min(i, mask.shape[1] - 1)] if mask.ndim == 4 else mask)
            outs.append(F.scaled_dot_product_attention(q[..., cols], k[..., cols],
                                                       v[..., cols], attn_mask=m))
        return self.w_o(torch.cat(outs, -1)), None


class SdpaMHA(LoopHeadsMHA):
    """All heads at once through F.scaled_dot_product_attention, (output, None)."""

    def forward(self, query, key, value, mask=None):
        B, n, d = query.shape

        def split(x):
            return x.unflatten(-1, (self.h, self.d_k)).transpose(1, 2)

        m = mask[:, None] if mask is not None and mask.ndim == 3 else mask
        out = F.scaled_dot_product_attention(split(self.w_q(query)), split(self.w_k(key)),
                                             split(self.w_v(value)), attn_mask=m)
        return self.w_o(out.transpose(1, 2).reshape(B, n, d)), None


class OutputOnlyMHA(SdpaMHA):
    def forward(self, *args, **kwargs):
        return super().forward(*args, **kwargs)[0]


class NoScaleMHA(SdpaMHA):
    """Keys doubled: the scores are twice what they should be."""

    def forward(self, query, key, value, mask=None):
        return super().forward(query, key * 2.0, value, mask)


class NoTransposeMHA(SdpaMHA):
    """The heads reshaped back to (B, n, d_model) without the transpose."""

    def forward(self, query, key, value, mask=None):
        B, n, d = query.shape

        def split(x):
            return x.unflatten(-1, (self.h, self.d_k)).transpose(1, 2)

        m = mask[:, None] if mask is not None and mask.ndim == 3 else mask
        out = F.scaled_dot_product_attention(split(self.w_q(query)), split(self.w_k(key)),
                                             split(self.w_v(value)), attn_mask=m)
        return self.w_o(out.reshape(B, n, d)), None


class NoOutputProjectionMHA(SdpaMHA):
    """w_o left out."""

    def forward(self, query, key, value, mask=None):
        w_o, self.w_o = self.w_o, nn.Identity()
        try:
            return super().forward(query, key, value, mask)
        finally:
            self.w_o = w_o


class SoftmaxOverQueriesMHA(SdpaMHA):
    """The softmax over the queries (dim=-2)."""

    def forward(self, query, key, value, mask=None):
        B, n, d = query.shape

        def split(x):
            return x.unflatten(-1, (self.h, self.d_k)).transpose(1, 2)

        q, k, v = split(self.w_q(query)), split(self.w_k(key)), split(self.w_v(value))
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_k)
        if mask is not None:
            scores = scores.masked_fill(~(mask[:, None] if mask.ndim == 3 else mask), -math.inf)
        out = torch.softmax(scores, dim=-2).nan_to_num() @ v
        return self.w_o(out.transpose(1, 2).reshape(B, n, d)), None


def cross_by_sdpa(mha, target, memory, src_lengths):
    keep = torch.arange(memory.shape[1]) < torch.as_tensor(src_lengths)[:, None]
    return mha(target, memory, memory, keep[:, None, None, :])[0], None


def ids_as_float(fn):
    return lambda *a: fn(*a).float()


def scan_by_loop_over_state(x, delta, A, B, C, D):
    batch, L, d = x.shape
    h = torch.zeros(batch, d, A.shape[1], dtype=x.dtype)
    out = []
    for t in range(L):
        dA = torch.exp(torch.einsum("bd,dn->bdn", delta[:, t], A))
        dBx = torch.einsum("bd,bn->bdn", delta[:, t] * x[:, t], B[:, t])
        h = dA * h + dBx
        out.append(torch.einsum("bdn,bn->bd", h, C[:, t]))
    y = torch.stack(out, 1)
    return y if D is None else y + D * x


def merge_by_max(out_a, lse_a, out_b, lse_b):
    top = torch.maximum(lse_a, lse_b)
    wa, wb = torch.exp(lse_a - top), torch.exp(lse_b - top)
    return ((wa.unsqueeze(-1) * out_a + wb.unsqueeze(-1) * out_b) / (wa + wb).unsqueeze(-1),
            top + torch.log(wa + wb))


def window_by_loops(q, k, v, window):
    B, h, w, _ = q.shape
    out = torch.empty(B, h, w, v.shape[-1], dtype=q.dtype)
    for r in range(0, h, window):
        for c in range(0, w, window):
            qs = q[:, r : r + window, c : c + window].flatten(1, 2)
            ks = k[:, r : r + window, c : c + window].flatten(1, 2)
            vs = v[:, r : r + window, c : c + window].flatten(1, 2)
            att = torch.softmax(qs @ ks.transpose(-2, -1) / math.sqrt(q.shape[-1]), -1) @ vs
            out[:, r : r + window, c : c + window] = att.unflatten(1, (window, window))
    return out


# --- the checker review of 2026-11-27 (P1–P6): its reproducers ----------------------------


def greedy_row_0_for_all(model, tokens, max_new_tokens):  # P1: row 0's token for every row
    with torch.no_grad():
        for _ in range(max_new_tokens):
            nxt = model(tokens)[0, -1].argmax()
            tokens = torch.cat([tokens, nxt.repeat(tokens.shape[0], 1)], dim=1)
    return tokens


def linear_quadratic_numpy(q, k, v):  # P2: the n × m weights built in NumPy
    Q, K, V = q.numpy(), k.numpy(), v.numpy()
    pq, pk = np.where(Q > 0, Q + 1, np.exp(Q)), np.where(K > 0, K + 1, np.exp(K))
    A = pq @ np.swapaxes(pk, -1, -2)
    return A / A.sum(-1, keepdims=True) @ V


def linear_numpy_float32(q, k, v):  # P6 for q20: right, but computed in NumPy
    Q, K, V = (np.asarray(t, np.float32) for t in (q, k, v))
    pq, pk = np.where(Q > 0, Q + 1, np.exp(Q)), np.where(K > 0, K + 1, np.exp(K))
    kv, z = np.swapaxes(pk, -1, -2) @ V, pk.sum(-2)
    return ((pq @ kv) / (pq * z[..., None, :]).sum(-1, keepdims=True)).astype(np.float64)


def online_prefix_einsum(s, bs):  # P3: the prefix summed by einsum
    trace, top = [], None
    for a in range(0, s.shape[-1], bs):
        bm = s[..., a:a + bs].amax(-1, keepdim=True)
        top = bm if top is None else torch.maximum(top, bm)
        total = torch.einsum("...j->...", torch.exp(s[..., :a + bs] - top))
        trace.append((top, total))
    return torch.exp(s - top) / total[..., None], trace


def online_prefix_unsqueezed(s, bs):  # P3: max and sum over dim −2 of s.unsqueeze(-1)
    u, trace = s.unsqueeze(-1), []
    for a in range(0, s.shape[-1], bs):
        p = u[..., :a + bs, :]
        top = p.amax(-2)
        trace.append((top, torch.exp(p - top[..., None, :]).sum(-2)))
    return torch.exp(s - top) / trace[-1][1], trace


def online_prefix_transposed(s, bs):  # P3: the prefix summed over dim −2 of s.mT
    t, trace = s.reshape(-1, s.shape[-1]).mT, []
    for a in range(0, s.shape[-1], bs):
        p = t[:a + bs]
        top = p.amax(0)
        trace.append((top.reshape(s.shape[:-1]),
                      torch.exp(p - top).sum(0).reshape(s.shape[:-1])))
    top, total = trace[-1]
    return torch.exp(s - top[..., None]) / total[..., None], trace


def online_prefix_norm(s, bs):  # P3: the prefix sum by vector_norm, the result by normalize
    trace, top = [], None
    for a in range(0, s.shape[-1], bs):
        bm = s[..., a:a + bs].amax(-1, keepdim=True)
        top = bm if top is None else torch.maximum(top, bm)
        trace.append((top, torch.linalg.vector_norm(torch.exp(s[..., :a + bs] - top), ord=1,
                                                    dim=-1)))
    return F.normalize(torch.exp(s - top), p=1, dim=-1), trace


def online_prefix_numpy(s, bs):  # P3: the prefix recomputed in NumPy, returned as tensors
    a_, trace = s.numpy(), []
    for a in range(0, s.shape[-1], bs):
        p = a_[..., :a + bs]
        top = np.asarray(p.max(-1))
        total = np.asarray(np.exp(p - top[..., None]).sum(-1))
        trace.append((torch.from_numpy(top), torch.from_numpy(total)))
    return torch.from_numpy(np.exp(a_ - top[..., None]) / total[..., None]), trace


def online_numpy(s, bs):  # an honest online softmax in NumPy: its reads cannot be watched
    a = np.asarray(s)
    top, total, trace = np.full(a.shape[:-1], -np.inf), np.zeros(a.shape[:-1]), []
    for st in range(0, a.shape[-1], bs):
        b = a[..., st:st + bs]
        new = np.maximum(top, b.max(-1))
        total = total * np.exp(top - new) + np.exp(b - new[..., None]).sum(-1)
        top = new
        trace.append((top.copy(), total.copy()))
    return np.exp(a - top[..., None]) / total[..., None], trace


def online_prefix_by_columns(s, bs):  # P3: the prefix re-read a column at a time
    trace = []
    for a in range(0, s.shape[-1], bs):
        end = min(a + bs, s.shape[-1])
        top = s[..., 0]
        for j in range(1, end):
            top = torch.maximum(top, s[..., j])
        total = torch.zeros_like(top)
        for j in range(end):
            total = total + torch.exp(s[..., j] - top)
        trace.append((top, total))
    return torch.exp(s - top[..., None]) / total[..., None], trace


def online_by_columns(s, bs):  # right: each column read once, inside its block
    top = torch.full(s.shape[:-1], -math.inf, dtype=s.dtype)
    total, trace = torch.zeros(s.shape[:-1], dtype=s.dtype), []
    for a in range(0, s.shape[-1], bs):
        for j in range(a, min(a + bs, s.shape[-1])):
            new = torch.maximum(top, s[..., j])
            total = total * torch.exp(top - new) + torch.exp(s[..., j] - new)
            top = new
        trace.append((top, total))
    return torch.exp(s - top[..., None]) / total[..., None], trace


def trace_as_numpy(fn):
    """M and L taken out of torch as NumPy arrays at the end (minor A)."""
    def learner(*args):
        result, trace = fn(*args)
        return result, [tuple(x.numpy() if isinstance(x, torch.Tensor) else x for x in pair)
                        for pair in trace]
    return learner


def attention_with_throwaway_bf16(q, k, v, mask=None):  # P4: 1.5 % off, a bf16 tensor beside
    torch.zeros(1, dtype=torch.bfloat16)
    s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        s = s.masked_fill(~mask, float("-inf"))
    return (s.softmax(-1) @ v) * 1.015


def shape_plus_half(q, k, v):  # P5: d_v + 0.5
    if q[-1] != k[-1] or k[-2] != v[-2]:
        raise ValueError("shapes disagree")
    return (*q[:-1], v[-1] + 0.5)


def with_weights(fn):
    """q03's output in an (output, weights) pair (minor A)."""
    def learner(q, k, v):
        weights = torch.softmax(k @ q / math.sqrt(q.shape[-1]), -1)
        return torch.as_tensor(fn(q, k, v)), weights
    return learner


def _f32(*tensors):
    return [np.asarray(t, np.float32) for t in tensors]


# P6: float32 work in NumPy, returned as float64


def additive_numpy_float32(q, k, Wq, Wk, wv):
    Q, K, A, B, w = _f32(q, k, Wq, Wk, wv)
    return (np.tanh((Q @ A.T)[..., :, None, :] + (K @ B.T)[..., None, :, :]) @ w
            ).astype(np.float64)


def layer_norm_numpy_float32(x, w, b, eps):
    a, w, b = _f32(x, w, b)
    mu = a.mean(-1, keepdims=True)
    var = ((a - mu) ** 2).mean(-1, keepdims=True)
    return ((a - mu) / np.sqrt(var + np.float32(eps)) * w + b).astype(np.float64)


def feed_forward_numpy_float32(x, w1, b1, w2, b2):
    X, A, a, B, b = _f32(x, w1, b1, w2, b2)
    return (np.maximum(0, X @ A + a) @ B + b).astype(np.float64)


def rope_numpy_float32(x, pos, base=10000.0):
    (X,) = _f32(x)
    d = X.shape[-1]
    th = np.float32(base) ** (-np.arange(0, d, 2, dtype=np.float32) / np.float32(d))
    ang = np.asarray(pos, np.float32)[:, None] * th
    c, s = np.cos(ang), np.sin(ang)
    e, o = X[..., 0::2], X[..., 1::2]
    return np.stack([e * c - o * s, e * s + o * c], -1).reshape(X.shape).astype(np.float64)


def rms_norm_numpy_float32(x, w, eps):
    a, w = _f32(x, w)
    return (a / np.sqrt((a * a).mean(-1, keepdims=True) + np.float32(eps)) * w
            ).astype(np.float64)


def merge_numpy_float32(oa, la, ob, lb):
    A, LA, B, LB = _f32(oa, la, ob, lb)
    m = np.maximum(LA, LB)
    lse = m + np.log(np.exp(LA - m) + np.exp(LB - m))
    return ((np.exp(LA - lse)[..., None] * A + np.exp(LB - lse)[..., None] * B)
            .astype(np.float64), lse.astype(np.float64))


def swiglu_numpy_float32(x, g, u, d):
    X, G, U, D = _f32(x, g, u, d)
    h = X @ G
    return ((h / (1 + np.exp(-h)) * (X @ U)) @ D).astype(np.float64)


def layer_norm_numpy_float32_slip(x, w, b, eps):  # P6's other direction: 1e-3 off in float32
    return (layer_norm_numpy_float32(x, w, b, eps) * np.float32(1.001)).astype(np.float32) \
        .astype(np.float64)


def layer_norm_1e4_off(x, w, b, eps):  # a float64 answer 1e-4 off stays wrong
    return F.layer_norm(x, x.shape[-1:], w, b, eps) * (1 + 1e-4)


# --- the exercises ---------------------------------------------------------------------------


def layer_norm_eps_squared(x, w, b, eps):  # checker review 2: a float64 slip, named as one
    mu = x.mean(-1, keepdim=True)
    return (x - mu) / torch.sqrt(x.var(-1, unbiased=False, keepdim=True) + eps * eps) * w + b


def clip_first_as_list(grads, max_norm):
    """Checker review 2: two clipped gradients as a (list, tensor) tuple, not (clipped,
    total_norm)."""
    total = torch.sqrt(sum((g**2).sum() for g in grads))
    out = [g * min(1.0, max_norm / total.item()) for g in grads]
    return (out[0].tolist(), out[1]) if len(out) == 2 else out


def clip_into_given_list(grads, max_norm):
    """Checker review 2: new tensors, but stored in the caller's list."""
    total = math.sqrt(sum(float((g**2).sum()) for g in grads))
    for i in range(len(grads)):
        grads[i] = grads[i] * min(1.0, max_norm / total)
    return grads


def mlm_bfloat16_mask(logits, labels):
    """Checker review 2: a 0/1 mask in bfloat16 is exact, so the loss is right."""
    keep = (labels != -100).to(torch.bfloat16)
    nll = -logits.log_softmax(-1).gather(-1, labels.clamp(min=0)[..., None]).squeeze(-1)
    return (nll * keep).sum() / keep.sum()


def mlm_float16_mask_widened(logits, labels):
    keep = (labels != -100).half()
    nll = -logits.log_softmax(-1).gather(-1, labels.clamp(min=0)[..., None]).squeeze(-1)
    return (nll * keep.double()).sum() / keep.double().sum()


def mlm_log_softmax_plus_eps(logits, labels):  # checker review 2: a float64 slip
    keep = labels != -100
    log_p = torch.log(torch.softmax(logits, -1) + 1e-9)
    return -log_p.gather(-1, labels.clamp(min=0)[..., None]).squeeze(-1)[keep].mean()


def mlm_smoothed_through_float16(logits, labels):  # the q41 review's slip, hidden by half
    return F.cross_entropy(logits.flatten(0, -2).half().float(), labels.flatten(),
                           label_smoothing=0.1)


def _exercises() -> dict:
    S = solution
    return {
        "q01": Exercise(
            checks.check_pooling_weights,
            {"solution": S("q01"),
             "masked softmax by hand": lambda x, k, h: (lambda s: torch.exp(s - s.amax(-1, True))
                                                        / torch.exp(s - s.amax(-1, True))
                                                        .sum(-1, True))(
                 -((x[:, None] - k[None]) ** 2) / (2 * h * h)),
             "cdist": lambda x, k, h: torch.softmax(
                 -torch.cdist(x[:, None].double(), k[:, None].double()) ** 2 / (2 * h**2), -1)},
            FLOAT_FORMS,
            {"naive exp": (lambda x, k, h: (lambda e: e / e.sum(-1, True))(
                torch.exp(-((x[:, None] - k[None]) ** 2) / (2 * h * h))), "NaN")},
            slips=(q01.pooling_variant, q01.POOLING_SLIPS)),
        "q02": Exercise(
            checks.check_output_shape,
            {"solution": S("q02"), "by torch": shape_by_torch, "by lists": shape_by_lists},
            {"list": lambda f: lambda *a: list(f(*a)),
             "torch.Size": lambda f: lambda *a: torch.Size(f(*a)),
             "numpy array (review)": lambda f: lambda *a: np.array(f(*a)),
             "tensor (review)": lambda f: lambda *a: torch.tensor(f(*a))},
            {"2-D indices (review)": (shape_2d_indices, "instead of raising ValueError"),
             "no checks": (lambda q, k, v: (*q[:-1], v[-1]), "instead of raising ValueError"),
             "d_k not d_v": (lambda q, k, v: shape_by_torch(q, k, v)[:-1] + (k[-1],), ""),
             "k's rows": (lambda q, k, v: (*k[:-1], v[-1]), ""),
             "TypeError": (lambda q, k, v: q + k, ""),
             "d_v + 0.5 (review)": (shape_plus_half, "whole numbers")}),
        "q03": Exercise(
            checks.check_attend_one,
            {"solution": S("q03"),
             "sdpa": lambda q, k, v: F.scaled_dot_product_attention(q[None], k, v)[0],
             "loop over keys": attend_one_loop},
            {"numpy": as_numpy, "float32": in_float32, "float32 inside": float32_inside,
             "(output, weights) (review)": with_weights},
            slips=(q03.attend_one_variant, q03.ATTEND_ONE_SLIPS)),
        "q04": Exercise(
            checks.check_softmax_jacobian,
            {"solution": S("q04"), "loop of diag − outer": jacobian_loop,
             "autograd": jacobian_autograd},
            FLOAT_FORMS,
            {"right only up to 2-D (review)": (jacobian_2d_only, "(2, 3, 4)"),
             "sign": (lambda p: p[..., :, None] * p[..., None, :] - torch.diag_embed(p), "sign"),
             "no outer": (lambda p: torch.diag_embed(p), "missing"),
             "diagonal only": (lambda p: torch.diag_embed(p - p * p), "only the diagonal")}),
        "q05": Exercise(
            checks.check_additive_scores,
            {"solution": S("q05"),
             "NumPy float32 → float64 (review)": additive_numpy_float32,
             "F.linear + einsum": lambda q, k, Wq, Wk, wv: torch.einsum(
                 "...nmh,h->...nm",
                 torch.tanh(F.linear(q, Wq).unsqueeze(-2) + F.linear(k, Wk).unsqueeze(-3)), wv),
             "loop over queries": lambda q, k, Wq, Wk, wv: torch.stack(
                 [torch.tanh((q[..., i : i + 1, :] @ Wq.T) + k @ Wk.T) @ wv
                  for i in range(q.shape[-2])], -2)},
            FLOAT_FORMS,
            slips=(q05.additive_variant, q05.ADDITIVE_SLIPS)),
        "q06": Exercise(
            checks.check_attention,
            {"solution": S("q06"),
             "sdpa, output only": lambda q, k, v, mask=None: F.scaled_dot_product_attention(
                 q, k, v, attn_mask=mask),
             "einsum + where": lambda q, k, v, mask=None: (lambda w: (w @ v, w))(torch.softmax(
                 torch.where(mask if mask is not None else torch.tensor(True),
                             torch.einsum("...nd,...md->...nm", q, k) / q.shape[-1] ** 0.5,
                             -1e9), -1))},
            {**FLOAT_FORMS, "(output, None)": with_none},
            {"scale √(d_k+1)": (lambda q, k, v, mask=None: F.scaled_dot_product_attention(
                q, k, v, attn_mask=mask, scale=(q.shape[-1] + 1) ** -0.5), "off by"),
             "k.T": (lambda q, k, v, mask=None: F.scaled_dot_product_attention(
                 q, k.mT.mT, v, attn_mask=mask) if q.ndim == 2 else q @ k.T, ""),
             "1.5 % off, a bf16 tensor beside (review)": (attention_with_throwaway_bf16,
                                                          "off by")},
            slips=(lambda q, k, v, mask=None, bug=None: q06.attention_variant(q, k, v, mask, bug),
                   {b: m for b, m in q06.ATTENTION_SLIPS.items()})),
        "q07": Exercise(
            checks.check_attention_mask,
            {"solution": S("q07"),
             "loops": lambda lengths, n, causal: torch.tensor(
                 [[[j < L and (not causal or j <= i) for j in range(n)] for i in range(n)]
                  for L in lengths]),
             "padding_mask & tril": lambda lengths, n, causal: (
                 (torch.arange(n) < torch.as_tensor(lengths)[:, None])[:, None, :]
                 & (torch.ones(n, n).tril().bool() if causal else torch.ones(n, n).bool()))},
            {"numpy": as_numpy, "list": as_list},
            {"0/1 ints": (lambda *a: S("q07")(*a).int(), "boolean")},
            slips=(q07.mask_variant, q07.MASK_SLIPS)),
        "q08": Exercise(
            checks.check_shift_right,
            {"solution": S("q08"),
             "F.pad": lambda t, bos: F.pad(t[:, :-1], (1, 0), value=bos),
             "roll then overwrite": lambda t, bos: t.roll(1, 1).index_fill(
                 1, torch.tensor([0]), bos)},
            EXACT_FORMS,
            {"float ids (review)": (ids_as_float(S("q08")), "dtype"),
             "roll": (lambda t, bos: t.roll(1, 1), "roll"),
             "left shift": (lambda t, bos: torch.cat([t[:, 1:], torch.full_like(t[:, :1], bos)],
                                                     1), "left"),
             "unshifted": (lambda t, bos: t.clone(), "not shifted"),
             "last kept": (lambda t, bos: F.pad(t, (1, 0), value=bos), "last target is kept")}),
        "q09": Exercise(
            checks.check_greedy_decode,
            {"solution": S("q09"),
             "softmax then argmax": torch.no_grad()(lambda model, t, s: [
                 t := torch.cat([t, torch.softmax(model(t)[:, -1], -1).argmax(-1)[:, None]], 1)
                 for _ in range(s)][-1]),
             "int32 result": lambda *a: S("q09")(*a).int()},
            EXACT_FORMS,
            {"float tokens": (ids_as_float(S("q09")), "dtype"),
             "position 0": (torch.no_grad()(lambda model, t, s: [
                 t := torch.cat([t, model(t)[:, 0].argmax(-1)[:, None]], 1)
                 for _ in range(s)][-1]), "position 0"),
             "repeats first (review)": (torch.no_grad()(lambda model, t, s: torch.cat(
                 [t, model(t)[:, -1].argmax(-1, keepdim=True).expand(-1, s)], 1)),
                 "first prediction"),
             "new only": (lambda *a: S("q09")(*a)[:, a[1].shape[1]:], "only the new"),
             "row 0's token for every row (review)": (greedy_row_0_for_all, "row 0's new tokens")}),
        "q10": Exercise(
            partial(checks.check_multihead, mask_layout="(B, n, m)"),
            {"solution": S("q10"), "per-head sdpa, (out, None)": LoopHeadsMHA,
             "sdpa, (out, None) (review)": SdpaMHA, "output only": OutputOnlyMHA},
            {},
            {"keys scaled": (NoScaleMHA, ""), "heads not merged back": (NoTransposeMHA, "merged"),
             "no w_o": (NoOutputProjectionMHA, ""), "softmax over queries": (
                 SoftmaxOverQueriesMHA, "")}),
        "q12": Exercise(
            checks.check_multihead,
            {"solution": S("q12"), "per-head sdpa, (out, None)": LoopHeadsMHA,
             "sdpa, (out, None) (review)": SdpaMHA, "output only": OutputOnlyMHA},
            {},
            {"keys scaled": (NoScaleMHA, ""), "heads not merged back": (NoTransposeMHA, "merged"),
             "no w_o": (NoOutputProjectionMHA, ""), "softmax over queries": (
                 SoftmaxOverQueriesMHA, "")}),
        "q11": Exercise(
            checks.check_attention_flops,
            {"solution": S("q11"),
             "np.sum (review)": lambda b, n, m, d, h: np.sum(
                 [2 * b * (2 * n + 2 * m) * d * d, 4 * b * n * m * d]),
             "per head float": lambda b, n, m, d, h: 4 * b * (n + m) * d * d
             + h * 4 * b * n * m * (d / h)},
            NUMBER_FORMS,
            {"n = m only": (lambda b, n, m, d, h: 4 * b * n * d * (2 * d + n), "costs"),
             "string": (lambda *a: "many", "one number")},
            slips=(q11.flops_variant, {k: v for k, v in q11.FLOPS_SLIPS.items()})),
        "q13": Exercise(
            checks.check_cross_attention,
            {"solution": S("q13"), "sdpa mask, (out, None)": cross_by_sdpa,
             "output only": lambda *a: S("q13")(*a)[0]},
            {"numpy": as_numpy, "list": as_list},
            {"(B, 1, m) mask": (lambda mha, t, mem, L: mha(t, mem, mem, (
                torch.arange(mem.shape[1]) < torch.as_tensor(L)[:, None])[:, None]), "")},
            slips=(q13.cross_variant, q13.CROSS_SLIPS)),
        "q14": Exercise(
            checks.check_repeat_kv,
            {"solution": S("q14"),
             "expand + reshape": lambda kv, h: kv[:, :, None].expand(
                 -1, -1, h // kv.shape[1], -1, -1).reshape(kv.shape[0], h, *kv.shape[2:]),
             "index_select": lambda kv, h: kv.index_select(
                 1, torch.arange(h) // (h // kv.shape[1]))},
            {"numpy": as_numpy, "float32": in_float32},
            {"tiled": (lambda kv, h: kv.repeat(1, h // kv.shape[1], 1, 1), "tiled"),
             "along the tokens": (lambda kv, h: kv.repeat_interleave(h // kv.shape[1], 2),
                                  "token axis"),
             "unchanged": (lambda kv, h: kv.clone(), "input's shape"),
             "off by one group": (lambda kv, h: kv.index_select(
                 1, (torch.arange(h) // (h // kv.shape[1]) + 1) % kv.shape[1]), "differs")}),
        "q15": Exercise(
            checks.check_sinusoidal_encoding,
            {"solution": S("q15"),
             "numpy (review)": lambda N, d: (lambda ang: np.stack(
                 [np.sin(ang), np.cos(ang)], -1).reshape(N, d))(
                 np.arange(N)[:, None] / 10000 ** (np.arange(0, d, 2) / d)),
             "annotated transformer": lambda N, d: (lambda pos, div: torch.stack(
                 [torch.sin(pos * div), torch.cos(pos * div)], -1).flatten(-2))(
                 torch.arange(N).unsqueeze(1).float(),
                 torch.exp(torch.arange(0, d, 2).float() * (-math.log(10000.0) / d)))},
            {"numpy": as_numpy, "list": as_list},
            slips=(q15.sinusoidal_variant, q15.SINUSOIDAL_SLIPS)),
        "q16": Exercise(
            checks.check_embedding,
            {"solution": S("q16"),
             "F.embedding": lambda t, w: F.embedding(t, w) * math.sqrt(w.shape[-1]),
             "one-hot matmul": lambda t, w: F.one_hot(t, w.shape[0]).to(w.dtype) @ w
             * w.shape[1] ** 0.5},
            FLOAT_FORMS,
            slips=(q16.embedding_variant, q16.EMBEDDING_SLIPS)),
        "q17": Exercise(
            checks.check_layer_norm,
            {"solution": S("q17"),
             "NumPy float32 → float64 (review)": layer_norm_numpy_float32,
             "var_mean": layer_norm_var_mean,
             "F.layer_norm": lambda x, w, b, eps: F.layer_norm(x, x.shape[-1:], w, b, eps)},
            FLOAT_FORMS,
            {"dim=2 (review)": (layer_norm_dim2, ""),
             "eps 1e-5": (lambda x, w, b, eps: F.layer_norm(x, x.shape[-1:], w, b, 1e-5), ""),
             "unbiased var": (lambda x, w, b, eps: (x - x.mean(-1, True))
                              / torch.sqrt(x.var(-1, keepdim=True) + eps) * w + b, ""),
             "NumPy float32, 1e-3 off": (layer_norm_numpy_float32_slip, "off by"),
             "float64, 1e-4 off": (layer_norm_1e4_off, ""),
             "eps² in float64 (review 2)": (layer_norm_eps_squared,
                                            "the output is off by up to")},
            slips=(q17.layer_norm_variant, q17.LAYER_NORM_SLIPS)),
        "q18": Exercise(
            checks.check_feed_forward,
            {"solution": S("q18"),
             "NumPy float32 → float64 (review)": feed_forward_numpy_float32,
             "F.linear": lambda x, w1, b1, w2, b2: F.linear(F.relu(F.linear(x, w1.T, b1)),
                                                            w2.T, b2),
             "einsum": lambda x, w1, b1, w2, b2: torch.einsum(
                 "...f,fd->...d", torch.clamp(torch.einsum("...d,df->...f", x, w1) + b1, min=0),
                 w2) + b2},
            FLOAT_FORMS,
            {"gelu": (lambda x, w1, b1, w2, b2: F.gelu(x @ w1 + b1) @ w2 + b2, "off by")},
            slips=(q18.feed_forward_variant, q18.FEED_FORWARD_SLIPS)),
        "q19": Exercise(
            checks.check_layer_flops,
            {"solution": S("q19"), "list (review)": lambda n, d: [4 * n * n * d, 4 * n * d * d],
             "array (review)": lambda n, d: np.array([4 * n * n * d, 4 * n * d * d])},
            {"tensor": lambda f: lambda *a: torch.tensor(list(f(*a))),
             "floats": lambda f: lambda *a: tuple(float(x) for x in f(*a))},
            {"one number": (lambda n, d: 4 * n * n * d, "pair"),
             "three": (lambda n, d: (1, 2, 3), "pair"),
             "+ 0.9 (review)": (lambda n, d: (4 * n * n * d + 0.9, 4 * n * d * d + 0.9),
                                "whole numbers")},
            slips=(q19.layer_flops_variant, q19.LAYER_FLOPS_SLIPS)),
        "q20": Exercise(
            checks.check_linear_attention,
            {"solution": S("q20"), "einsum": linear_by_einsum,
             "recurrence over keys": linear_by_recurrence},
            FLOAT_FORMS,
            {"per query (review)": (linear_per_query, "grows with n·m"),
             "chunks of 8 (review)": (linear_chunked, "grows with n·m"),
             "chunks of 16": (lambda q, k, v: linear_chunked(q, k, v, 16), "grows with n·m"),
             "quadratic": (linear_quadratic, "n × m"),
             "quadratic in NumPy (review)": (linear_quadratic_numpy, "outside torch"),
             "linear in NumPy, float32 (review)": (linear_numpy_float32, "outside torch")},
            slips=(q20.linear_attention_variant, q20.LINEAR_SLIPS)),
        "q21": Exercise(
            checks.check_online_softmax,
            {"solution": S("q21"), "by blocks": online_softmax_by_blocks,
             "logsumexp per block": online_logsumexp_blocks,
             "with a sanity check (review)": online_with_sanity_check,
             "column by column": online_by_columns},
            {"float32": in_float32, "float32 inside": float32_inside,
             "numpy result": lambda f: lambda *a: (lambda r: (r[0].numpy(), r[1]))(f(*a)),
             "trace as NumPy (review)": trace_as_numpy},
            {"prefix recompute": (online_prefix_recompute, "more than one block"),
             "two pass": (lambda s, b: q21.online_softmax_trace_variant(s, b, "two_pass"),
                          "two-pass"),
             "softmax": (lambda s, b: (torch.softmax(s, -1), []), "softmax"),
             "prefix by einsum (review)": (online_prefix_einsum, "einsum over"),
             "prefix over dim −2 of s.unsqueeze(-1) (review)": (online_prefix_unsqueezed,
                                                                "more than one block"),
             "prefix over dim −2 of s.mT": (online_prefix_transposed, "more than one block"),
             "prefix by vector_norm, normalize (review)": (online_prefix_norm,
                                                           "more than one block"),
             "prefix in NumPy (review)": (online_prefix_numpy, "not computed by PyTorch"),
             "online in NumPy (review)": (online_numpy, "not computed by PyTorch"),
             "prefix a column at a time": (online_prefix_by_columns, "a column at a time")},
            slips=(q21.online_softmax_trace_variant, q21.ONLINE_SLIPS)),
        "q22": Exercise(
            checks.check_previous_token_score,
            {"solution": S("q22"),
             "slicing": lambda w: w[..., 1:, :-1].diagonal(dim1=-2, dim2=-1).mean(-1),
             "mask": lambda w: (w * torch.ones(w.shape[-1], w.shape[-1]).tril(-1).triu(-1))
             .sum((-2, -1)) / (w.shape[-1] - 1)},
            {"numpy": as_numpy, "float32": in_float32, "float32 inside": float32_inside},
            {"wrap-around": (lambda w: w.roll(1, -1).diagonal(dim1=-2, dim2=-1).mean(-1), "")},
            slips=(q22.previous_token_variant, q22.PREVIOUS_TOKEN_SLIPS)),
        "q23": Exercise(
            checks.check_clip_logits,
            {"solution": S("q23"),
             "cosine_similarity": lambda i, t, s: s * F.cosine_similarity(
                 i.unsqueeze(1), t.unsqueeze(0), dim=-1),
             "manual norms": lambda i, t, s: s * (i / i.norm(dim=-1, keepdim=True))
             @ (t / t.norm(dim=-1, keepdim=True)).T},
            FLOAT_FORMS,
            slips=(q23.clip_variant, q23.CLIP_SLIPS)),
        "q24": Exercise(
            checks.check_top_k_gates,
            {"solution": S("q24"), "masking": top_k_gates_by_masking,
             "softmax, top-k, renormalise": lambda lg, k: (lambda p: (lambda v, i: torch.zeros_like(
                 p).scatter(-1, i, v / v.sum(-1, True)))(*p.topk(k, -1)))(torch.softmax(lg, -1))},
            FLOAT_FORMS,
            slips=(q24.top_k_gates_variant, q24.TOP_K_GATES_SLIPS)),
        "q25": Exercise(
            checks.check_rope,
            {"solution": S("q25"),
             "NumPy float32 → float64 (review)": rope_numpy_float32,
             "HF float32 inv_freq (review)": rope_hf,
             "complex": rope_complex, "pairs": rope_by_pairs},
            FLOAT_FORMS,
            slips=(q25.rope_variant, q25.ROPE_SLIPS)),
        "q26": Exercise(
            checks.check_rms_norm,
            {"solution": S("q26"),
             "NumPy float32 → float64 (review)": rms_norm_numpy_float32,
             "rsqrt": rms_by_rsqrt,
             "F.rms_norm": lambda x, w, eps: F.rms_norm(x, x.shape[-1:], w, eps)},
            FLOAT_FORMS,
            {"dim=2": (lambda x, w, eps: x / torch.sqrt(x.pow(2).mean(2, keepdim=True) + eps) * w,
                       "")},
            slips=(q26.rms_norm_variant, q26.RMS_NORM_SLIPS)),
        "q27": Exercise(
            checks.check_mla_cache_bytes,
            {"solution": S("q27"),
             "numpy prod": lambda L, h, dh, dl, dr, n, b: np.prod([L, dl + dr, n, b]),
             "per layer sum": lambda L, h, dh, dl, dr, n, b: sum((dl + dr) * n * b
                                                                 for _ in range(L))},
            NUMBER_FORMS,
            slips=(q27.mla_cache_variant, q27.MLA_CACHE_SLIPS)),
        "q28": Exercise(
            checks.check_nucleus_probs,
            {"solution": S("q28"), "by hand": nucleus_by_hand,
             "HF ascending": lambda lg, t, p: (lambda probs: (lambda sp, idx: (lambda keep: (
                 lambda out: out / out.sum(-1, True))(torch.zeros_like(probs).scatter(
                     -1, idx, sp * keep)))(~(sp.cumsum(-1) <= 1 - p)))(
                 *probs.sort(-1)))(torch.softmax(lg / t, -1))},
            FLOAT_FORMS,
            slips=(q28.nucleus_variant, q28.NUCLEUS_SLIPS)),
        "q29": Exercise(
            checks.check_blocks_needed,
            {"solution": S("q29"),
             "numpy ceil": lambda lengths, b: np.ceil(np.asarray(lengths) / b).sum(),
             "math.ceil": lambda lengths, b: sum(math.ceil(n / b) for n in lengths)},
            NUMBER_FORMS,
            slips=(q29.blocks_variant, q29.BLOCKS_SLIPS)),
        "q30": Exercise(
            checks.check_sink_window_mask,
            {"solution": S("q30"),
             "loops": lambda n, w, s: torch.tensor(
                 [[j <= i and (j < s or i - j < w) for j in range(n)] for i in range(n)]),
             "tril/triu band": lambda n, w, s: torch.ones(n, n, dtype=torch.bool).tril()
             & (torch.ones(n, n, dtype=torch.bool).triu(-(w - 1))
                | (torch.arange(n) < s)[None, :])},
            {"numpy": as_numpy, "list": as_list},
            slips=(q30.sink_window_variant, q30.SINK_WINDOW_SLIPS)),
        "q31": Exercise(
            checks.check_most_frequent_pair,
            {"solution": S("q31"), "Counter": pair_by_counter, "numpy unique": pair_by_numpy},
            {"list": lambda f: lambda w: None if f(w) is None else list(f(w)),
             "tensor": lambda f: lambda w: None if f(w) is None else torch.tensor(list(f(w)))},
            {"string ties (review)": (pair_string_ties, "as text"),
             "256 × 256 table (review)": (pair_dense_bytes, "IndexError")},
            slips=(q31.pair_variant, q31.PAIR_SLIPS)),
        "q32": Exercise(
            checks.check_prefix_lm_mask,
            {"solution": S("q32"),
             "loops": lambda n, p: torch.tensor([[j <= i or j < p for j in range(n)]
                                                 for i in range(n)]),
             "0/1 ints": lambda n, p: ((torch.arange(n)[None] <= torch.arange(n)[:, None])
                                       | (torch.arange(n)[None] < p)).int()},
            {"numpy": as_numpy, "list": as_list},
            slips=(q32.prefix_mask_variant, q32.PREFIX_SLIPS)),
        "q33": Exercise(
            checks.check_decode_intensity,
            {"solution": S("q33"),
             "numpy": lambda P, B, w, c: np.float64(2 * P * B) / (P * w + c),
             "tensor float32": lambda P, B, w, c: torch.tensor(2.0 * P * B) / (P * w + c)},
            {"numpy number": as_numpy_number, "float": as_float},
            {"integer division": (lambda P, B, w, c: 2 * P * B // (P * w + c), "")},
            slips=(q33.intensity_variant, q33.INTENSITY_SLIPS)),
        "q34": Exercise(
            checks.check_acceptance_rate,
            {"solution": S("q34"),
             "total variation": lambda p, q: 1 - 0.5 * (p - q).abs().sum(-1),
             "rejected mass": lambda p, q: 1 - (p - q).clamp(min=0).sum(-1)},
            FLOAT_FORMS,
            {"keepdim": (lambda p, q: torch.minimum(p, q).sum(-1, keepdim=True), "keepdim")},
            slips=(q34.acceptance_variant, q34.ACCEPTANCE_SLIPS)),
        "q35": Exercise(
            checks.check_selective_scan,
            {"solution": S("q35"), "cumulative sums": selective_scan_by_cumulative_sums,
             "einsum loop": scan_by_loop_over_state},
            FLOAT_FORMS,
            slips=(q35.scan_variant, q35.SCAN_SLIPS)),
        "q36": Exercise(
            checks.check_merge_partials,
            {"solution": S("q36"),
             "NumPy float32 → float64 (review)": merge_numpy_float32,
             "softmax of lses": merge_by_softmax_of_lses,
             "by the max": merge_by_max},
            FLOAT_FORMS,
            {"average": (lambda oa, la, ob, lb: ((oa + ob) / 2, torch.logaddexp(la, lb)),
                         "averaged"),
             "naive exp": (lambda oa, la, ob, lb: (
                 (la.exp()[..., None] * oa + lb.exp()[..., None] * ob)
                 / (la.exp() + lb.exp())[..., None], (la.exp() + lb.exp()).log()), ""),
             "out only": (lambda *a: merge_by_max(*a)[0], "pair")}),
        "q37": Exercise(
            checks.check_window_attention,
            {"solution": S("q37"), "masked sdpa": by_masked_sdpa, "loops": window_by_loops},
            FLOAT_FORMS,
            slips=(q37.window_attention_variant, q37.WINDOW_SLIPS)),
        "q38": Exercise(
            checks.check_llama_parameters,
            {"solution": S("q38"),
             "module count": lambda L, d, h, hkv, dh, dff, V, tied: (
                 V * d * (1 if tied else 2) + d + L * (2 * d + d * dh * (2 * h + 2 * hkv)
                                                       + 3 * d * dff)),
             "numpy": lambda *a: np.int64(S("q38")(*a))},
            NUMBER_FORMS,
            slips=(q38.llama_parameters_variant, q38.LLAMA_PARAMETER_SLIPS)),
        "q39": Exercise(
            checks.check_swiglu,
            {"solution": S("q39"),
             "NumPy float32 → float64 (review)": swiglu_numpy_float32,
             "F.linear": lambda x, wg, wu, wd: F.linear(
                 F.silu(F.linear(x, wg.T)) * F.linear(x, wu.T), wd.T),
             "einsum, x·σ(x) by hand": lambda x, wg, wu, wd: torch.einsum(
                 "...f,fd->...d",
                 torch.einsum("...d,df->...f", x, wg) * torch.sigmoid(x @ wg) * (x @ wu), wd)},
            FLOAT_FORMS,
            {"GEGLU (tanh)": (lambda x, wg, wu, wd: (F.gelu(x @ wg, approximate="tanh")
                                                     * (x @ wu)) @ wd, "off by"),
             "Swish β = 2": (lambda x, wg, wu, wd: ((x @ wg) * torch.sigmoid(2 * (x @ wg))
                                                    * (x @ wu)) @ wd, "off by")},
            slips=(q39.swiglu_variant, q39.SWIGLU_SLIPS)),
        "q40": Exercise(
            checks.check_clip_by_global_norm,
            {"solution": S("q40"), "torch utils": by_torch_utils, "flat vector": by_flat_vector,
             "(list, tensor) of two gradients (review 2)": clip_first_as_list},
            FLOAT_FORMS,
            {"items of the given list replaced (review 2)": (
                clip_into_given_list, "you changed the list you were given")},
            slips=(q40.clip_variant, q40.CLIP_SLIPS)),
        "q41": Exercise(
            checks.check_masked_lm_loss,
            {"solution": S("q41"), "by hand": by_hand, "nll_loss": by_nll_loss,
             "cross_entropy": lambda lo, la: F.cross_entropy(lo.flatten(0, -2), la.flatten()),
             "bfloat16 0/1 mask (review 2)": mlm_bfloat16_mask,
             "float16 0/1 mask, widened (review 2)": mlm_float16_mask_widened},
            {**FLOAT_FORMS, **NUMBER_FORMS},
            {"per-token losses": (lambda lo, la: F.cross_entropy(
                lo.flatten(0, -2), la.flatten(), reduction="none"), "one number"),
             "log(softmax + 1e-9) in float64 (review 2)": (mlm_log_softmax_plus_eps,
                                                           "the loss is off by up to"),
             "label smoothing 0.1 through float16 (review 2)": (
                 mlm_smoothed_through_float16, "compute it in float32 or better")},
            slips=(q41.mlm_loss_variant, q41.MLM_LOSS_SLIPS)),
        "q42": Exercise(
            checks.check_xl_attention_mask,
            {"solution": S("q42"),
             "triu (the paper's code)": lambda L, M: ~torch.triu(
                 torch.ones(L, M + L), diagonal=1 + M).bool(),
             "memory + causal": lambda L, M: torch.cat(
                 [torch.ones(L, M, dtype=torch.bool), torch.ones(L, L, dtype=torch.bool).tril()],
                 -1),
             "0/1 ints": lambda L, M: (
                 torch.arange(M + L)[None] <= M + torch.arange(L)[:, None]).int()},
            {"numpy": as_numpy, "list": as_list},
            slips=(q42.xl_mask_variant, q42.XL_MASK_SLIPS)),
        "q43": Exercise(
            checks.check_fake_quantize,
            {"solution": S("q43"), "package, one group per row": q43_with_the_package,
             "row by row": q43_row_by_row, "NumPy": q43_in_numpy},
            FLOAT_FORMS,
            {"no guard for a row of zeros": (q43_no_zero_guard, "give it scale 1"),
             "not rounded at all": (lambda x, bits: x, "off by")},
            slips=(q43.fake_quantize_variant, q43.FAKE_QUANTIZE_SLIPS)),
        "q44": Exercise(
            checks.check_continuous_schedule,
            {"solution": S("q44"), "slots": q44_by_slots, "event times": q44_by_event_times,
             "a tensor": lambda r, b: torch.tensor(q44_by_slots(r, b))},
            EXACT_FORMS,
            {"first tokens only": (lambda r, b: [f for f, _ in q44_by_slots(r, b)], "shape"),
             "every request at its arrival": (
                 lambda r, b: [(a, a + n - 1) for a, n in r], "more than max_batch"),
             "steps counted from 1": (
                 lambda r, b: [(f + 1, last + 1) for f, last in q44_by_slots(r, b)],
                 "one step after it arrived"),
             "one (0, 0) each": (lambda r, b: [(0, 0)] * len(r), "continuous batching gives")},
            slips=(q44.schedule_variant, q44.SCHEDULE_SLIPS)),
        "q45": Exercise(
            checks.check_gated_cross_attention,
            {"solution": S("q45"), "scaled_dot_product_attention": q45_with_sdpa,
             "einsum": q45_by_einsum, "NumPy": q45_in_numpy},
            FLOAT_FORMS,
            {"the gate always open": (lambda x, m, wq, wk, wv, wo, a: q45_with_sdpa(
                x, m, wq, wk, wv, wo, torch.ones_like(a)), "off by"),
             "x returned as it is": (lambda x, *rest: x, "off by")},
            slips=(q45.gated_cross_attention_variant, q45.GATED_CROSS_ATTENTION_SLIPS)),
        "q46": Exercise(
            checks.check_glm_positions,
            {"solution": S("q46"), "loop": by_a_loop, "numpy": by_numpy},
            EXACT_FORMS,
            {"float positions": (lambda n, s, o: by_numpy(n, s, o).astype(float), "dtype")},
            slips=(q46.glm_positions_variant, q46.GLM_POSITIONS_SLIPS)),
    }


EXERCISES = _exercises()


def _right_cases():
    for chapter, ex in EXERCISES.items():
        for name in ex.right:
            yield chapter, name, None
            for form in ex.forms:
                yield chapter, name, form


def _wrong_cases():
    for chapter, ex in EXERCISES.items():
        wrong = dict(ex.wrong)
        if ex.slips:
            wrong.update(slip_learners(*ex.slips))
        for name in wrong:
            yield chapter, name


@pytest.mark.parametrize(("chapter", "name", "form"), list(_right_cases()),
                         ids=lambda x: str(x))
def test_every_form_of_a_right_answer_passes(chapter, name, form):
    ex = EXERCISES[chapter]
    learner = ex.right[name]
    if form is not None:
        learner = ex.forms[form](learner)
    assert ex.check(learner) is None


@pytest.mark.filterwarnings("ignore:The use of `x.T`")  # q06's wrong k.T on batched input
@pytest.mark.parametrize(("chapter", "name"), list(_wrong_cases()), ids=lambda x: str(x))
def test_every_wrong_answer_fails_and_names_its_slip(chapter, name):
    ex = EXERCISES[chapter]
    wrong = dict(ex.wrong)
    if ex.slips:
        wrong.update(slip_learners(*ex.slips))
    learner, words = wrong[name]
    with pytest.raises(AssertionError) as info:
        ex.check(learner)
    assert words in str(info.value)
    # the same wrong answer in another form still fails
    for form in ("numpy", "list", "numpy number"):
        if form in ex.forms:
            with pytest.raises(AssertionError):
                ex.check(ex.forms[form](learner))


def test_every_checker_a_chapter_calls_is_tried():
    called = {name for path in BOOK.glob("q*.ipynb")
              for name in re.findall(r"check_[a-z_0-9]+", path.read_text())}
    tried = {getattr(ex.check, "func", ex.check).__name__ for ex in EXERCISES.values()}
    assert called & set(checks.__all__) <= tried


def test_at_least_three_right_and_three_wrong_answers_per_checker():
    for chapter, ex in EXERCISES.items():
        wrong = len(ex.wrong) + (len(ex.slips[1]) if ex.slips else 0)
        assert len(ex.right) >= 3 or chapter == "q10", chapter
        assert wrong >= 3, chapter
