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
from attention_qa.masks import causal_mask, sink_window_mask
from attention_qa.training import portable_uniform
from attention_qa.validation import require_positive_int, require_tensor, shape_str


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
