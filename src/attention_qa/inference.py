"""The inference budget (q33): memory, FLOPs and bytes of prefill and decode, and the roofline.

Model shapes are those of the models' published configurations (Hugging Face ``config.json``:
``num_hidden_layers``, ``hidden_size``, ``num_attention_heads``, ``num_key_value_heads``,
``intermediate_size``, ``vocab_size``), read from ``anatomy.MODELS`` with their sources.
A LLaMA-style model has, per layer, the projections W_Q and W_O (d × d), W_K and W_V
(d × kv_heads·d_head), a SwiGLU feed-forward network (three d × d_ff matrices) and two RMSNorm
weights; then a final norm, and untied input and output embeddings (V × d each). No biases.

Costs count a multiply-add as 2 FLOPs. A step's FLOPs are the weight matrices' (2 per
weight per token; the input embedding is a lookup) plus attention's (QKᵀ and the weighted
sum of V: 4·d per key per token and layer; a causal prefill of n tokens computes half the
n × n scores). A step's bytes are the weights it reads (all but the input embedding, whose
rows it only looks up) plus the K/V cache it reads or writes. The roofline (Williams,
Waterman and Patterson, 2009) bounds a step's time below by max(FLOPs / peak FLOP/s,
bytes / bandwidth): estimates of what the hardware allows, not measurements.
"""

from attention_qa.anatomy import shape
from attention_qa.costs import kv_cache_bytes
from attention_qa.validation import require_positive_int, require_positive_number

_LLAMAS = ("Llama-2-7B", "Llama-2-13B", "Llama-2-70B", "Llama-3-8B")
# name: (layers, d_model, heads, kv_heads, d_ff, vocab), read from the rows of anatomy.MODELS
# (and anatomy.OTHER_MODELS), which carry each model's config.json and paper as sources
LLAMA_CONFIGS = {name: (m.layers, m.d_model, m.heads, m.kv_heads, m.d_ff, m.vocab)
                 for name, m in ((name, shape(name)) for name in _LLAMAS)}
# The context each was trained at (max_position_embeddings in the configurations).
TRAINED_CONTEXT = {name: shape(name).context for name in _LLAMAS}
# NVIDIA H100 SXM datasheet: dense BF16 Tensor Core FLOP/s (1,979 T is with sparsity) and
# HBM3 bandwidth; 80 GB of memory.
H100_FLOPS, H100_BANDWIDTH, H100_MEMORY = 989e12, 3.35e12, 80e9


def _config(name: str) -> tuple[int, ...]:
    if name not in LLAMA_CONFIGS:
        raise ValueError(f"model must be one of {list(LLAMA_CONFIGS)}, got {name!r}")
    return LLAMA_CONFIGS[name]


def llama_parameters(name: str) -> dict[str, int]:
    """Weights by part: embeddings (input and output), attention, feed-forward, norms."""
    layers, d, heads, kv_heads, d_ff, vocab = _config(name)
    d_head = d // heads
    return {
        "embeddings": 2 * vocab * d,
        "attention": layers * (2 * d * d + 2 * d * kv_heads * d_head),
        "feed-forward": layers * 3 * d * d_ff,
        "norms": layers * 2 * d + d,
    }


def memory_bytes(name: str, batch: int, context: int, bytes_per_weight: float = 2,
                 bytes_per_cache_element: float = 2) -> dict[str, float]:
    """Weights, the K/V cache for ``batch`` sequences of ``context`` tokens, and an estimate
    of one layer's largest activations during the prefill of them (the SwiGLU's gate and
    up projections and the attention inputs, B·n·(2·d_ff + 3·d) values in 16 bits; no
    n × n score matrix, as with FlashAttention)."""
    layers, d, heads, kv_heads, d_ff, _ = _config(name)
    require_positive_int("batch", batch)
    require_positive_int("context", context)
    require_positive_number("bytes_per_weight", bytes_per_weight)
    return {
        "weights": sum(llama_parameters(name).values()) * bytes_per_weight,
        "K/V cache": kv_cache_bytes(layers, kv_heads, d // heads, context, batch,
                                    bytes_per_cache_element),
        "activations (one layer, prefill)": batch * context * (2 * d_ff + 3 * d) * 2,
    }


def step_costs(name: str, batch: int, new_tokens: int, context: int,
               bytes_per_weight: float = 2, bytes_per_cache_element: float = 2) -> dict:
    """FLOPs and bytes of one forward step that adds ``new_tokens`` tokens to each of
    ``batch`` sequences whose K/V cache then holds ``context`` tokens (prefill: new_tokens =
    context; decode: new_tokens = 1). Returns flops, bytes and their ratio, the
    arithmetic intensity in FLOPs per byte."""
    layers, d, heads, kv_heads, _, vocab = _config(name)
    require_positive_int("new_tokens", new_tokens)
    if new_tokens > context:
        raise ValueError(f"new_tokens ({new_tokens}) cannot exceed context ({context})")
    parts = llama_parameters(name)
    matrices = sum(parts.values()) - vocab * d - parts["norms"]  # all but the lookup
    tokens = batch * new_tokens
    # Each new token attends to the keys before it: context − new_tokens + 1 … context.
    keys = new_tokens * (context - new_tokens) + new_tokens * (new_tokens + 1) // 2
    flops = 2 * matrices * tokens + 4 * layers * d * keys * batch
    cache = kv_cache_bytes(layers, kv_heads, d // heads, context, batch,
                           bytes_per_cache_element)
    weights = (sum(parts.values()) - vocab * d) * bytes_per_weight
    total = weights + cache
    return {"flops": flops, "bytes": total, "intensity": flops / total}


def roofline_seconds(flops: float, bytes_moved: float, peak: float = H100_FLOPS,
                     bandwidth: float = H100_BANDWIDTH) -> float:
    """The roofline's lower bound on a step's time: max(flops / peak, bytes / bandwidth)."""
    return max(flops / peak, bytes_moved / bandwidth)


def decode_intensity(num_params: int, batch: int, bytes_per_weight: float,
                     cache_bytes: float) -> float:
    """FLOPs per byte of a decode step, counting only the weight matrices' FLOPs (2 per
    weight per sequence) against the weights read once for the whole batch plus the
    cache: 2·P·B / (P·bytes_per_weight + cache_bytes)."""
    return 2 * num_params * batch / (num_params * bytes_per_weight + cache_bytes)
