"""Long context: attention sinks, StreamingLLM's sink-plus-window cache, and a head that needs it.

Softmax weights sum to 1, so a head with nothing to read must still put its weight somewhere;
trained language models park it on the first tokens, the *attention sinks* (Xiao et al.,
2024, "Efficient Streaming Language Models with Attention Sinks"). ``softmax_with_sink`` is
the alternative that removes the need: an extra logit in the denominator that no value goes
with, Miller's (2023) "softmax off by one" at ``sink_logit=0`` and the learned per-head sink
of gpt-oss (OpenAI, 2025). ``sink_head`` builds the scores of a head that behaves like the
sink heads StreamingLLM found in Llama-2 (most weight on token 0, the rest on recent tokens),
and ``streaming_attention`` compares it with the same head under a sink-plus-window mask.
"""

import math

import torch

from attention_qa.attention import masked_softmax
from attention_qa.inference import LLAMA_CONFIGS, memory_bytes, roofline_seconds, step_costs
from attention_qa.masks import causal_mask, sink_window_mask
from attention_qa.training import portable_uniform
from attention_qa.validation import (
    require_nonnegative_int,
    require_positive_int,
    require_tensor,
    shape_str,
)


def softmax_with_sink(scores: torch.Tensor, sink_logit=0.0) -> torch.Tensor:
    """Softmax over the last axis with one extra logit that carries no value.

    weights_j = exp(s_j) / (exp(sink_logit) + Σ_k exp(s_k)): the same as a softmax over the
    scores and one more key whose score is ``sink_logit`` and whose value is zero, with that
    key's weight dropped. The weights sum to less than 1, so a head can attend to (almost)
    nothing. scores: (..., m); sink_logit: a number, or a tensor broadcastable to
    ``scores.shape[:-1]`` (one learned logit per head) → weights (..., m).
    """
    require_tensor("scores", scores, min_ndim=1, floating=True)
    sink = torch.as_tensor(sink_logit, dtype=scores.dtype, device=scores.device)
    try:
        sink = sink.expand(scores.shape[:-1])  # (...)
    except RuntimeError:
        raise ValueError(
            f"sink_logit has shape {shape_str(sink.shape)} but must broadcast to "
            f"scores.shape[:-1] = {shape_str(scores.shape[:-1])}"
        ) from None
    # Subtract the largest logit, the sink's included, before exp: no overflow.
    top = torch.maximum(scores.amax(dim=-1), sink).unsqueeze(-1)  # (..., 1)
    e = (scores - top).exp()  # (..., m)
    denominator = (sink.unsqueeze(-1) - top).exp() + e.sum(dim=-1, keepdim=True)  # (..., 1)
    return e / denominator  # (..., m)


def sink_head(n: int, d_v: int = 16, sink_score: float = 2.0, recency: float = 0.5,
              seed: int = 0):
    """Scores (n, n) and values (n, d_v) of a causal head with a sink on token 0.

    Query i scores key 0 at ``sink_score`` and key j ≥ 1 at u_ij − recency·(i − j), with u_ij
    uniform on [−1, 1): most of its weight sits on token 0, the rest on the last few tokens.
    The sink's value is zero, so the weight parked there adds nothing to the output, as a
    head with nothing to read needs; the other values are uniform with variance 1. Built
    from ``portable_uniform``, so the same on every CPU. Apply a causal mask to the scores.
    """
    require_positive_int("n", n)
    require_positive_int("d_v", d_v)
    g = torch.Generator().manual_seed(seed)
    i = torch.arange(n, dtype=torch.float64).unsqueeze(1)  # (n, 1)
    j = torch.arange(n, dtype=torch.float64).unsqueeze(0)  # (1, n)
    scores = portable_uniform((n, n), 1.0, g) - recency * (i - j)  # (n, n)
    scores[:, 0] = sink_score
    v = portable_uniform((n, d_v), math.sqrt(3.0), g)  # (n, d_v), variance 1
    v[0] = 0.0  # the sink's value: parking weight there changes nothing
    return scores, v


def streaming_attention(n: int, window: int, sinks: int, **head) -> dict:
    """The ``sink_head`` under full causal attention and under ``sink_window_mask``.

    Returns a dict: ``mask`` (n, n) the keys kept, ``full`` and ``weights`` (n, n) the
    weights of full causal attention and of the kept keys (softmax renormalised over them),
    ``mass`` (n,) the weight full attention puts on the kept keys, and ``error`` (n,) the
    RMS over the d_v components of (windowed output − full output), per query. ``head``
    goes to ``sink_head``.
    """
    scores, v = sink_head(n, **head)  # (n, n), (n, d_v)
    mask = sink_window_mask(n, window, sinks)  # (n, n)
    full = masked_softmax(scores, causal_mask(n))  # (n, n)
    weights = masked_softmax(scores, mask)  # (n, n)
    error = (weights @ v - full @ v).pow(2).mean(dim=-1).sqrt()  # (n,)
    mass = (full * mask).sum(dim=-1)  # (n,)
    return {"mask": mask, "full": full, "weights": weights, "mass": mass, "error": error,
            "n": n, "window": window, "sinks": sinks}


# --- Long context in use (q42): Transformer-XL's segment recurrence, and the window as a budget


def xl_attention_mask(segment_len: int, memory_len: int) -> torch.Tensor:
    """Bool ``(segment_len, memory_len + segment_len)``, True = may attend.

    Transformer-XL (Dai et al., 2019, §3.2) keeps the previous segment's hidden states as a
    memory (no gradient through it) and lets each query of the current segment attend to
    the concatenation [memory, segment]: the whole memory, and the current segment causally,
    up to and including itself. Query i (0-based within the segment) sees key j of the
    concatenation when ``j < memory_len + i + 1``.
    """
    require_positive_int("segment_len", segment_len)
    require_nonnegative_int("memory_len", memory_len)
    i = torch.arange(segment_len).unsqueeze(1)  # (L, 1)
    j = torch.arange(memory_len + segment_len).unsqueeze(0)  # (1, M + L)
    return j <= memory_len + i  # (L, M + L)


def xl_dependency_length(segment_len: int, num_layers: int) -> int:
    """How far back Transformer-XL's segment recurrence reaches: N × L tokens.

    Each layer reaches one segment further back (layer n reads layer n − 1's states of the
    previous segment, cached), so after ``num_layers`` = N layers the first token of a
    segment of ``segment_len`` = L depends on tokens exactly N × L back, and a later token
    of the segment up to L − 1 further: O(N × L), Dai et al. (2019), §3.2 and Figure 2(b).
    The memory here is one segment long, as in the paper's training (M = L).
    """
    return require_positive_int("segment_len", segment_len) * require_positive_int(
        "num_layers", num_layers)


def prefill_costs(model: str, prompt: int) -> dict:
    """``inference.step_costs`` of one prefill of ``prompt`` tokens (batch 1), with the LM
    head's FLOPs counted for the last token only: a server computes the logits of the last
    prompt position, the one that picks the first output token, not of every position.
    Returns flops, bytes and intensity, as ``step_costs`` does."""
    costs = step_costs(model, 1, prompt, prompt)  # checks the model's name and the length
    _, d, _, _, _, vocab = LLAMA_CONFIGS[model]
    flops = costs["flops"] - 2 * vocab * d * (prompt - 1)  # the LM head on n − 1 positions
    return {"flops": flops, "bytes": costs["bytes"], "intensity": flops / costs["bytes"]}


STRATEGIES = ("whole document", "truncate", "retrieve k chunks", "map over chunks")


def context_strategies(document: int, window: int, chunk: int, k: int, question: int = 100,
                       answer: int = 500, model: str = "Llama-3-8B") -> dict:
    """What each way of fitting a ``document`` of that many tokens into a ``window`` costs.

    Every prompt is some document tokens plus the ``question``, and must leave room for an
    ``answer`` of that many tokens (prompt + answer ≤ window). Per strategy, a dict with
    ``seen`` (document tokens the model reads), ``calls`` (prefills), ``prompt`` (tokens of
    the largest prompt), ``flops`` (prefill FLOPs, all calls), ``kv_bytes`` (the largest
    call's K/V cache, bf16, batch 1) and ``ttft`` (the roofline's lower bound on the time to
    the first token of the answer on one H100, calls run one after another; for the map,
    the map prefills only: generating and combining the partial answers comes on top), or
    ``fits = False`` when the strategy cannot run in this window. Costs from
    ``prefill_costs`` with ``model``'s shapes; the retriever's own cost (embedding the
    document, searching, reranking) is left out. Truncation keeps the last tokens, as a
    tokenizer with ``truncation_side="left"`` does (Hugging Face's default, "right", keeps
    the first).
    """
    for name, value in (("document", document), ("window", window), ("chunk", chunk),
                        ("k", k), ("answer", answer)):
        require_positive_int(name, value)
    require_nonnegative_int("question", question)
    room = window - question - answer  # document tokens one prompt can hold
    if room <= 0:
        raise ValueError(f"window ({window}) leaves no room for the document after the "
                         f"question ({question}) and the answer ({answer})")

    def prefill(*prompts: int) -> dict:
        """Prefills of these prompts, one after another."""
        costs = {p: prefill_costs(model, p) for p in set(prompts)}  # a few distinct sizes
        largest = max(prompts)
        return {"calls": len(prompts), "prompt": largest,
                "flops": sum(costs[p]["flops"] for p in prompts),
                "kv_bytes": memory_bytes(model, 1, largest)["K/V cache"],
                "ttft": sum(roofline_seconds(costs[p]["flops"], costs[p]["bytes"])
                            for p in prompts),
                "fits": True}

    cannot = {"fits": False, "seen": 0}
    kept = min(document, room)  # truncation keeps the last `room` tokens (truncation_side="left")
    pieces = [chunk] * (document // chunk) + ([document % chunk] if document % chunk else [])
    retrieved = sum(pieces[:k])  # k chunks (the last one may be short)
    return {
        "whole document": {**prefill(document + question), "seen": document}
        if document <= room else cannot,
        "truncate": {**prefill(kept + question), "seen": kept},
        "retrieve k chunks": {**prefill(retrieved + question), "seen": retrieved}
        if retrieved <= room else cannot,
        "map over chunks": {**prefill(*(p + question for p in pieces)), "seen": document}
        if chunk <= room else cannot,
    }
