"""Measuring code without letting the machine decide a result: memory, FLOPs and time.

``peak_memory_bytes`` and ``count_flops`` count what PyTorch allocates and computes, so
their figures are the same on every machine and can carry a chapter's claims.
``best_time`` measures wall-clock time, which depends on the CPU and on what else runs:
chapters show it in cells whose output is not compared, and assert nothing about it.
"""

import math
import os
import sys
import time
from contextlib import contextmanager

import torch
from torch.autograd import DeviceType
from torch.profiler import ProfilerActivity, profile
from torch.utils.flop_counter import FlopCounterMode


def peak_memory_bytes(fn, *args, **kwargs):
    """Run ``fn(*args, **kwargs)`` and return ``(result, peak)``, peak in bytes.

    peak is the largest total of CPU tensor memory allocated during the call and not yet
    freed, counting from zero when the call starts, so the inputs are not counted and the
    result is. It replays the allocation and free records that ``torch.profiler`` keeps with
    ``profile_memory=True`` (every request to PyTorch's CPU allocator, also those made inside
    a fused kernel), in the order they happened. It does not depend on timing, but it sees
    only PyTorch's allocator, not memory that Python or a library gets elsewhere.
    """
    with _stderr_descriptor_silenced():
        with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
            result = fn(*args, **kwargs)
    records = [
        e
        for e in prof.profiler.kineto_results.events()
        if e.name() == "[memory]" and e.device_type() == DeviceType.CPU
    ]
    records.sort(key=lambda e: e.start_ns())  # stable: ties keep the recorded order
    live = peak = 0
    for record in records:
        live += record.nbytes()  # positive for an allocation, negative for a free
        peak = max(peak, live)
    return result, peak


def count_flops(fn, *args, **kwargs) -> int:
    """FLOPs of ``fn(*args, **kwargs)`` as counted by ``torch.utils.flop_counter``.

    A multiply-add counts as 2. Only the operations the counter knows (matrix products,
    convolutions, attention kernels) are counted; elementwise work is not.
    """
    with FlopCounterMode(display=False) as counter, torch.no_grad():
        fn(*args, **kwargs)
    return counter.get_total_flops()


def best_time(fn, *args, repeats: int = 5, **kwargs) -> float:
    """The fastest of ``repeats`` calls of ``fn(*args, **kwargs)``, in seconds, after a
    warm-up call. The minimum is the run least disturbed by the rest of the machine.
    """
    fn(*args, **kwargs)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn(*args, **kwargs)
        times.append(time.perf_counter() - start)
    return min(times)


def loglog_slope(xs, ys) -> float:
    """Least-squares slope of log y against log x: the p in y ∝ xᵖ."""
    lx = [math.log(x) for x in xs]
    ly = [math.log(y) for y in ys]
    mx, my = sum(lx) / len(lx), sum(ly) / len(ly)
    return sum((a - mx) * (b - my) for a, b in zip(lx, ly, strict=True)) / sum(
        (a - mx) ** 2 for a in lx
    )


@contextmanager
def _stderr_descriptor_silenced():
    """Send what is written to file descriptor 2 inside the block to the null device.

    The profiler logs a time-stamped start/stop line there (below Python's sys.stderr) on
    every run; Jupyter would put it in the cell's output and every re-run would differ.
    """
    sys.stderr.flush()
    saved = os.dup(2)
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(devnull)
