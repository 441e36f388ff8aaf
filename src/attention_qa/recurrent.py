"""Attention as a recurrence (q35): linear attention as an RNN, the selective scan, the delta
rule, and why a fixed state limits recall.

- ``linear_attention_recurrent`` follows Katharopoulos et al. (2020), "Transformers are RNNs"
  (§3.4): causal linear attention keeps S_t = Σ_{j≤t} φ(k_j) v_jᵀ, a (d_k, d_v) matrix, and
  z_t = Σ_{j≤t} φ(k_j); out_t = φ(q_t)ᵀ S_t / φ(q_t)ᵀ z_t. It is
  ``efficient.linear_attention(..., causal=True)`` one position at a time.
- ``selective_scan`` follows Gu and Dao (2023), "Mamba: Linear-Time Sequence Modeling with
  Selective State Spaces" (§2, eq. 4; §3.2, Algorithm 2), in the form of the reference
  ``selective_scan_ref`` of state-spaces/mamba: Ā_t = exp(Δ_t A) (zero-order hold), and the
  input term Δ_t B_t x_t (the reference's simplification of ZOH's B̄), with Δ, B and C that
  depend on the token. The softplus that Mamba applies to Δ is left to the caller.
  ``selective_scan_parallel`` computes the same recurrence with an associative scan in
  ⌈log₂ L⌉ steps; ``selective_scan_chunked`` in chunks with a state passed between them, as
  Mamba-2 does (Dao and Gu, 2024, §6), but with Mamba-1's decay, one per (channel, state): a
  chunk is then an elementwise sum over a (batch, T, T, d, N) tensor, not a matrix product.
  Mamba-2's matrix products need its restriction to one scalar decay per head.
- ``delta_rule_recurrent`` is DeltaNet's update (Schlag et al., 2021; Yang et al., 2024) and,
  with a decay α, Gated DeltaNet's (Yang, Kautz and Hatamizadeh, 2025, eq. 10):
  S_t = α_t (I − β_t k_t k_tᵀ) S_{t−1} + β_t k_t v_tᵀ, written here with S of shape
  (d_k, d_v) as in linear attention (the papers store its transpose).
- ``recall_accuracy`` is a toy associative-recall test, computed, not trained;
  ``mean_recall_accuracy`` averages it over several random sets.
"""

from __future__ import annotations

import math

import torch

from attention_qa.efficient import FEATURE_MAPS, _feature
from attention_qa.validation import require_positive_int, shape_str

RECALL_KINDS = ("softmax attention", "linear attention (sum)", "delta rule")


def linear_attention_recurrent(q, k, v, feature_map: str = "elu"):
    """Causal linear attention one position at a time; returns (out, (S, z)).

    q, k: (B, n, d_k); v: (B, n, d_v). out: (B, n, d_v); S: (B, d_k, d_v) the final state
    Σ_j φ(k_j) v_jᵀ; z: (B, d_k) the final normaliser Σ_j φ(k_j). feature_map "elu"
    (φ = elu + 1, normalised) or "identity" (φ = x, no normaliser), as in
    ``efficient.linear_attention``. The state never grows with n: that is the RNN view.
    """
    _check_recurrent_qkv(q, k, v)
    if feature_map not in FEATURE_MAPS:
        raise ValueError(f"feature_map must be one of {FEATURE_MAPS}, got {feature_map!r}")
    phi_q, phi_k = _feature(q, feature_map), _feature(k, feature_map)  # (B, n, d_k)
    batch, n, d_k = q.shape
    S = q.new_zeros(batch, d_k, v.shape[-1])  # (B, d_k, d_v)
    z = q.new_zeros(batch, d_k)  # (B, d_k)
    outs = []
    for t in range(n):
        S = S + phi_k[:, t, :, None] * v[:, t, None, :]  # (B, d_k, d_v): add φ(k_t) v_tᵀ
        z = z + phi_k[:, t]  # (B, d_k)
        out = (phi_q[:, t, :, None] * S).sum(dim=1)  # (B, d_v): φ(q_t)ᵀ S_t
        if feature_map != "identity":
            out = out / (phi_q[:, t] * z).sum(dim=-1, keepdim=True)  # φ > 0, so never 0
        outs.append(out)
    return torch.stack(outs, dim=1), (S, z)  # (B, n, d_v)


def selective_scan(x, delta, A, B, C, D=None):
    """Mamba's selective scan, the sequential reference loop; returns y (batch, L, d).

    x, delta: (batch, L, d); A: (d, N); B, C: (batch, L, N); D: (d,) or None.
    h_t = exp(Δ_t A) ⊙ h_{t−1} + Δ_t B_t x_t, with h_0 = 0 of shape (batch, d, N);
    y_t = h_t C_t + D ⊙ x_t. Each of the d channels runs its own N-dimensional state, and
    Δ, B, C change with the token: that input dependence is the "selection".
    """
    _check_scan(x, delta, A, B, C, D)
    decay = torch.exp(delta.unsqueeze(-1) * A)  # (batch, L, d, N): Ā_t = exp(Δ_t A)
    drive = (delta * x).unsqueeze(-1) * B.unsqueeze(-2)  # (batch, L, d, N): Δ_t B_t x_t
    h = x.new_zeros(x.shape[0], x.shape[2], A.shape[1])  # (batch, d, N)
    ys = []
    for t in range(x.shape[1]):
        h = decay[:, t] * h + drive[:, t]  # (batch, d, N)
        ys.append(h @ C[:, t, :, None])  # (batch, d, 1): h_t C_t
    y = torch.cat(ys, dim=-1).transpose(1, 2)  # (batch, L, d)
    return y if D is None else y + D * x


def selective_scan_parallel(x, delta, A, B, C, D=None):
    """The selective scan by an associative (Hillis–Steele) scan: ⌈log₂ L⌉ steps, each one
    elementwise operation over all L positions at once; equals ``selective_scan``.

    Each step h_t = a_t h_{t−1} + b_t is the pair (a_t, b_t); two steps compose as
    (a_1, b_1) then (a_2, b_2) = (a_2 a_1, a_2 b_1 + b_2), an associative operation, so the
    prefix of every position can be combined in any grouping.
    """
    _check_scan(x, delta, A, B, C, D)
    a = torch.exp(delta.unsqueeze(-1) * A)  # (batch, L, d, N)
    b = (delta * x).unsqueeze(-1) * B.unsqueeze(-2)  # (batch, L, d, N)
    L, offset = x.shape[1], 1
    while offset < L:
        # Position t absorbs the combined steps ending at t − offset.
        b = torch.cat([b[:, :offset], a[:, offset:] * b[:, :-offset] + b[:, offset:]], dim=1)
        a = torch.cat([a[:, :offset], a[:, offset:] * a[:, :-offset]], dim=1)
        offset *= 2
    y = (b * C.unsqueeze(-2)).sum(dim=-1)  # (batch, L, d): h_t C_t, as b now holds h_t
    return y if D is None else y + D * x


def selective_scan_chunked(x, delta, A, B, C, D=None, chunk_size: int = 16):
    """The selective scan in chunks: inside a chunk, every h_t is a sum of
    exp(Σ_{s<r≤t} Δ_r A) Δ_s B_s x_s over s ≤ t, computed at once from cumulative sums of
    Δ A (differences only, so nothing overflows); between chunks, the last state is carried.
    Equals ``selective_scan``; chunk_size is any positive integer (the last chunk may be
    shorter). With Mamba-1's decay, one per (channel, state), the weights differ for every
    state, so a chunk is an elementwise (batch, T, T, d, N) sum, not a matrix product; Mamba-2
    (Dao and Gu, 2024, §6) takes one scalar decay per head to turn it into matrix products."""
    _check_scan(x, delta, A, B, C, D)
    require_positive_int("chunk_size", chunk_size)
    batch, L, d = x.shape
    h = x.new_zeros(batch, d, A.shape[1])  # (batch, d, N): the state entering the chunk
    ys = []
    for start in range(0, L, chunk_size):
        sl = slice(start, start + chunk_size)
        log_a = delta[:, sl].unsqueeze(-1) * A  # (batch, T, d, N): log of each decay
        cum = log_a.cumsum(dim=1)  # (batch, T, d, N): Σ_{r ≤ t} Δ_r A within the chunk
        T = cum.shape[1]
        # gaps[t, s] = Σ_{s<r≤t} Δ_r A for s ≤ t; −inf above the diagonal (exp → 0).
        gaps = cum.unsqueeze(2) - cum.unsqueeze(1)  # (batch, T, T, d, N)
        causal = torch.ones(T, T, dtype=torch.bool, device=x.device).tril()
        gaps = gaps.masked_fill(~causal[:, :, None, None], -math.inf)
        drive = (delta[:, sl] * x[:, sl]).unsqueeze(-1) * B[:, sl].unsqueeze(-2)  # (b,T,d,N)
        states = (torch.exp(gaps) * drive.unsqueeze(1)).sum(dim=2)  # (batch, T, d, N)
        states = states + torch.exp(cum) * h.unsqueeze(1)  # the carried state, decayed
        ys.append((states * C[:, sl].unsqueeze(-2)).sum(dim=-1))  # (batch, T, d)
        h = states[:, -1]
    y = torch.cat(ys, dim=1)  # (batch, L, d)
    return y if D is None else y + D * x


def delta_rule_recurrent(q, k, v, beta, alpha=None):
    """DeltaNet (alpha None) or Gated DeltaNet one position at a time; returns (out, S).

    q, k: (B, n, d_k); v: (B, n, d_v); beta, alpha: (B, n) in [0, 1]. The state S
    (B, d_k, d_v) starts at 0; S_t = α_t (I − β_t k_t k_tᵀ) S_{t−1} + β_t k_t v_tᵀ, so the
    value stored under k_t is moved toward v_t (replaced when β_t = 1 and |k_t| = 1) instead
    of added to; out_t = S_tᵀ q_t, with no normaliser. The papers L2-normalise q and k;
    pass them normalised.
    """
    _check_recurrent_qkv(q, k, v)
    for name, gate in (("beta", beta), ("alpha", alpha)):
        if gate is None:
            continue
        if not isinstance(gate, torch.Tensor) or gate.shape != q.shape[:2]:
            got = shape_str(gate.shape) if isinstance(gate, torch.Tensor) else type(gate).__name__
            raise ValueError(f"{name} has shape {got} but must be (B, n) = {tuple(q.shape[:2])}")
    batch, n, d_k = q.shape
    S = q.new_zeros(batch, d_k, v.shape[-1])  # (B, d_k, d_v)
    outs = []
    for t in range(n):
        k_t, v_t = k[:, t], v[:, t]  # (B, d_k), (B, d_v)
        if alpha is not None:
            S = alpha[:, t, None, None] * S
        read = (k_t.unsqueeze(-1) * S).sum(dim=1)  # (B, d_v): what S holds under k_t
        S = S + beta[:, t, None, None] * k_t.unsqueeze(-1) * (v_t - read).unsqueeze(-2)
        outs.append((q[:, t].unsqueeze(-1) * S).sum(dim=1))  # (B, d_v): S_tᵀ q_t
    return torch.stack(outs, dim=1), S


def recall_pairs(num_pairs: int, d: int, seed: int = 0):
    """A toy associative-recall set: ``num_pairs`` keys and values, each a random unit vector
    in d dimensions (Gaussian, normalised), float64. Returns (keys, values), each (num_pairs, d)."""
    require_positive_int("num_pairs", num_pairs)
    require_positive_int("d", d)
    g = torch.Generator().manual_seed(seed)
    keys = torch.randn(num_pairs, d, generator=g, dtype=torch.float64)
    values = torch.randn(num_pairs, d, generator=g, dtype=torch.float64)
    return keys / keys.norm(dim=-1, keepdim=True), values / values.norm(dim=-1, keepdim=True)


def recall_accuracy(kind: str, num_pairs: int, d: int, seed: int = 0,
                    sharpness: float = 50.0) -> float:
    """The fraction of stored keys whose read-out is nearest (by dot product) to their own
    value among all stored values, after writing every pair once, in order.

    kind "softmax attention": the read is softmax(sharpness · q Kᵀ) V over the whole cache;
    "linear attention (sum)": S = Σ_i k_i v_iᵀ, a (d, d) state, read qᵀ S;
    "delta rule": the same state written with DeltaNet's rule at β = 1.
    A toy: random unit keys, no training; it shows the capacity of a d × d state, not how a
    trained model uses its own. Softmax attention recalls every pair only when its logits are
    sharp (the default 50); at 1/√d on unit keys its weights are nearly uniform.
    """
    if kind not in RECALL_KINDS:
        raise ValueError(f"kind must be one of {RECALL_KINDS}, got {kind!r}")
    keys, values = recall_pairs(num_pairs, d, seed)
    if kind == "softmax attention":
        read = torch.softmax(sharpness * keys @ keys.T, dim=-1) @ values  # (N, d)
    elif kind == "linear attention (sum)":
        read = keys @ (keys.T @ values)  # (N, d): qᵀ Σ_i k_i v_iᵀ for every stored key
    else:
        ones = torch.ones(1, num_pairs, dtype=torch.float64)
        _, S = delta_rule_recurrent(keys[None], keys[None], values[None], ones)
        read = keys @ S[0]  # (N, d)
    guess = (read @ values.T).argmax(dim=-1)  # (N,)
    return (guess == torch.arange(num_pairs)).double().mean().item()


def mean_recall_accuracy(kind: str, num_pairs: int, d: int, num_seeds: int = 5,
                         sharpness: float = 50.0) -> float:
    """``recall_accuracy`` averaged over the random sets of seeds 0 … num_seeds − 1, so that
    one lucky or unlucky draw of keys does not decide the figure."""
    require_positive_int("num_seeds", num_seeds)
    return sum(recall_accuracy(kind, num_pairs, d, seed, sharpness)
               for seed in range(num_seeds)) / num_seeds


def decode_memory_elements(kind: str, n: int, d: int) -> int:
    """Numbers one head of one layer keeps to decode the next token after n tokens, with
    head size d (d_k = d_v = d): softmax attention's K/V cache 2·n·d; linear attention's
    S and z, d² + d; the delta rule's S, d²."""
    require_positive_int("n", n)
    require_positive_int("d", d)
    if kind == "softmax attention":
        return 2 * n * d
    if kind == "linear attention (sum)":
        return d * d + d
    if kind == "delta rule":
        return d * d
    raise ValueError(f"kind must be one of {RECALL_KINDS}, got {kind!r}")


def mamba_state_elements(num_layers: int, d_model: int, d_state: int = 16, d_conv: int = 4,
                         expand: int = 2) -> int:
    """What a Mamba model keeps between decoding steps, whatever the context: per layer, the
    SSM state (expand·d_model, d_state) and the last d_conv inputs of the short convolution
    (expand·d_model, d_conv), as ``allocate_inference_cache`` in state-spaces/mamba's
    ``mamba_simple.py`` allocates them (defaults d_state 16, d_conv 4, expand 2)."""
    for name, value in (("num_layers", num_layers), ("d_model", d_model),
                        ("d_state", d_state), ("d_conv", d_conv), ("expand", expand)):
        require_positive_int(name, value)
    return num_layers * expand * d_model * (d_state + d_conv)


def _check_recurrent_qkv(q, k, v) -> None:
    for name, x in (("q", q), ("k", k), ("v", v)):
        if not isinstance(x, torch.Tensor) or not x.is_floating_point() or x.ndim != 3:
            got = shape_str(x.shape) if isinstance(x, torch.Tensor) else type(x).__name__
            raise ValueError(f"{name} must be a floating-point tensor (B, n, d), got {got}")
    if k.shape != q.shape:
        raise ValueError(f"k has shape {shape_str(k.shape)} but q has shape "
                         f"{shape_str(q.shape)}; they must match (B, n, d_k)")
    if v.shape[:2] != q.shape[:2]:
        raise ValueError(f"v has shape {shape_str(v.shape)} but q has (B, n) = "
                         f"{tuple(q.shape[:2])}")


def _check_scan(x, delta, A, B, C, D) -> None:
    for name, t in (("x", x), ("delta", delta), ("A", A), ("B", B), ("C", C)):
        if not isinstance(t, torch.Tensor) or not t.is_floating_point():
            raise ValueError(f"{name} must be a floating-point tensor, got "
                             f"{type(t).__name__ if not isinstance(t, torch.Tensor) else t.dtype}")
    if x.ndim != 3:
        raise ValueError(f"x has shape {shape_str(x.shape)} but must be (batch, L, d)")
    batch, L, d = x.shape
    if delta.shape != x.shape:
        raise ValueError(f"delta has shape {shape_str(delta.shape)} but x has "
                         f"{shape_str(x.shape)}; they must match (batch, L, d)")
    if A.ndim != 2 or A.shape[0] != d:
        raise ValueError(f"A has shape {shape_str(A.shape)} but must be (d, N) with d = {d}")
    N = A.shape[1]
    for name, t in (("B", B), ("C", C)):
        if t.shape != (batch, L, N):
            raise ValueError(f"{name} has shape {shape_str(t.shape)} but must be "
                             f"(batch, L, N) = {(batch, L, N)}")
    if D is not None and (not isinstance(D, torch.Tensor) or D.shape != (d,)):
        got = shape_str(D.shape) if isinstance(D, torch.Tensor) else type(D).__name__
        raise ValueError(f"D has shape {got} but must be (d,) = ({d},) or None")
