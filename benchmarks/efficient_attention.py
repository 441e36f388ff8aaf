"""Time and peak memory of naive, fused and tiled attention as the sequence grows, on CPU.

    python benchmarks/efficient_attention.py [--json PATH] [--threads T] [--repeats R]

Three ways to compute the same softmax(Q Kᵀ / √d_k) V, self-attention with n = m, d = 64,
batch 1, one head, float32:

- naive: ``attention_qa.attention.scaled_dot_product_attention``, which builds the (n, n)
  scores and weights (Vaswani et al., 2017);
- fused: ``torch.nn.functional.scaled_dot_product_attention``, PyTorch's own kernel (on CPU
  a FlashAttention-style kernel for 4-D inputs, hence the head dimension of size 1);
- tiled: ``attention_qa.efficient.tiled_attention``, FlashAttention's outer loop over
  key/value blocks (Dao et al., 2022), written in plain PyTorch.

Time is the median of several calls after one warm-up call, with ``time.perf_counter``.
Peak memory comes from ``attention_qa.efficient.peak_memory_bytes``: ``torch.profiler`` with
``profile_memory=True`` records every allocation and free made through PyTorch's CPU
allocator (also those inside a fused kernel); replaying them in order gives the largest
amount of tensor memory held at once during the call, the inputs excluded and the output
included. Python's ``tracemalloc`` would see none of it, since PyTorch does not allocate
through Python, and the process's resident size cannot be reset between calls. The memory
figures are counts of bytes requested, so they are the same on every run with the same
number of threads (the fused kernel keeps one scratch buffer per thread); the times are not,
and on a machine shared with other work they can be off by several times: read the memory
columns as facts and the time columns as rough.

The script checks that tiled attention is exact (max |tiled − naive| < 1e-4) and reports
the slope of log(peak memory) against log(n): about 1 for memory that grows linearly, about
2 for the (n, n) matrix. It prints a Markdown table and, with ``--json``, writes the figures.
"""

import argparse
import math
import platform
import statistics
import time

import torch
import torch.nn.functional as F
from save import save_json  # benchmarks/save.py, next to this script

from attention_qa.attention import scaled_dot_product_attention
from attention_qa.efficient import peak_memory_bytes, tiled_attention

SIZES = (256, 512, 1024, 2048, 4096)
D = 64
BLOCK_SIZE = 128
EXACT_TOL = 1e-4
MIB = 2**20
MIN_SAMPLE_S = 0.02

METHODS = {
    "naive": lambda q, k, v: scaled_dot_product_attention(q, k, v)[0],
    "fused": lambda q, k, v: F.scaled_dot_product_attention(q, k, v),
    "tiled": lambda q, k, v: tiled_attention(q, k, v, block_size=BLOCK_SIZE),
}


def median_seconds(fn, repeats: int) -> float:
    """Median time of one call of ``fn`` over ``repeats`` samples, after a warm-up call.

    A sample times as many back-to-back calls as fill about MIN_SAMPLE_S, so that a call of
    a fraction of a millisecond is not lost in the clock's and the scheduler's noise.
    """
    start = time.perf_counter()
    fn()  # warm-up: the first call pays for one-off set-up, not for attention
    calls = max(1, math.ceil(MIN_SAMPLE_S / max(time.perf_counter() - start, 1e-6)))
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        samples.append((time.perf_counter() - start) / calls)
    return statistics.median(samples)


def log_log_slope(xs, ys) -> float:
    """Least-squares slope of log y against log x: the exponent p in y ∝ xᵖ."""
    lx = [math.log(x) for x in xs]
    ly = [math.log(y) for y in ys]
    mean_x, mean_y = statistics.fmean(lx), statistics.fmean(ly)
    num = sum((a - mean_x) * (b - mean_y) for a, b in zip(lx, ly, strict=True))
    den = sum((a - mean_x) ** 2 for a in lx)
    return num / den


def measure(n: int, repeats: int) -> dict:
    torch.manual_seed(0)
    # (B, h, n, d): PyTorch's fused CPU kernel wants 4-D inputs; with 3-D ones it falls
    # back to the plain maths and builds the (n, n) matrix too.
    q, k, v = (torch.randn(1, 1, n, D) for _ in range(3))  # (B, h, n, d)
    row = {"n": n, "scores_matrix_mib": n * n * q.element_size() / MIB}
    outputs = {}
    for name, fn in METHODS.items():
        outputs[name], peak = peak_memory_bytes(fn, q, k, v)
        row[f"{name}_peak_mib"] = peak / MIB
        row[f"{name}_ms"] = 1000 * median_seconds(lambda fn=fn: fn(q, k, v), repeats)
    row["tiled_max_abs_diff"] = (outputs["tiled"] - outputs["naive"]).abs().max().item()
    row["fused_max_abs_diff"] = (outputs["fused"] - outputs["naive"]).abs().max().item()
    return row


def markdown_table(rows) -> str:
    lines = [
        "| n | naive ms | fused ms | tiled ms | naive MiB | fused MiB | tiled MiB "
        "| (n, n) MiB | max abs diff tiled |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['n']} | {r['naive_ms']:.2f} | {r['fused_ms']:.2f} | {r['tiled_ms']:.2f} "
            f"| {r['naive_peak_mib']:.2f} | {r['fused_peak_mib']:.2f} "
            f"| {r['tiled_peak_mib']:.2f} | {r['scores_matrix_mib']:.2f} "
            f"| {r['tiled_max_abs_diff']:.1e} |"
        )
    return "\n".join(lines)


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", metavar="PATH", help="also write the figures to PATH")
    parser.add_argument("--repeats", type=int, default=5, help="timed calls per figure")
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES), help="values of n")
    parser.add_argument(
        "--threads", type=int, help="intra-op threads (default: PyTorch's own choice)"
    )
    args = parser.parse_args(argv)
    if args.threads is not None:
        # One thread is steadier on a busy machine: idle threads do not wait on slow ones.
        torch.set_num_threads(args.threads)

    with torch.inference_mode():  # no autograd graph: its saved tensors would count as memory
        rows = [measure(n, args.repeats) for n in args.sizes]

    for r in rows:
        assert r["tiled_max_abs_diff"] < EXACT_TOL, (
            f"tiled attention is not exact at n={r['n']}: "
            f"max abs diff {r['tiled_max_abs_diff']:.2e} >= {EXACT_TOL}"
        )

    sizes = [r["n"] for r in rows]
    slopes = {}
    if len(sizes) >= 2:
        for name in METHODS:
            slopes[f"{name}_peak_memory"] = log_log_slope(
                sizes, [r[f"{name}_peak_mib"] for r in rows]
            )
            slopes[f"{name}_time"] = log_log_slope(sizes, [r[f"{name}_ms"] for r in rows])

    print(
        f"Attention on CPU, batch 1, one head, d = {D}, float32, tiled block = {BLOCK_SIZE}, "
        f"{torch.get_num_threads()} threads, median of {args.repeats} calls\n"
    )
    print(markdown_table(rows))
    if slopes:
        print("\nSlope of log(figure) against log(n) (1 = linear, 2 = quadratic):\n")
        print("| method | peak memory | time |")
        print("|---|---:|---:|")
        for name in METHODS:
            memory, seconds = slopes[f"{name}_peak_memory"], slopes[f"{name}_time"]
            print(f"| {name} | {memory:.2f} | {seconds:.2f} |")

    result = {
        "config": {
            "batch": 1,
            "heads": 1,
            "d": D,
            "dtype": "float32",
            "block_size": BLOCK_SIZE,
            "repeats": args.repeats,
            "threads": torch.get_num_threads(),
            "torch": torch.__version__,
            "machine": platform.machine(),
            "exact_tolerance": EXACT_TOL,
        },
        "rows": rows,
        "log_log_slopes": slopes,
    }
    save_json(result, args.json)
    return result


if __name__ == "__main__":
    main()
