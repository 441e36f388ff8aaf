"""attention_qa.recipe against PyTorch's own schedulers, clipping and a direct count."""

import math

import pytest
import torch
from torch import nn

from attention_qa.recipe import (
    clip_grad_norm,
    noam_lr,
    schedule_lr,
    train_tiny_lm,
    training_memory_bytes,
    warmup_cosine_lr,
    warmup_linear_lr,
)


def _lambda_lrs(lr_lambda, steps, base=1.0):
    """The learning rates torch.optim.lr_scheduler.LambdaLR gives at steps 0 … steps − 1."""
    opt = torch.optim.SGD([nn.Parameter(torch.zeros(1))], lr=base)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lr_lambda)
    lrs = []
    for _ in range(steps):
        lrs.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
    return lrs


def test_noam_is_eq_3_and_peaks_at_the_warmup():
    lrs = [noam_lr(s, 512, 4000) for s in range(1, 20001)]
    assert max(range(len(lrs)), key=lrs.__getitem__) + 1 == 4000
    assert math.isclose(noam_lr(4000, 512, 4000), 512**-0.5 * 4000**-0.5)
    assert math.isclose(noam_lr(16000, 512, 4000), 512**-0.5 * 16000**-0.5)
    assert math.isclose(noam_lr(100, 512, 4000), 512**-0.5 * 100 * 4000**-1.5)


def test_linear_warmup_and_decay_equal_a_lambda_scheduler():
    peak, warmup, total = 3e-4, 10, 50

    def hf_linear(step):  # transformers.get_linear_schedule_with_warmup's lambda
        if step < warmup:
            return step / max(1, warmup)
        return max(0.0, (total - step) / max(1, total - warmup))

    want = _lambda_lrs(hf_linear, total + 5, base=peak)
    got = [warmup_linear_lr(s, peak, warmup, total) for s in range(total + 5)]
    assert got == pytest.approx(want, rel=1e-12, abs=1e-15)


def test_cosine_after_warmup_equals_cosine_annealing_lr():
    peak, floor, warmup, total = 1.0, 0.1, 8, 40
    opt = torch.optim.SGD([nn.Parameter(torch.zeros(1))], lr=peak)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=total - warmup, eta_min=floor)
    for s in range(warmup, total + 1):
        assert warmup_cosine_lr(s, peak, warmup, total, floor) == pytest.approx(
            opt.param_groups[0]["lr"], rel=1e-9)
        opt.step()
        sched.step()
    assert [warmup_cosine_lr(s, peak, warmup, total, floor) for s in (0, 4, 8)] == [0, 0.5, 1]
    assert warmup_cosine_lr(total + 10, peak, warmup, total, floor) == floor


def test_schedule_lr_by_name():
    assert schedule_lr("constant", 3, 1.0, 6, 20) == 0.5
    assert schedule_lr("constant", 0, 1.0, 0, 20) == 1.0
    assert schedule_lr("noam", 9, 2.0, 10, 20) == pytest.approx(2.0)
    with pytest.raises(ValueError, match="schedule must be one of"):
        schedule_lr("step", 0, 1.0, 0, 10)


def test_clip_grad_norm_equals_torch_clip_grad_norm_():
    g = torch.Generator().manual_seed(0)
    for scale, max_norm in ((10.0, 1.0), (0.01, 1.0), (3.0, 5.0)):
        shapes = ((4, 3), (3,), (2, 2, 2))
        params = [nn.Parameter(torch.zeros(s, dtype=torch.float64)) for s in shapes]
        grads = [torch.randn(p.shape, generator=g, dtype=torch.float64) * scale for p in params]
        for p, gr in zip(params, grads, strict=True):
            p.grad = gr.clone()
        want_norm = torch.nn.utils.clip_grad_norm_(params, max_norm)
        before = [gr.clone() for gr in grads]
        clipped, total = clip_grad_norm(grads, max_norm)
        assert torch.allclose(total, want_norm)
        for c, p in zip(clipped, params, strict=True):
            assert torch.allclose(c, p.grad, rtol=1e-12, atol=0)
        assert all(torch.equal(a, b) for a, b in zip(grads, before, strict=True))


def test_training_memory_counts_bytes_per_parameter():
    assert training_memory_bytes(1)["total"] == 16  # ZeRO §3.1: 2 + 2 + 12
    assert training_memory_bytes(1_500_000_000)["total"] == 24_000_000_000  # GPT-2 1.5B: 24 GB
    assert training_memory_bytes(10, "adamw", "fp32") == {
        "weights": 40, "gradients": 40, "optimizer": 80, "total": 160}
    assert training_memory_bytes(10, "sgd_momentum", "mixed")["optimizer"] == 80
    assert training_memory_bytes(10, "sgd", "fp32")["total"] == 80


@pytest.mark.parametrize(("call", "words"), [
    (lambda: noam_lr(0, 512, 4000), "step must be an integer ≥ 1"),
    (lambda: noam_lr(1, 512, 0), "warmup_steps must be a positive integer"),
    (lambda: warmup_linear_lr(1, -1.0, 2, 10), "peak_lr must be a positive"),
    (lambda: warmup_linear_lr(1, 1.0, 20, 10), "warmup_steps = 20 is beyond total_steps = 10"),
    (lambda: warmup_cosine_lr(1, 1.0, 2, 10, min_lr=2.0), "min_lr must be a number in"),
    (lambda: warmup_cosine_lr(-1, 1.0, 2, 10), "step must be an integer ≥ 0"),
    (lambda: clip_grad_norm([], 1.0), "at least one tensor"),
    (lambda: clip_grad_norm([torch.ones(2, dtype=torch.long)], 1.0), "grads\\[0\\] must be"),
    (lambda: clip_grad_norm([torch.ones(2)], 0.0), "max_norm must be a positive"),
    (lambda: training_memory_bytes(10, "adam8bit"), "optimizer must be one of"),
    (lambda: training_memory_bytes(10, precision="bf16"), "precision must be one of"),
    (lambda: training_memory_bytes(0), "num_params must be a positive integer"),
])
def test_bad_input_is_refused_with_a_message(call, words):
    with pytest.raises(ValueError, match=words):
        call()


def test_the_tiny_model_is_deterministic_and_learns():
    a = train_tiny_lm(norm_first=True, schedule="cosine", warmup_steps=5, steps=12)
    b = train_tiny_lm(norm_first=True, schedule="cosine", warmup_steps=5, steps=12)
    assert a == b
    assert a["lr"][0] == 0 and a["loss"][-1] < a["loss"][0]
    assert len(a["grad_norm"]) == 12
