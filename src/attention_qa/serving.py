"""Serving many users (q44): iteration-level batching, prefix caching over blocks, chunked
prefill, and the latencies users see (time to first token, time per output token).

``schedule`` runs an engine step by step. Under ``"continuous"`` batching a waiting request
joins the running batch at any step where there is room, and a finished one leaves at once:
the iteration-level scheduling of Orca (Yu et al., OSDI 2022, §3, S1, and §4.2). Under
``"static"`` a batch is formed only when the engine is idle and runs until its longest
request is done, as request-level schedulers do (Orca's §3, C1).

``PrefixCache`` knows a K/V block by its own tokens and every token before it, as vLLM's
automatic prefix caching hashes a block with its parent's hash (vLLM's design document
"Automatic Prefix Caching"); a request whose first blocks are known skips their prefill.
Here the key is the exact chain of token tuples, so two different prefixes never collide.

``step_seconds`` is q33's roofline for one forward pass that processes ``tokens`` tokens
(decodes and prefill tokens together) with Llama-3-8B's weight matrices on one H100; it
leaves out attention's FLOPs and the K/V cache's bytes, so it is a lower bound for short
contexts, not a measurement. ``chunked_prefill`` splits a prompt into the chunks a token
budget per step allows beside the running decodes (Sarathi-Serve, Agrawal et al., OSDI
2024, §4). ``simulate`` joins them: the toy engine the chapter's explorer shows. Its clock
runs in steps: requests arrive at step indices, one that arrives during a step counts from
that step's start, and a step with nothing to run lasts no time, so the same arrivals make
a different rate per second under each setting.
"""

from __future__ import annotations

import functools
import math
import numbers

import torch

from attention_qa.inference import llama_parameters, roofline_seconds
from attention_qa.validation import require_positive_int

POLICIES = ("continuous", "static")


class PrefixCache:
    """Whole blocks of ``block_size`` tokens, each known by its tokens and all before it.

    ``insert(tokens) -> int`` stores every whole block of ``tokens`` (a trailing partial
    block is not stored) and returns how many blocks were new. ``match(tokens) -> int``
    returns how many leading tokens are already cached: a multiple of ``block_size``.
    ``num_blocks`` counts the blocks stored.
    """

    def __init__(self, block_size: int):
        self.block_size = require_positive_int("block_size", block_size)
        # (parent block's id, this block's tokens) → this block's id; -1 is the empty prefix.
        # A block's key holds its parent's, so the same tokens after another prefix differ.
        self._blocks: dict[tuple[int, tuple[int, ...]], int] = {}

    def _split(self, tokens) -> list[tuple[int, ...]]:
        tokens = _token_list(tokens)
        b = self.block_size
        return [tuple(tokens[end - b:end]) for end in range(b, len(tokens) + 1, b)]

    def insert(self, tokens) -> int:
        new, parent = 0, -1
        for block in self._split(tokens):
            key = (parent, block)
            if key not in self._blocks:
                self._blocks[key] = len(self._blocks)
                new += 1
            parent = self._blocks[key]
        return new

    def match(self, tokens) -> int:
        matched, parent = 0, -1
        for block in self._split(tokens):
            parent = self._blocks.get((parent, block))
            if parent is None:
                break
            matched += self.block_size
        return matched

    @property
    def num_blocks(self) -> int:
        return len(self._blocks)


def schedule(requests, max_batch: int, policy: str = "continuous") -> list[tuple[int, int]]:
    """Each request ``(arrival_step, output_tokens)`` → ``(first_token_step,
    last_token_step)``, in input order.

    At the start of step t, under ``"continuous"``, waiting requests with arrival_step ≤ t
    join, in order of arrival and then of position in the list, while fewer than
    ``max_batch`` are running; under ``"static"`` they join (same order, up to
    ``max_batch``) only when none is running, and that batch runs until its last request is
    done. In every step each running request emits one token (one that joins at t emits its
    first token at t) and leaves after its last.
    """
    arrivals, outputs = _check_requests(requests)
    require_positive_int("max_batch", max_batch)
    if policy not in POLICIES:
        raise ValueError(f"policy must be one of {POLICIES}, got {policy!r}")
    waiting = sorted(range(len(arrivals)), key=lambda i: (arrivals[i], i))
    left = list(outputs)
    first: list = [None] * len(arrivals)
    last: list = [None] * len(arrivals)
    running: list[int] = []
    t = 0
    while waiting or running:
        if policy == "continuous" or not running:
            while waiting and len(running) < max_batch and arrivals[waiting[0]] <= t:
                running.append(waiting.pop(0))
        if not running:  # idle until the next arrival
            t = arrivals[waiting[0]]
            continue
        for i in running:
            if left[i] == 0:  # done, holding its slot until the static batch ends
                continue
            if first[i] is None:
                first[i] = t
            left[i] -= 1
            if left[i] == 0:
                last[i] = t
        if policy == "continuous" or all(left[i] == 0 for i in running):
            running = [i for i in running if left[i] > 0]
        t += 1
    return list(zip(first, last, strict=True))


def latencies(requests, timeline, step_end=None) -> dict[str, list[float]]:
    """Time to first token and time per output token of each request.

    ``timeline`` is what ``schedule`` returns. A step's token is out when the step ends.
    With ``step_end`` None every step lasts 1 (times in steps); otherwise ``step_end[t]`` is
    the time at which step t ends, and step t starts at ``step_end[t - 1]`` (0 for t = 0).
    TTFT = end of the first token's step − start of the arrival step; TPOT = (end of the
    last token's step − end of the first's) / (output_tokens − 1), NaN for one token.
    """
    arrivals, outputs = _check_requests(requests)
    if len(timeline) != len(arrivals):
        raise ValueError(f"timeline has {len(timeline)} entries but there are "
                         f"{len(arrivals)} requests")
    if step_end is None:
        def end(t):
            return float(t + 1)
    else:
        def end(t):
            return float(step_end[t])

    def start(t):
        return 0.0 if t == 0 else end(t - 1)

    ttft, tpot = [], []
    for a, n, (f, last) in zip(arrivals, outputs, timeline, strict=True):
        ttft.append(end(f) - start(a))
        tpot.append((end(last) - end(f)) / (n - 1) if n > 1 else math.nan)
    return {"ttft": ttft, "tpot": tpot}


@functools.cache
def _matrices(model: str) -> int:
    parts = llama_parameters(model)
    return sum(parts.values()) - parts["embeddings"] // 2 - parts["norms"]  # no lookup


def step_seconds(tokens: int, model: str = "Llama-3-8B") -> float:
    """The roofline's lower bound on one forward pass over ``tokens`` tokens (decodes and
    prefill tokens of one step together): max(2·P·tokens / peak, P·2 bytes / bandwidth),
    P the weight matrices (q33). Attention's FLOPs and the K/V cache's bytes are left out."""
    require_positive_int("tokens", tokens)
    matrices = _matrices(model)
    return roofline_seconds(2 * matrices * tokens, 2 * matrices)


def chunked_prefill(prompt_tokens: int, token_budget: int, decodes: int = 0) -> list[int]:
    """The chunks a prompt of ``prompt_tokens`` is prefilled in, one per step, when a step
    processes at most ``token_budget`` tokens and ``decodes`` of them go to the running
    requests' next tokens first (Sarathi-Serve's stall-free batching)."""
    require_positive_int("prompt_tokens", prompt_tokens)
    require_positive_int("token_budget", token_budget)
    if isinstance(decodes, bool) or not isinstance(decodes, int) or decodes < 0:
        raise ValueError(f"decodes must be a non-negative integer, got {decodes!r}")
    room = token_budget - decodes
    if room <= 0:
        raise ValueError(f"token_budget={token_budget} leaves no room for a prefill chunk "
                         f"beside {decodes} decodes")
    return [min(room, prompt_tokens - start) for start in range(0, prompt_tokens, room)]


def workload(rate: float, num_requests: int = 24, *, seed: int = 0,
             shared_prefix: int = 1024, block_size: int = 16) -> dict:
    """A toy stream of chat requests: Poisson arrivals at ``rate`` requests per step,
    64–511 own prompt tokens after a shared system prompt of ``shared_prefix`` tokens,
    4–47 output tokens, drawn from ``seed``."""
    if isinstance(rate, bool) or not isinstance(rate, numbers.Real) or not rate > 0:
        raise ValueError(f"rate must be a positive number, got {rate!r}")
    require_positive_int("num_requests", num_requests)
    require_positive_int("block_size", block_size)
    g = torch.Generator().manual_seed(seed)
    # exponential gaps, summed in Python: the same arrivals under every CPU kernel
    uniform = torch.rand(num_requests, generator=g, dtype=torch.float64).tolist()
    arrivals, now = [], 0.0
    for u in uniform:
        now += -math.log1p(-u) / rate
        arrivals.append(math.floor(now))
    own = torch.randint(64, 512, (num_requests,), generator=g).tolist()
    outputs = torch.randint(4, 48, (num_requests,), generator=g).tolist()
    system = list(range(shared_prefix))
    prompts = [system + [100_000 + 1_000 * i + j for j in range(n)] for i, n in enumerate(own)]
    return {"requests": list(zip(arrivals, outputs, strict=True)), "prompts": prompts,
            "block_size": block_size}


def simulate(requests, prompts, max_batch: int, policy: str = "continuous", *,
             prefix_caching: bool = False, block_size: int = 16,
             model: str = "Llama-3-8B") -> dict:
    """The toy engine: ``schedule``'s steps, each as long as ``step_seconds`` of the tokens
    it processes (one per running request, plus the whole uncached prompt of each request
    that joins: its prefill makes its first token). With ``prefix_caching`` a joining
    request skips the blocks already cached; its own blocks are cached after its step.

    Returns the timeline, each step's end time and tokens, the prefill tokens computed,
    the blocks reused, and ``latencies`` in seconds.
    """
    timeline = schedule(requests, max_batch, policy)
    if len(prompts) != len(timeline):
        raise ValueError(f"prompts has {len(prompts)} entries but there are "
                         f"{len(timeline)} requests")
    steps = max(last for _, last in timeline) + 1
    tokens = [0] * steps
    for first, last in timeline:
        for t in range(first, last + 1):
            tokens[t] += 1
    joining: dict[int, list[int]] = {}
    for i, (first, _) in enumerate(timeline):
        joining.setdefault(first, []).append(i)
    cache = PrefixCache(block_size) if prefix_caching else None
    prefilled, reused = [0] * len(timeline), 0
    for t in sorted(joining):
        for i in joining[t]:
            hit = cache.match(prompts[i]) if cache else 0
            prefilled[i] = len(prompts[i]) - hit
            reused += hit // block_size
            tokens[t] += prefilled[i] - 1  # its first token is counted with the decodes
        if cache:
            for i in joining[t]:
                cache.insert(prompts[i])
    ends, now = [], 0.0
    for n in tokens:
        now += step_seconds(n, model) if n else 0.0
        ends.append(now)
    return {"timeline": timeline, "step_end": ends, "step_tokens": tokens,
            "prefill_tokens": prefilled, "blocks_reused": reused,
            **latencies(requests, timeline, ends)}


def percentile(values, q: float) -> float:
    """The q-th percentile (0–100) of the finite values, interpolating linearly."""
    finite = [float(v) for v in values if not math.isnan(v)]
    if not finite:
        raise ValueError("percentile needs at least one finite value")
    if not 0 <= q <= 100:
        raise ValueError(f"q must be between 0 and 100, got {q!r}")
    return float(torch.quantile(torch.tensor(finite, dtype=torch.float64), q / 100))


def _token_list(tokens) -> list[int]:
    if isinstance(tokens, torch.Tensor):
        if tokens.ndim != 1 or tokens.is_floating_point():
            raise ValueError(f"tokens must be a 1-D integer tensor, got shape "
                             f"{tuple(tokens.shape)} and dtype {tokens.dtype}")
        return tokens.tolist()
    if isinstance(tokens, (str, bytes)) or not hasattr(tokens, "__iter__"):
        raise ValueError(f"tokens must be a sequence of token ids, got {type(tokens).__name__}")
    out = list(tokens)
    for x in out:
        if type(x) is not int and (isinstance(x, bool) or not isinstance(x, numbers.Integral)):
            raise ValueError(f"tokens must be integer ids, got {x!r}")
    return [int(x) for x in out]


def _check_requests(requests) -> tuple[list[int], list[int]]:
    arrivals, outputs = [], []
    for i, r in enumerate(requests):
        if not isinstance(r, (tuple, list)) or len(r) != 2:
            raise ValueError(f"requests[{i}] must be a pair (arrival_step, output_tokens), "
                             f"got {r!r}")
        a, n = r
        if isinstance(a, bool) or not isinstance(a, numbers.Integral) or a < 0:
            raise ValueError(f"requests[{i}]: arrival_step must be a non-negative integer, "
                             f"got {a!r}")
        if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 1:
            raise ValueError(f"requests[{i}]: output_tokens must be an integer ≥ 1, got {n!r}")
        arrivals.append(int(a))
        outputs.append(int(n))
    if not arrivals:
        raise ValueError("requests is empty: give at least one (arrival_step, output_tokens)")
    return arrivals, outputs
