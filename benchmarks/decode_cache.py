"""Decode time per token with and without the K/V cache, on CPU.

    python benchmarks/decode_cache.py [--json PATH] [--threads T] [--lengths N ...]

A ``TinyTransformerLM`` (d_model = 128, 4 heads, 4 layers, random weights) greedily decodes
N tokens after a 4-token prompt, twice: with ``use_cache=True`` each step feeds only the
newest token and reads the earlier keys and values from the cache (Pope et al., 2022,
"Efficiently Scaling Transformer Inference"); with ``use_cache=False`` each step runs the
model again over the whole sequence. The script asserts that both give the same tokens.

Time per token is the wall time of one ``generate`` call divided by N, the best of a few
calls (the minimum is the figure least disturbed by other work on the machine). Without the
cache, step t costs O(t) projections and O(t²) attention scores, so the time per token grows
with N; with the cache, O(1) projections and O(t) scores, so at these sizes, where the
per-token overhead of the projections dominates, it stays nearly flat. Times vary from run
to run and machine to machine: read the ratio column, not the milliseconds. The script
prints a Markdown table and, with ``--json``, writes the figures.
"""

import argparse
import platform
import time

import torch
from save import save_json  # benchmarks/save.py, next to this script

from attention_qa.models import TinyTransformerLM

LENGTHS = (32, 64, 128, 256)
PROMPT_LEN = 4
CONFIG = {"vocab_size": 64, "d_model": 128, "num_heads": 4, "num_layers": 4}


def build_model() -> TinyTransformerLM:
    torch.manual_seed(0)
    model = TinyTransformerLM(**CONFIG, max_len=PROMPT_LEN + max(LENGTHS) * 2)
    return model.eval()


def ms_per_token(model, prompt, n: int, use_cache: bool, repeats: int):
    """Best-of-``repeats`` milliseconds per generated token, and the tokens."""
    best, tokens = float("inf"), None
    for _ in range(repeats):
        start = time.perf_counter()
        tokens = model.generate(prompt, n, use_cache=use_cache)
        best = min(best, time.perf_counter() - start)
    return 1000 * best / n, tokens


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", metavar="PATH", help="also write the figures to PATH")
    parser.add_argument("--lengths", type=int, nargs="+", default=list(LENGTHS),
                        help="numbers of tokens to generate")
    parser.add_argument("--repeats", type=int, default=2, help="timed calls per figure")
    parser.add_argument("--threads", type=int, default=1,
                        help="intra-op threads (default 1: steadier on a shared machine)")
    args = parser.parse_args(argv)
    if max(args.lengths) > max(LENGTHS) * 2:
        parser.error(f"lengths must be at most {max(LENGTHS) * 2}")
    torch.set_num_threads(args.threads)

    model = build_model()
    prompt = torch.randint(CONFIG["vocab_size"], (1, PROMPT_LEN),
                           generator=torch.Generator().manual_seed(1))
    model.generate(prompt, 4)  # warm-up: one-off set-up costs are not decoding
    rows = []
    for n in args.lengths:
        cached_ms, cached = ms_per_token(model, prompt, n, True, args.repeats)
        uncached_ms, uncached = ms_per_token(model, prompt, n, False, args.repeats)
        assert torch.equal(cached, uncached), f"cached and uncached tokens differ at n={n}"
        rows.append({"tokens": n, "cached_ms_per_token": cached_ms,
                     "uncached_ms_per_token": uncached_ms,
                     "speedup": uncached_ms / cached_ms, "same_tokens": True})

    print(f"Greedy decoding on CPU, {CONFIG}, prompt {PROMPT_LEN} tokens, "
          f"{torch.get_num_threads()} thread(s), best of {args.repeats}\n")
    print("| tokens | cached ms/token | uncached ms/token | uncached / cached | same tokens |")
    print("|---:|---:|---:|---:|:---:|")
    for r in rows:
        print(f"| {r['tokens']} | {r['cached_ms_per_token']:.2f} "
              f"| {r['uncached_ms_per_token']:.2f} | {r['speedup']:.1f} | yes |")

    result = {
        "config": {**CONFIG, "prompt_len": PROMPT_LEN, "threads": torch.get_num_threads(),
                   "repeats": args.repeats, "torch": torch.__version__,
                   "machine": platform.machine()},
        "rows": rows,
    }
    save_json(result, args.json)
    return result


if __name__ == "__main__":
    main()
