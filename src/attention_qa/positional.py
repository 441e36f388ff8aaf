"""Position in attention: sinusoidal encoding, rotary embeddings (RoPE) and ALiBi.

The sinusoidal encoding follows Vaswani et al. (2017), "Attention Is All You Need",
section 3.5: ``PE[pos, 2i] = sin(pos / 10000^(2i/d_model))`` and
``PE[pos, 2i+1] = cos(pos / 10000^(2i/d_model))``. Each pair of columns is one
frequency, from one cycle per 2π positions down to one per 10000·2π.

Rotary embeddings follow Su et al. (2021), "RoFormer: Enhanced Transformer with Rotary
Position Embedding", equation (34): each pair (x[2i], x[2i+1]) of a query or key is rotated
by the angle pos·θᵢ, θᵢ = base^(−2i/d), so that the score of a rotated query and key depends
on their positions only through the offset between them.

ALiBi follows Press, Smith and Lewis (2022), "Train Short, Test Long: Attention with Linear
Biases Enables Input Length Extrapolation": no position is added to the tokens; each head
adds ``−slope · distance`` to its scores, with a fixed geometric sequence of slopes.
"""

import math

import torch

from attention_qa.validation import (
    require_positive_int,
    require_positive_number,
    require_tensor,
    shape_str,
)


def sinusoidal_encoding(num_positions: int, d_model: int) -> torch.Tensor:
    """Return the (num_positions, d_model) encoding for positions 0 … num_positions − 1.

    d_model must be even, because every frequency fills a sine column and a cosine column.
    The result has the default float dtype (float32 unless changed).
    """
    require_positive_int("num_positions", num_positions)
    require_positive_int("d_model", d_model)
    if d_model % 2:
        raise ValueError(
            f"d_model must be even (one sine and one cosine column per frequency), "
            f"got {d_model}"
        )
    # float64 for the angles: at large positions float32 loses the low digits of
    # pos / 10000^(2i/d_model), and sin/cos of a rounded angle is visibly wrong.
    pos = torch.arange(num_positions, dtype=torch.float64).unsqueeze(1)  # (num_positions, 1)
    two_i = torch.arange(0, d_model, 2, dtype=torch.float64)  # (d_model/2,)
    angles = pos / 10000.0 ** (two_i / d_model)  # (num_positions, d_model/2)
    pe = torch.empty(num_positions, d_model, dtype=torch.float64)  # (num_positions, d_model)
    pe[:, 0::2] = torch.sin(angles)
    pe[:, 1::2] = torch.cos(angles)
    return pe.to(torch.get_default_dtype())


def similarity_to(position: int, d_model: int, num_positions: int = 128):
    """Cosine similarity of PE(position) with PE(q) for q = 0 … num_positions − 1."""
    pe = sinusoidal_encoding(num_positions, d_model)  # (num_positions, d_model)
    return pe @ pe[position] / (d_model / 2)  # (num_positions,)


# --- rotary position embedding (RoPE) ------------------------------------------------------


def rope_frequencies(d: int, base: float = 10000.0) -> torch.Tensor:
    """The (d/2,) rotation speeds θᵢ = base^(−2i/d), i = 0 … d/2 − 1, in radians per position.

    θ₀ = 1 turns the first pair by one radian per position; the last pairs turn slowest,
    about once every 2π·base positions. The result has the default float dtype.
    """
    require_positive_int("d", d)
    if d % 2:
        raise ValueError(f"d must be even (one angle per pair of features), got {d}")
    return _rope_theta(d, base).to(torch.get_default_dtype())


def apply_rope(x: torch.Tensor, positions=None, base: float = 10000.0) -> torch.Tensor:
    """Rotate each pair (x[..., 2i], x[..., 2i+1]) of x by the angle positions·θᵢ.

    x: (..., n, d) queries or keys, d even; positions: (n,) integers, default 0 … n − 1
    (pass the absolute positions of cached decoding, e.g. ``torch.arange(past, past + n)``).
    The pairs are adjacent features, the interleaved convention of the RoFormer paper
    (some libraries pair feature i with i + d/2 instead; the two differ by a permutation of
    the features). Returns a tensor of x's shape and dtype.
    """
    require_tensor("x", x, min_ndim=2, floating=True)
    n, d = x.shape[-2], x.shape[-1]
    if d % 2:
        raise ValueError(
            f"x has shape {shape_str(x.shape)} but its last dim d={d} must be even: "
            f"RoPE rotates the features in pairs"
        )
    positions = _check_positions(positions, n)
    theta = _rope_theta(d, base)  # (d/2,), float64
    # float64 angles: in float32, position·θ loses its low digits at long positions.
    return rotate_pairs(x, positions.to(torch.float64).unsqueeze(1) * theta)


def rotate_pairs(x: torch.Tensor, angles: torch.Tensor) -> torch.Tensor:
    """Rotate each adjacent pair (x[..., 2i], x[..., 2i+1]) of x (..., n, d) by angles (n, d/2),
    float64; half precision rotates in float32. Returns a tensor of x's shape and dtype."""
    d = x.shape[-1]
    work = torch.promote_types(x.dtype, torch.float32)  # half precision rotates in float32
    cos = angles.cos().to(device=x.device, dtype=work)  # (n, d/2)
    sin = angles.sin().to(device=x.device, dtype=work)  # (n, d/2)
    pairs = x.to(work).unflatten(-1, (d // 2, 2))  # (..., n, d/2, 2)
    x_even, x_odd = pairs[..., 0], pairs[..., 1]  # (..., n, d/2) each
    rotated = torch.stack(
        [x_even * cos - x_odd * sin, x_even * sin + x_odd * cos], dim=-1
    )  # (..., n, d/2, 2): the 2-D rotation of every pair
    return rotated.flatten(-2).to(x.dtype)  # (..., n, d)


def _rope_theta(d: int, base) -> torch.Tensor:
    """θᵢ = base^(−2i/d) in float64, for an even d already checked."""
    require_positive_number("base", base)
    two_i = torch.arange(0, d, 2, dtype=torch.float64)  # (d/2,)
    return float(base) ** (-two_i / d)  # (d/2,)


def _check_positions(positions, n: int) -> torch.Tensor:
    if positions is None:
        return torch.arange(n)
    positions = torch.as_tensor(positions)
    if positions.is_floating_point() or positions.is_complex() or positions.dtype == torch.bool:
        raise ValueError(f"positions must hold integers, got dtype {positions.dtype}")
    if positions.shape != (n,):
        raise ValueError(
            f"positions has shape {shape_str(positions.shape)} but x has n={n} positions; "
            f"positions must be ({n},)"
        )
    return positions.cpu()


# --- ALiBi ---------------------------------------------------------------------------------


def alibi_slopes(num_heads: int) -> torch.Tensor:
    """The (num_heads,) slopes of the ALiBi paper's reference code.

    For h a power of two, the geometric sequence 2^(−8/h), 2^(−16/h), …, 2^(−8): for 8 heads
    1/2, 1/4, …, 1/256. Otherwise the slopes of the largest power of two p below h, followed
    by every other slope of 2p (the first h − p of 2^(−8/2p), 2^(−24/2p), …), so the extra
    heads fall between the others. The result has the default float dtype.
    """
    require_positive_int("num_heads", num_heads)
    p = 1 << (num_heads.bit_length() - 1)  # the largest power of two ≤ num_heads
    slopes = _geometric_slopes(p)  # (p,)
    if p < num_heads:
        slopes = torch.cat([slopes, _geometric_slopes(2 * p)[0::2][: num_heads - p]])  # (h,)
    return slopes.to(torch.get_default_dtype())


def alibi_bias(num_heads: int, n: int, m: int | None = None) -> torch.Tensor:
    """The (num_heads, n, m) bias ``−slope_h · |i + (m − n) − j|`` added to the scores.

    Query i sits at position i + (m − n), as in ``masks.causal_mask``: with m > n keys (a
    cache) the queries are the last n positions. The bias is 0 on a query's own position and
    falls linearly with distance, faster in the heads with larger slopes. The paper uses it
    with a causal mask, so only keys at or before the query matter there.
    """
    slopes = alibi_slopes(num_heads)  # (h,)
    require_positive_int("n", n)
    m = n if m is None else require_positive_int("m", m)
    i = torch.arange(n).unsqueeze(1) + (m - n)  # (n, 1): the queries' positions
    j = torch.arange(m).unsqueeze(0)  # (1, m)
    distance = (i - j).abs().to(slopes.dtype)  # (n, m)
    return -slopes.view(-1, 1, 1) * distance  # (h, n, m)


def _geometric_slopes(h: int) -> torch.Tensor:
    """2^(−8k/h) for k = 1 … h, in float64."""
    return 2.0 ** (-8.0 * torch.arange(1, h + 1, dtype=torch.float64) / h)  # (h,)


# --- one query and one key under each scheme (q25) -----------------------------------------

SCHEMES = ("none", "sinusoidal", "learned", "rope", "alibi")


def _check_position_scores_inputs(q, k, scheme: str, num_positions: int) -> None:
    """q and k: (d,) floating vectors of one shape; a known scheme; a positive count."""
    require_tensor("q", q, floating=True)
    require_tensor("k", k, floating=True)
    if q.ndim != 1 or k.shape != q.shape:
        raise ValueError(
            f"q has shape {shape_str(q.shape)} and k has shape {shape_str(k.shape)}; "
            f"both must be (d,) with the same d"
        )
    if scheme not in SCHEMES:
        raise ValueError(f"scheme must be one of {SCHEMES}, got {scheme!r}")
    require_positive_int("num_positions", num_positions)


def position_scores(
    q: torch.Tensor,
    k: torch.Tensor,
    scheme: str,
    num_positions: int,
    *,
    theta: torch.Tensor | None = None,
    slope: float = 1 / 16,
    table: torch.Tensor | None = None,
) -> torch.Tensor:
    """The (num_positions, num_positions) scores of one query content q placed at position m
    against one key content k placed at position n, for every m (rows) and n (columns).

    Only the positions change, so the matrix shows what each scheme does with them. Scores
    are scaled by 1/√d, as softmax sees them:

    * ``"none"``: q·k/√d everywhere;
    * ``"sinusoidal"``: (q + PE[m])·(k + PE[n])/√d, the encoding added to the inputs;
    * ``"learned"``: (q + table[m])·(k + table[n])/√d for a (trained_length, d) table; NaN
      where m or n has no row, for a learned table has nothing to say past its length;
    * ``"rope"``: R(m)q · R(n)k/√d with the frequencies ``theta`` (default base 10000);
    * ``"alibi"``: q·k/√d − slope·|m − n|, the bias added after scaling as in the paper.

    q and k are (d,) vectors; d is even for the sinusoidal encoding and RoPE.
    """
    _check_position_scores_inputs(q, k, scheme, num_positions)
    q, k = q.double(), k.double()
    d = q.shape[0]
    scale = d**-0.5
    pos = torch.arange(num_positions)  # (N,)
    offset = pos.unsqueeze(1) - pos.unsqueeze(0)  # (N, N): m − n
    if scheme == "none":
        return torch.full(offset.shape, (q @ k).item() * scale, dtype=torch.float64)
    if scheme == "alibi":
        require_positive_number("slope", slope)
        return (q @ k) * scale - slope * offset.abs().double()  # (N, N)
    if scheme == "rope":
        theta = _rope_theta(d, 10000.0) if theta is None else theta
        return rope_score_by_offset(q, k, offset.flatten(), theta).view(offset.shape) * scale
    if scheme == "sinusoidal":
        p = sinusoidal_encoding(num_positions, d).double()  # (N, d)
        return (q + p) @ (k + p).T * scale  # (N, N)
    require_tensor("table", table, floating=True)
    if table.ndim != 2 or table.shape[1] != d:
        raise ValueError(f"table has shape {shape_str(table.shape)} but should be (L, {d})")
    rows = torch.full((num_positions, d), float("nan"), dtype=torch.float64)  # (N, d)
    have = min(num_positions, table.shape[0])
    rows[:have] = table[:have].double()
    return (q + rows) @ (k + rows).T * scale  # (N, N), NaN beyond the table


def _check_rope_pair(q, k, theta) -> torch.Tensor:
    """q and k: (d,) of one even d; returns theta as a (d/2,) float64 tensor."""
    require_tensor("q", q, floating=True)
    d = q.shape[-1]
    if q.ndim != 1 or k.shape != q.shape or d % 2:
        raise ValueError(
            f"q has shape {shape_str(q.shape)} and k has shape {shape_str(k.shape)}; "
            f"both must be (d,) with the same even d"
        )
    theta = torch.as_tensor(theta, dtype=torch.float64)
    if theta.shape != (d // 2,):
        raise ValueError(f"theta has shape {shape_str(theta.shape)} but should be ({d // 2},)")
    return theta


def rope_score_by_offset(q, k, offsets, theta) -> torch.Tensor:
    """R(m)q · R(n)k as a function of the offset m − n alone, one value per offset.

    Rotating q by mθᵢ and k by nθᵢ leaves, in each pair, the angle (m − n)θᵢ between them:
    pair i adds aᵢ cos((m − n)θᵢ) + bᵢ sin((m − n)θᵢ) with aᵢ = q₂ᵢk₂ᵢ + q₂ᵢ₊₁k₂ᵢ₊₁ and
    bᵢ = q₂ᵢk₂ᵢ₊₁ − q₂ᵢ₊₁k₂ᵢ. q, k: (d,); offsets: (T,) numbers (fractional ones allowed,
    as position interpolation makes them); theta: (d/2,). Returns (T,) in float64.
    """
    theta = _check_rope_pair(q, k, theta)  # (d/2,) float64
    d = q.shape[-1]
    qp, kp = q.double().view(d // 2, 2), k.double().view(d // 2, 2)  # (d/2, 2) each
    a = qp[:, 0] * kp[:, 0] + qp[:, 1] * kp[:, 1]  # (d/2,)
    b = qp[:, 0] * kp[:, 1] - qp[:, 1] * kp[:, 0]  # (d/2,)
    angles = torch.as_tensor(offsets, dtype=torch.float64).unsqueeze(-1) * theta  # (T, d/2)
    return (a * angles.cos() + b * angles.sin()).sum(-1)  # (T,)


def _check_yarn(trained_length, alpha, beta) -> None:
    """YaRN's arguments: a trained length, and 0 < alpha < beta."""
    if trained_length is None:
        raise ValueError("method 'yarn' needs trained_length, the context trained on")
    require_positive_int("trained_length", trained_length)
    require_positive_number("alpha", alpha)
    require_positive_number("beta", beta)
    if not alpha < beta:
        raise ValueError(f"alpha must be below beta, got alpha={alpha}, beta={beta}")


def scaled_rope_frequencies(
    d: int, base: float = 10000.0, scale: float = 1.0, method: str = "interpolation",
    trained_length: int | None = None, alpha: float = 1.0, beta: float = 32.0,
) -> torch.Tensor:
    """The (d/2,) frequencies for running a RoPE model at ``scale`` times its trained length.

    * ``"interpolation"`` (Chen et al., 2023, "Extending Context Window of Large Language
      Models via Positional Interpolation"): positions are divided by the scale, which is
      every θᵢ divided by it; offsets past the trained length turn no pair further than
      training did, but neighbours now sit ``1/scale`` of a step apart.
    * ``"ntk"`` ("NTK-aware" scaling, bloc97, 2023; the idea YaRN refines): the base grows to
      base·scale^(d/(d−2)); the fastest pair (θ₀ = 1) is untouched, the slowest is slowed by
      exactly the scale, and the pairs between by less.
    * ``"yarn"`` (Peng et al., 2023, "YaRN", section 3.2, "NTK-by-parts"): pair i completes
      rᵢ = L / λᵢ turns in the ``trained_length`` L (wavelength λᵢ = 2π/θᵢ). A pair with
      rᵢ > ``beta`` keeps θᵢ, one with rᵢ < ``alpha`` is interpolated to θᵢ/scale, and
      between them θᵢ·((1 − γ)/scale + γ) with the ramp γ = (rᵢ − alpha)/(beta − alpha).
      (YaRN also multiplies the logits by (0.1·ln scale + 1)², a separate step.)

    Returned in float64.
    """
    require_positive_int("d", d)
    if d % 2 or d < 4:
        raise ValueError(f"d must be even and at least 4, got {d}")
    require_positive_number("scale", scale)
    theta = _rope_theta(d, base)  # (d/2,)
    if method == "interpolation":
        return theta / scale  # (d/2,)
    if method == "ntk":
        return _rope_theta(d, float(base) * scale ** (d / (d - 2)))  # (d/2,)
    if method == "yarn":
        _check_yarn(trained_length, alpha, beta)
        turns = trained_length * theta / (2 * math.pi)  # (d/2,): r_i = L / λ_i
        ramp = ((turns - alpha) / (beta - alpha)).clamp(0.0, 1.0)  # (d/2,): γ, 1 = keep θ_i
        return theta * ((1 - ramp) / scale + ramp)  # (d/2,)
    raise ValueError(f"method must be 'interpolation', 'ntk' or 'yarn', got {method!r}")


def learned_position_table(num_positions: int, d: int, seed: int = 0) -> torch.Tensor:
    """A stand-in for a trained (num_positions, d) table of position vectors: seeded random
    rows of norm about √(d/2), like the sinusoidal encoding's. A model with such a table
    (BERT, GPT-2) has no vector for a position at or past ``num_positions``."""
    require_positive_int("num_positions", num_positions)
    require_positive_int("d", d)
    g = torch.Generator().manual_seed(seed)
    return torch.randn(num_positions, d, generator=g, dtype=torch.float64) / 2**0.5


# The position schemes q25 compares, and how it names them.
SCHEME_NAMES = ("sinusoidal", "learned", "rope", "rope-pi", "rope-ntk", "alibi")
SCHEME_LABELS = (
    "sinusoidal", "learned table", "RoPE", "RoPE + interpolation ×2", "RoPE + NTK, context ×2",
    "ALiBi",
)


# --- reading past the trained length: LogN scaling and dynamic NTK (q46) -----------------


def logn_scale(n: int, trained_length: int) -> float:
    """The factor LogN attention scaling multiplies the query of position ``n`` by:
    log(n) / log(trained_length) once n is past the trained length, 1 up to it.

    Qwen-7B's reference code (``modeling_qwen.py``, ``use_logn_attn``) builds the table
    ``math.log(i, seq_length) if i > seq_length else 1`` for i = 1, 2, …, and multiplies the
    query at (1-based) position i by it, so its scores, and the sharpness of its softmax, grow
    like log n (Qwen technical report, Bai et al., 2023, §2.5; Chiang & Cholak, 2022).
    """
    require_positive_int("n", n)
    require_positive_int("trained_length", trained_length)
    if trained_length < 2:
        raise ValueError(f"trained_length must be at least 2 (log 1 = 0), got {trained_length}")
    return math.log(n) / math.log(trained_length) if n > trained_length else 1.0


def dynamic_ntk_frequencies(d: int, base: float, seq_len: int, trained_length: int,
                            factor: float) -> torch.Tensor:
    """The (d/2,) RoPE frequencies of "dynamic NTK" scaling at a sequence of ``seq_len``
    tokens, in float64: θᵢ = base'^(−2i/d) with the base grown to
    base' = base · (factor · s / L − (factor − 1))^(d/(d−2)), s = max(seq_len, L), L the
    ``trained_length``. Up to L nothing changes; past it the base grows with the length read
    so far, as ``transformers`` computes it (``modeling_rope_utils``,
    ``_compute_dynamic_ntk_parameters``); ``factor`` 1 makes it s / L, NTK-aware scaling
    (``scaled_rope_frequencies(method="ntk")``) at the scale the sequence has reached.
    """
    require_positive_int("d", d)
    if d % 2 or d < 4:
        raise ValueError(f"d must be even and at least 4, got {d}")
    require_positive_number("base", base)
    require_positive_int("seq_len", seq_len)
    require_positive_int("trained_length", trained_length)
    require_positive_number("factor", factor)
    if factor < 1:
        raise ValueError(f"factor must be at least 1, got {factor}")
    s = max(seq_len, trained_length)
    grown = float(base) * (factor * s / trained_length - (factor - 1)) ** (d / (d - 2))
    return _rope_theta(d, grown)  # (d/2,)


def needle_attention(n: int, trained_length: int, *, logn: bool, needle: float | None = None,
                     seed: int = 0) -> torch.Tensor:
    """A toy for LogN scaling: one query's (n,) attention weights, float64, over n keys whose
    scores are seeded standard normal noise except key 0, the "needle", whose score is
    ``needle`` (default ln L, so that at n = L it holds about as much weight as all the
    noise together). With ``logn`` every score is multiplied by ``logn_scale(n, L)``. The
    noise of the first n keys is the same for every n (one seeded draw, cut to length)."""
    require_positive_int("n", n)
    scale = logn_scale(n, trained_length) if logn else 1.0
    if needle is None:
        needle = math.log(trained_length)
    g = torch.Generator().manual_seed(seed)
    noise = torch.randn(max(n, _NEEDLE_DRAW), generator=g, dtype=torch.float64)[:n]  # (n,)
    scores = noise.clone()
    scores[0] = float(needle)
    return torch.softmax(scale * scores, dim=0)  # (n,)


_NEEDLE_DRAW = 32768  # one draw long enough for every n the chapter reads


def attention_entropy(weights: torch.Tensor) -> float:
    """The entropy −Σ p log p (nats) of attention weights over the last dimension (one row)."""
    require_tensor("weights", weights, min_ndim=1, floating=True)
    p = weights[weights > 0]
    return float(-(p * p.log()).sum())
