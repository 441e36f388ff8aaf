"""attention_qa.measure: counts that carry claims, and a timer that decides nothing."""

import subprocess
import sys

import pytest
import torch

from attention_qa.efficient import peak_memory_bytes as reexported
from attention_qa.measure import best_time, count_flops, loglog_slope, peak_memory_bytes


def test_count_flops_counts_a_matrix_product_as_multiply_adds():
    a, b = torch.ones(3, 5), torch.ones(5, 7)
    assert count_flops(torch.matmul, a, b) == 2 * 3 * 5 * 7


def test_peak_memory_counts_the_result_and_not_the_inputs():
    x = torch.ones(256)
    result, peak = peak_memory_bytes(torch.neg, x)
    assert torch.equal(result, -x) and peak == 256 * 4
    assert reexported is peak_memory_bytes  # the name chapters imported from efficient


@pytest.mark.parametrize("power", [1.0, 2.0, 0.5])
def test_loglog_slope_recovers_the_exponent(power):
    xs = [256, 512, 1024, 2048]
    assert loglog_slope(xs, [3 * x**power for x in xs]) == pytest.approx(power)


def test_best_time_runs_a_warm_up_then_each_repeat():
    calls = []
    seconds = best_time(calls.append, 1, repeats=3)
    assert calls == [1, 1, 1, 1] and isinstance(seconds, float)  # the value decides nothing


def test_peak_memory_bytes_writes_nothing_to_stderr():
    """The profiler's own log lines must not reach a notebook's output (nbval compares it)."""
    code = (
        "import torch\n"
        "from attention_qa.measure import peak_memory_bytes\n"
        "print(peak_memory_bytes(torch.ones, 10)[1])\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert run.stdout.strip() == "40" and run.stderr == ""
