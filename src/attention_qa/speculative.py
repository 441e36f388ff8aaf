"""Speculative decoding's acceptance rule (q34).

Leviathan, Kalman and Matias (2023), "Fast Inference from Transformers via Speculative
Decoding", Algorithm 1; Chen et al. (2023), "Accelerating Large Language
Model Decoding with Speculative Sampling", Algorithm 2, whose letters are swapped (there q is
the target and p the draft; here, as in Leviathan et al., p is the target and q the draft).
A draft model proposes γ tokens;
the target model scores them all in one pass. Drafted token x at position i is accepted
with probability min(1, p_i(x) / q_i(x)); at the first rejection a token is drawn from the
residual norm(max(p_i − q_i, 0)) and the step ends; when all γ are accepted, one more token
is drawn from the target's next distribution. Every token emitted this way is distributed
exactly as the target would have sampled it, in exact arithmetic (both papers prove it; Chen
et al. say "within hardware numerics"). Under Leviathan et al.'s simplifying assumption
(§3.1) that the acceptance rates β of successive positions are i.i.d. with mean α, a step
emits (1 − α^(γ+1)) / (1 − α) tokens on average, and the speed-up (Theorem 3.8) assumes a
target pass over γ + 1 tokens takes as long as one over a single token (§3.3);
``verify_time_ratio`` says when the roofline (q33) allows that.
"""

import numbers

import torch

from attention_qa.inference import roofline_seconds, step_costs
from attention_qa.validation import require_generator, require_nonnegative_int, shape_str


def speculative_accept(p: torch.Tensor, q: torch.Tensor, draft_tokens: torch.Tensor,
                       generator=None) -> list[int]:
    """The tokens one speculative step emits: between 1 and γ + 1 of them.

    p: (γ + 1, V) the target's probabilities at the γ drafted positions and the one after;
    q: (γ, V) the draft's probabilities; draft_tokens: (γ,) the drafted ids, drawn from q.
    """
    gamma = _check_inputs(p, q, draft_tokens)
    require_generator("generator", generator)
    p, q = p.double(), q.double()
    emitted = []
    for i, x in enumerate(draft_tokens.tolist()):
        u = torch.rand((), generator=generator, dtype=torch.float64)  # in [0, 1)
        # u < p/q, written without dividing by q; strict, so that a token with p(x) = 0 is
        # never kept, even when u is exactly 0.
        if u * q[i, x] < p[i, x]:
            emitted.append(x)
            continue
        residual = (p[i] - q[i]).clamp(min=0)  # (V,), positive: q(x) > p(x) here
        emitted.append(_draw(residual, generator))
        return emitted
    emitted.append(_draw(p[gamma], generator))
    return emitted


def expected_tokens_per_step(alpha: float, gamma: int) -> float:
    """(1 − α^(γ+1)) / (1 − α) tokens per target pass; γ + 1 when α = 1."""
    if (isinstance(alpha, bool) or not isinstance(alpha, numbers.Real)
            or not 0 <= alpha <= 1):
        raise ValueError(f"alpha must be a number in [0, 1], got {alpha!r}")
    require_nonnegative_int("gamma", gamma)
    if alpha == 1:
        return float(gamma + 1)
    return (1 - alpha ** (gamma + 1)) / (1 - alpha)


def acceptance_rate(p: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
    """α = Σ_x min(p(x), q(x)) over the last dim: the chance a token drawn from q is kept.

    Equal to 1 − TV(p, q), one minus the total variation distance. p, q: (..., V)
    probabilities; returns (...), in p's dtype.
    """
    for name, x in (("p", p), ("q", q)):
        if not isinstance(x, torch.Tensor) or not x.is_floating_point() or x.ndim < 1:
            raise ValueError(f"{name} must be a floating-point tensor of probabilities (..., V)")
    if p.shape != q.shape:
        raise ValueError(f"p {shape_str(p.shape)} and q {shape_str(q.shape)} must have the "
                         f"same shape")
    return torch.minimum(p, q).sum(dim=-1)  # (...)


def speedup(alpha: float, gamma: int, cost: float, verify: float = 1.0) -> float:
    """Expected tokens per target pass over the time of a step, in units of one ordinary
    decode step: a step runs the draft γ times (each ``cost`` of a decode step) and one
    target pass that verifies γ + 1 tokens and takes ``verify`` decode steps, so
    (1 − α^(γ+1)) / ((1 − α)(γ·cost + verify)). Leviathan et al.'s Theorem 3.8 is the case
    verify = 1 (§3.3: γ + 1 positions cost no more than one). Above 1 is a speed-up."""
    require_nonnegative_int("gamma", gamma)
    for name, value in (("cost", cost), ("verify", verify)):
        if (isinstance(value, bool) or not isinstance(value, numbers.Real)
                or not 0 <= value < float("inf")):
            raise ValueError(f"{name} must be a non-negative, finite number, got {value!r}")
    if verify < 1:
        raise ValueError(f"verify must be at least 1 (a pass over γ + 1 tokens is never "
                         f"faster than one over a single token), got {verify!r}")
    return expected_tokens_per_step(alpha, gamma) / (gamma * cost + verify)


def verify_time_ratio(model: str, batch: int, gamma: int, context: int) -> float:
    """The roofline's time (q33's ``step_costs`` and ``roofline_seconds``, on an H100) of
    one target pass that adds γ + 1 tokens to each of ``batch`` sequences, over that of an
    ordinary decode step that adds one; each sequence's cache then holds ``context`` tokens.
    It is 1 while the verifying pass stays memory-bound, and grows once its FLOPs per byte
    pass the ridge. A bound from the hardware's peak figures, not a measurement."""
    require_nonnegative_int("gamma", gamma)
    verify = step_costs(model, batch, gamma + 1, context)
    decode = step_costs(model, batch, 1, context)
    return (roofline_seconds(verify["flops"], verify["bytes"])
            / roofline_seconds(decode["flops"], decode["bytes"]))


def toy_pair(alpha: float) -> tuple[torch.Tensor, torch.Tensor]:
    """A target p and a draft q over 4 tokens that agree on mass α: both put α evenly on
    tokens 0 and 1, then p puts the rest on token 2 and q on token 3, so Σ min(p, q) = α."""
    if (isinstance(alpha, bool) or not isinstance(alpha, numbers.Real)
            or not 0 <= alpha <= 1):
        raise ValueError(f"alpha must be a number in [0, 1], got {alpha!r}")
    p = torch.tensor([alpha / 2, alpha / 2, 1 - alpha, 0.0], dtype=torch.float64)
    q = torch.tensor([alpha / 2, alpha / 2, 0.0, 1 - alpha], dtype=torch.float64)
    return p, q


def sampled_steps(alpha: float, gamma: int, steps: int, seed: int = 0) -> list[list[str]]:
    """``steps`` speculative steps on ``toy_pair(alpha)``, each a list of what happened to
    its tokens: "accepted" drafts, then a "resampled" token at the first rejection or a
    "bonus" token when all γ were accepted."""
    require_nonnegative_int("steps", steps)
    p, q = toy_pair(alpha)
    g = torch.Generator().manual_seed(seed)
    out = []
    for _ in range(steps):
        drafts = torch.tensor([_draw(q, g) for _ in range(gamma)], dtype=torch.long)  # (γ,)
        emitted = speculative_accept(p.expand(gamma + 1, -1), q.expand(gamma, -1), drafts,
                                     generator=g)
        accepted = len(emitted) - 1
        last = "bonus" if accepted == gamma else "resampled"
        out.append(["accepted"] * accepted + [last])
    return out


def _draw(weights: torch.Tensor, generator) -> int:
    return int(torch.multinomial(weights, 1, generator=generator))


def _check_inputs(p, q, draft_tokens) -> int:
    for name, x in (("p", p), ("q", q)):
        if not isinstance(x, torch.Tensor) or not x.is_floating_point() or x.ndim != 2:
            got = shape_str(x.shape) if isinstance(x, torch.Tensor) else type(x).__name__
            raise ValueError(f"{name} must be a 2-D floating-point tensor of probabilities, "
                             f"got {got}")
        if (x < 0).any() or not torch.isfinite(x).all():
            raise ValueError(f"{name} must hold finite, non-negative probabilities")
        if not torch.allclose(x.double().sum(-1), torch.ones(x.shape[0], dtype=torch.float64),
                              atol=1e-4):
            raise ValueError(f"every row of {name} must sum to 1")
    gamma = q.shape[0]
    if p.shape != (gamma + 1, q.shape[1]):
        raise ValueError(f"p has shape {shape_str(p.shape)} but must be (γ + 1, V) = "
                         f"({gamma + 1}, {q.shape[1]}) for q of shape {shape_str(q.shape)}")
    if (not isinstance(draft_tokens, torch.Tensor) or draft_tokens.is_floating_point()
            or draft_tokens.shape != (gamma,)):
        got = (shape_str(draft_tokens.shape) if isinstance(draft_tokens, torch.Tensor)
               else type(draft_tokens).__name__)
        raise ValueError(f"draft_tokens must be an integer tensor of shape ({gamma},), got {got}")
    if gamma and (draft_tokens.min() < 0 or draft_tokens.max() >= q.shape[1]):
        raise ValueError(f"draft_tokens must be ids in [0, V) = [0, {q.shape[1]})")
    picked = q[torch.arange(gamma), draft_tokens]  # (γ,)
    if (picked == 0).any():
        raise ValueError("a drafted token has draft probability 0: it cannot have been drawn "
                         "from q")
    return gamma
