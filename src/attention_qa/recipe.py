"""The training recipe of a Transformer: learning-rate schedules, gradient clipping, the
memory of training, and a tiny model to train with and without warm-up.

- ``noam_lr``: the 2017 schedule, lrate = d_model^-0.5 · min(step^-0.5, step · warmup^-1.5)
  (Vaswani et al., 2017, §5.3, eq. 3).
- ``warmup_linear_lr``: linear warm-up, then linear decay to 0 (BERT: Devlin et al., 2019,
  Appendix A.2; Hugging Face's ``get_linear_schedule_with_warmup``).
- ``warmup_cosine_lr``: linear warm-up, then a cosine to a floor ``min_lr`` (Loshchilov and
  Hutter, 2017, SGDR, without restarts; GPT-3 and LLaMA decay to 10 % of the peak).
- ``clip_grad_norm``: clipping by the global L2 norm, PyTorch's rule
  (``torch.nn.utils.clip_grad_norm_``: scale by max_norm / (total_norm + 1e-6) when below 1).
- ``training_memory_bytes``: weights, gradients and optimizer state per parameter (ZeRO,
  Rajbhandari et al., 2020, §3.1: mixed-precision Adam holds 2 + 2 + 12 = 16 bytes).
- ``train_tiny_lm``: a small Post-LN or Pre-LN language model (``blocks.ConfigurableBlock``;
  two layers by default, q40 trains four) trained with Adam under a schedule, in float64
  from ``training.portable_init_``; it returns the learning rate, loss and global gradient
  norm of every step.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
from torch import nn

from attention_qa.blocks import ConfigurableBlock, LayerNorm
from attention_qa.training import portable_init_, single_thread
from attention_qa.validation import (
    require_nonnegative_int,
    require_positive_int,
    require_positive_number,
)

SCHEDULES = ("constant", "linear", "cosine", "noam")
OPTIMIZERS = {"adamw": 2, "sgd_momentum": 1, "sgd": 0}  # 4-byte states per parameter
PRECISIONS = ("mixed", "fp32")


def noam_lr(step: int, d_model: int, warmup_steps: int) -> float:
    """Vaswani et al. (2017), eq. 3: d_model^-0.5 · min(step^-0.5, step · warmup_steps^-1.5).

    It rises linearly for ``warmup_steps`` steps and then falls as 1/√step; ``step`` ≥ 1 (at
    step 0 the formula divides by zero)."""
    step = _step(step, minimum=1)
    require_positive_int("d_model", d_model)
    require_positive_int("warmup_steps", warmup_steps)
    return d_model**-0.5 * min(step**-0.5, step * warmup_steps**-1.5)


def warmup_linear_lr(step: int, peak_lr: float, warmup_steps: int, total_steps: int) -> float:
    """Linear from 0 at step 0 to ``peak_lr`` at ``warmup_steps``, then linear to 0 at
    ``total_steps``, and 0 after (BERT's schedule)."""
    step = _step(step)
    peak_lr, warmup_steps, total_steps = _schedule_args(peak_lr, warmup_steps, total_steps)
    if step < warmup_steps:
        return peak_lr * step / warmup_steps
    if step >= total_steps:
        return 0.0
    return peak_lr * (total_steps - step) / (total_steps - warmup_steps)


def warmup_cosine_lr(step: int, peak_lr: float, warmup_steps: int, total_steps: int,
                     min_lr: float = 0.0) -> float:
    """The same linear warm-up, then min_lr + (peak_lr − min_lr) · ½(1 + cos(π · progress))
    with progress = (step − warmup_steps) / (total_steps − warmup_steps); ``min_lr`` after
    ``total_steps``."""
    step = _step(step)
    peak_lr, warmup_steps, total_steps = _schedule_args(peak_lr, warmup_steps, total_steps)
    if not isinstance(min_lr, (int, float)) or isinstance(min_lr, bool) or not (
            0 <= min_lr <= peak_lr):
        raise ValueError(f"min_lr must be a number in [0, peak_lr = {peak_lr}], got {min_lr!r}")
    if step < warmup_steps:
        return peak_lr * step / warmup_steps
    if step >= total_steps:
        return float(min_lr)
    progress = (step - warmup_steps) / (total_steps - warmup_steps)
    return min_lr + (peak_lr - min_lr) * 0.5 * (1 + math.cos(math.pi * progress))


def clip_grad_norm(grads: Sequence[torch.Tensor], max_norm: float
                   ) -> tuple[list[torch.Tensor], torch.Tensor]:
    """Clip by the global L2 norm: (clipped gradients, total norm before clipping).

    total_norm = √(Σ over every tensor and element of g²); when max_norm / (total_norm + 1e-6)
    is below 1, every tensor is scaled by it (the direction of the whole update is kept),
    else nothing changes. The inputs are not modified (``torch.nn.utils.clip_grad_norm_``
    scales them in place)."""
    grads = list(grads)
    if not grads:
        raise ValueError("grads must hold at least one tensor, got none")
    for i, g in enumerate(grads):
        if not isinstance(g, torch.Tensor) or not g.is_floating_point():
            raise ValueError(f"grads[{i}] must be a floating-point tensor, got "
                             f"{getattr(g, 'dtype', type(g).__name__)}")
    max_norm = require_positive_number("max_norm", max_norm)
    total_norm = torch.stack([g.double().pow(2).sum() for g in grads]).sum().sqrt()  # ()
    coefficient = torch.clamp(max_norm / (total_norm + 1e-6), max=1.0)
    clipped = [(g.double() * coefficient).to(g.dtype) for g in grads]
    return clipped, total_norm.to(grads[0].dtype)


def training_memory_bytes(num_params: int, optimizer: str = "adamw",
                          precision: str = "mixed") -> dict[str, int]:
    """Bytes of weights, gradients and optimizer state (activations excluded).

    ``"mixed"``: 2-byte (fp16/bf16) weights and gradients, and a 4-byte fp32 master copy of
    the weights counted with the optimizer; ``"fp32"``: 4-byte weights and gradients, no
    copy. ``optimizer``: ``"adamw"`` two 4-byte moments, ``"sgd_momentum"`` one, ``"sgd"``
    none. Mixed-precision Adam: 2 + 2 + (4 + 4 + 4) = 16 bytes per parameter (ZeRO §3.1).
    """
    num_params = require_positive_int("num_params", num_params)
    if optimizer not in OPTIMIZERS:
        raise ValueError(f"optimizer must be one of {tuple(OPTIMIZERS)}, got {optimizer!r}")
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {PRECISIONS}, got {precision!r}")
    weight_bytes = 2 if precision == "mixed" else 4
    master = 4 if precision == "mixed" else 0
    memory = {
        "weights": weight_bytes * num_params,
        "gradients": weight_bytes * num_params,
        "optimizer": (master + 4 * OPTIMIZERS[optimizer]) * num_params,
    }
    memory["total"] = sum(memory.values())
    return memory


def schedule_lr(schedule: str, step: int, peak_lr: float, warmup_steps: int,
                total_steps: int, min_lr: float = 0.0, d_model: int = 512) -> float:
    """One schedule by name (``SCHEDULES``) at ``step``: ``"constant"`` is ``peak_lr`` after
    the linear warm-up; ``"noam"`` is eq. 3 scaled so that its top, at ``warmup_steps``, is
    ``peak_lr`` (``d_model`` cancels) and counts steps from 1."""
    if schedule == "constant":
        peak_lr, warmup_steps, total_steps = _schedule_args(peak_lr, warmup_steps, total_steps)
        return peak_lr * min(1.0, _step(step) / warmup_steps) if warmup_steps else peak_lr
    if schedule == "linear":
        return warmup_linear_lr(step, peak_lr, warmup_steps, total_steps)
    if schedule == "cosine":
        return warmup_cosine_lr(step, peak_lr, warmup_steps, total_steps, min_lr)
    if schedule == "noam":
        top = noam_lr(warmup_steps, d_model, warmup_steps)
        return peak_lr * noam_lr(_step(step) + 1, d_model, warmup_steps) / top
    raise ValueError(f"schedule must be one of {SCHEDULES}, got {schedule!r}")


class TinyLM(nn.Module):
    """Token embedding, ``num_layers`` causal ``ConfigurableBlock``s (Post-LN or Pre-LN, the
    latter with a final LayerNorm, as GPT-2) and an output head. (B, n) ids → (B, n, vocab)."""

    def __init__(self, vocab: int, d_model: int, num_heads: int, num_layers: int,
                 norm_first: bool):
        super().__init__()
        self.embed = nn.Embedding(vocab, d_model)
        self.position = nn.Parameter(torch.zeros(64, d_model))
        self.blocks = nn.ModuleList(
            ConfigurableBlock(d_model, num_heads, 4 * d_model, norm_first=norm_first)
            for _ in range(num_layers))
        self.final_norm = LayerNorm(d_model) if norm_first else nn.Identity()
        self.head = nn.Linear(d_model, vocab)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        x = self.embed(ids) + self.position[: ids.shape[1]]  # (B, n, d_model)
        for block in self.blocks:
            x = block(x)
        return self.head(self.final_norm(x))  # (B, n, vocab)


def tiny_lm_batch(g: torch.Generator, batch: int = 8, n: int = 12, vocab: int = 16):
    """Sequences that follow a fixed rule, next token = (7 · token + 3) mod vocab from a random
    first token; inputs (B, n) and targets (B, n), the targets shifted by one."""
    seq = [torch.randint(vocab, (batch,), generator=g)]
    for _ in range(n):
        seq.append((7 * seq[-1] + 3) % vocab)
    seq = torch.stack(seq, dim=1)  # (B, n + 1)
    return seq[:, :-1], seq[:, 1:]


def train_tiny_lm(*, norm_first: bool, schedule: str = "constant", warmup_steps: int = 0,
                  peak_lr: float = 1e-2, steps: int = 60, num_layers: int = 2,
                  d_model: int = 16, num_heads: int = 2, vocab: int = 16, n: int = 12,
                  batch: int = 8, seed: int = 0) -> dict[str, list[float]]:
    """Train ``TinyLM`` with Adam on ``tiny_lm_batch``'s sequences; returns ``lr``, ``loss``
    (cross-entropy in nats) and ``grad_norm`` (global L2 norm before the step), one
    value per step. Float64 from ``portable_init_``: the same curves on every machine."""
    require_nonnegative_int("warmup_steps", warmup_steps)
    require_positive_int("steps", steps)
    require_positive_number("peak_lr", peak_lr)
    if schedule not in SCHEDULES:
        raise ValueError(f"schedule must be one of {SCHEDULES}, got {schedule!r}")
    model = portable_init_(TinyLM(vocab, d_model, num_heads, num_layers, norm_first), seed)
    opt = torch.optim.Adam(model.parameters(), lr=peak_lr)
    g = torch.Generator().manual_seed(seed + 1)
    out = {"lr": [], "loss": [], "grad_norm": []}
    with single_thread():
        for step in range(steps):
            lr = schedule_lr(schedule, step, peak_lr, warmup_steps, steps)
            for group in opt.param_groups:
                group["lr"] = lr
            inputs, targets = tiny_lm_batch(g, batch, n, vocab)
            logits = model(inputs)  # (B, n, vocab)
            loss = nn.functional.cross_entropy(logits.reshape(-1, vocab), targets.reshape(-1))
            opt.zero_grad()
            loss.backward()
            norm = torch.stack([p.grad.pow(2).sum() for p in model.parameters()
                                if p.grad is not None]).sum().sqrt()
            opt.step()
            out["lr"].append(lr)
            out["loss"].append(loss.item())
            out["grad_norm"].append(norm.item())
    return out


def _step(step, minimum: int = 0) -> int:
    if isinstance(step, bool) or not isinstance(step, int) or step < minimum:
        raise ValueError(f"step must be an integer ≥ {minimum}, got {step!r}")
    return step


def _schedule_args(peak_lr, warmup_steps, total_steps):
    peak_lr = require_positive_number("peak_lr", peak_lr)
    warmup_steps = require_nonnegative_int("warmup_steps", warmup_steps)
    total_steps = require_positive_int("total_steps", total_steps)
    if warmup_steps > total_steps:
        raise ValueError(f"warmup_steps = {warmup_steps} is beyond total_steps = {total_steps}")
    return peak_lr, warmup_steps, total_steps
