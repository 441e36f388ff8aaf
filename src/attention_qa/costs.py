"""What attention and a Transformer cost: parameters, FLOPs, cache bytes, score entries.

Closed-form counts, each checked against PyTorch (``torch.utils.flop_counter``, the
parameters of the package's modules) in the tests:

- ``attention_flops``: one multi-head attention forward (Vaswani et al., 2017, §3.2.2);
- ``layer_flops``: one self-attention, recurrent or convolutional layer, the comparison of
  Vaswani et al. (2017), Table 1;
- ``block_parameter_counts`` and ``model_parameter_counts``: a Transformer block and a
  stack of them between tied or untied embeddings (Press & Wolf, 2017);
- ``kv_cache_bytes``, ``scores_per_step`` and ``cumulative_scores``: what decoding with
  and without a K/V cache keeps and computes (Pope et al., 2022); ``latent_cache_bytes``:
  the smaller cache of multi-head latent attention (DeepSeek-AI, 2024, "DeepSeek-V2");
- ``cache_elements_per_token`` and ``attention_parameters``: what one layer of each kind of
  attention (MHA, GQA, MQA, MLA) caches per token and how many weights it has;
- ``configurable_block_parameter_counts``, ``block_flops`` and ``swiglu_hidden_dim``: the
  parts of today's block (LLaMA, Touvron et al., 2023) against the 2017 one;
- ``MODEL_PRESETS``: the attention shapes of a few published models, read from
  ``anatomy.MODELS``.

A multiply-add counts as 2 FLOPs throughout, as ``torch.utils.flop_counter`` counts it.
"""

from attention_qa.anatomy import shape
from attention_qa.validation import require_nonnegative_int, require_positive_int

KERNEL = 3  # the convolution width of layer_flops' third layer
NUM_BLOCKS = 6  # the 2017 paper's encoder depth, model_parameter_counts' default

# name: (layers, query heads, published K/V heads, d_head), read from anatomy.MODELS, whose
# rows carry their sources ("GPT-2 small" is its row "GPT-2")
MODEL_PRESETS = {
    label: (m.layers, m.heads, m.kv_heads, m.d_head)
    for label, m in (("Llama-2-7B", shape("Llama-2-7B")), ("Llama-2-70B", shape("Llama-2-70B")),
                     ("Mistral-7B", shape("Mistral-7B")), ("GPT-2 small", shape("GPT-2")))
}


def attention_flops(batch: int, n: int, m: int, d_model: int) -> int:
    """FLOPs of one multi-head attention forward (as many K/V heads as query heads).

    A multiply-add counts as 2 FLOPs.

    Counts the matrix products only: Q projection on n tokens (2·B·n·d²), K and V projections
    on m tokens (2 · 2·B·m·d²), scores Q Kᵀ (2·B·n·m·d, summed over the heads since
    h · d_k = d), weights × V (2·B·n·m·d) and the output projection (2·B·n·d²). Bias adds,
    scaling, masking and the softmax are O(B·h·n·m) or less and are left out, as
    ``torch.utils.flop_counter.FlopCounterMode`` leaves them out, so the number does not
    depend on h. For n = m it equals ``4·B·n·d·(2d + n)``: the n² term overtakes the d² term
    once n > 2d.
    """
    for name, value in (("batch", batch), ("n", n), ("m", m), ("d_model", d_model)):
        require_positive_int(name, value)
    d = d_model
    projections = 2 * batch * (n * d * d + 2 * m * d * d + n * d * d)  # W_Q, W_K, W_V, W_O
    attention = 2 * batch * (2 * n * m * d)  # Q Kᵀ and weights × V
    return projections + attention


def layer_flops(n: int, d: int, kernel: int = KERNEL) -> dict[str, int]:
    """FLOPs of one layer of each kind on a sequence of n vectors of width d."""
    require_positive_int("n", n)
    require_positive_int("d", d)
    require_positive_int("kernel", kernel)
    return {
        "self-attention": 4 * n * n * d,
        "recurrent": 4 * n * d * d,
        f"convolution (k = {kernel})": 2 * kernel * n * d * d,
    }


def block_parameter_counts(d_model: int, d_ff: int) -> dict[str, int]:
    """Parameters of one block, by part: attention, feed-forward, LayerNorms."""
    require_positive_int("d_model", d_model)
    require_positive_int("d_ff", d_ff)
    return {
        "attention": 4 * d_model * d_model + 4 * d_model,  # W_Q, W_K, W_V, W_O and biases
        "feed-forward": 2 * d_model * d_ff + d_ff + d_model,  # W_1, b_1, W_2, b_2
        "LayerNorms": 2 * 2 * d_model,  # weight and bias of two norms
    }


def configurable_block_parameter_counts(
    d_model: int, d_ff: int, num_heads: int, *, norm: str = "layernorm", ffn: str = "relu",
    bias: bool = True, qk_norm: bool = False,
) -> dict[str, int]:
    """Parameters of one ``ConfigurableBlock``, by part: attention, feed-forward, norms.

    Attention: four d_model × d_model projections (+ 4·d_model biases), + 2·d_head for
    QK-norm's two RMSNorm weights. Feed-forward: ReLU 2·d_model·d_ff (+ d_ff + d_model
    biases); SwiGLU 3·d_model·d_ff, never biased. Norms: two, each d_model weights, + d_model
    biases for a biased LayerNorm (RMSNorm has no bias).
    """
    for name, value in (("d_model", d_model), ("d_ff", d_ff), ("num_heads", num_heads)):
        require_positive_int(name, value)
    d_head = d_model // num_heads
    attention = 4 * d_model * d_model + (4 * d_model if bias else 0)
    attention += 2 * d_head if qk_norm else 0
    if ffn == "swiglu":
        feed_forward = 3 * d_model * d_ff
    else:
        feed_forward = 2 * d_model * d_ff + (d_ff + d_model if bias else 0)
    per_norm = d_model + (d_model if norm == "layernorm" and bias else 0)
    return {"attention": attention, "feed-forward": feed_forward, "norms": 2 * per_norm}


def block_flops(n: int, d_model: int, d_ff: int, ffn: str = "relu") -> dict[str, int]:
    """FLOPs of one block's matrix products on n tokens (self-attention), by part.

    Attention: ``attention_flops(1, n, n, d_model)`` = 8·n·d² + 4·n²·d. Feed-forward:
    ReLU 2 · 2·n·d·d_ff, SwiGLU 3 · 2·n·d·d_ff. Norms, activations and the gate's
    elementwise product are O(n·d_ff) and left out, as ``torch.utils.flop_counter`` leaves
    them out.
    """
    require_positive_int("d_ff", d_ff)
    matrices = 3 if ffn == "swiglu" else 2
    return {
        "attention": attention_flops(1, n, n, d_model),
        "feed-forward": matrices * 2 * n * d_model * d_ff,
    }


def swiglu_hidden_dim(d_model: int, multiple_of: int = 256,
                      ffn_dim_multiplier: float | None = None) -> int:
    """LLaMA's d_ff for SwiGLU: int(2 · 4·d_model / 3), times ``ffn_dim_multiplier`` (then
    truncated again) if given, rounded up to a multiple of ``multiple_of``.

    Three d_model × d_ff matrices then hold about as many weights as the two of a ReLU
    network with d_ff = 4·d_model: 3 · (8/3)·d² = 2 · 4·d². LLaMA-7B: d_model 4096 → 11008;
    Llama-2-70B: 8192, multiplier 1.3, multiple of 4096 → 28672 (the ``FeedForward`` of
    Meta's reference ``llama/model.py``).
    """
    require_positive_int("d_model", d_model)
    require_positive_int("multiple_of", multiple_of)
    hidden = int(2 * 4 * d_model / 3)
    if ffn_dim_multiplier is not None:
        if (isinstance(ffn_dim_multiplier, bool) or not isinstance(ffn_dim_multiplier, (int, float))
                or not ffn_dim_multiplier > 0):
            raise ValueError(
                f"ffn_dim_multiplier must be a positive number or None, got {ffn_dim_multiplier!r}"
            )
        hidden = int(ffn_dim_multiplier * hidden)
    return multiple_of * ((hidden + multiple_of - 1) // multiple_of)


def model_parameter_counts(vocab_size: int, d_model: int, tied: bool,
                           num_blocks: int = NUM_BLOCKS) -> dict[str, int]:
    """Parameters by part; a tied output projection adds nothing of its own."""
    require_positive_int("vocab_size", vocab_size)
    require_positive_int("d_model", d_model)
    require_positive_int("num_blocks", num_blocks)
    return {
        "input embedding": vocab_size * d_model,
        "blocks": num_blocks * sum(block_parameter_counts(d_model, 4 * d_model).values()),
        "output projection": 0 if tied else vocab_size * d_model,
    }


def kv_cache_bytes(num_layers: int, num_kv_heads: int, d_head: int, seq_len: int,
                   batch: int = 1, bytes_per_element: int | float = 2) -> int | float:
    """Bytes of the K/V cache: ``2 · layers · kv_heads · d_head · seq_len · batch · bytes``.

    The leading 2 is for K and V. ``bytes_per_element`` is 2 for float16/bfloat16, 4 for
    float32, 1 for int8 (0.5 for 4-bit). Fewer K/V heads (GQA, MQA) shrink it in proportion.
    """
    for name, value in (("num_layers", num_layers), ("num_kv_heads", num_kv_heads),
                        ("d_head", d_head), ("seq_len", seq_len), ("batch", batch)):
        require_positive_int(name, value)
    _require_bytes_per_element(bytes_per_element)
    return 2 * num_layers * num_kv_heads * d_head * seq_len * batch * bytes_per_element


def latent_cache_bytes(num_layers: int, d_latent: int, seq_len: int, batch: int = 1,
                       bytes_per_element: int | float = 2, d_rope: int = 0) -> int | float:
    """Bytes of multi-head latent attention's cache:
    ``layers · (d_latent + d_rope) · seq_len · batch · bytes``.

    DeepSeek-V2 (2024) caches one latent vector c of width d_latent per token and layer,
    from which every head's keys and values are rebuilt, instead of 2 · kv_heads · d_head
    numbers; ``d_rope`` counts the small key part that carries RoPE and is cached beside it
    (DeepSeek-V2: d_latent = 512, d_rope = 64).
    """
    for name, value in (("num_layers", num_layers), ("d_latent", d_latent),
                        ("seq_len", seq_len), ("batch", batch)):
        require_positive_int(name, value)
    require_nonnegative_int("d_rope", d_rope)
    _require_bytes_per_element(bytes_per_element)
    return num_layers * (d_latent + d_rope) * seq_len * batch * bytes_per_element


ATTENTION_KINDS = ("MHA", "GQA", "MQA", "MLA")

# DeepSeek-V2 (DeepSeek-AI, 2024), section 3.1.2: 60 layers, hidden dimension 5120,
# n_h = 128 heads of d_h = 128, KV compression dimension d_c = 512, decoupled RoPE
# dimension d_h^R = 64. Its query compression, d_c' = 1536, is kept apart: the book's MLA
# has none, and ``attention_parameters`` adds it only when given ``d_query_latent``.
DEEPSEEK_V2 = {"num_layers": 60, "d_model": 5120, "num_heads": 128, "d_head": 128,
               "d_latent": 512, "d_rope": 64}
DEEPSEEK_V2_QUERY_LATENT = 1536
# The GQA that q27 sets MLA against: 8 K/V heads, as Llama-2-70B and Llama-3 use.
GQA_KV_HEADS = 8


def cache_elements_per_token(kind: str, num_heads: int, d_head: int,
                             num_kv_heads: int | None = None, d_latent: int | None = None,
                             d_rope: int = 0) -> int:
    """Numbers one attention layer caches per token, for each kind of attention.

    MHA: a key and a value per head, ``2 · num_heads · d_head``; GQA: per K/V head,
    ``2 · num_kv_heads · d_head``; MQA: one K/V head, ``2 · d_head``; MLA: the latent c and
    the decoupled RoPE key, ``d_latent + d_rope``, shared by every head (DeepSeek-V2, 2024,
    table 1). ``num_kv_heads`` is read for GQA only, ``d_latent`` and ``d_rope`` for MLA only.
    """
    _require_kind(kind)
    require_positive_int("num_heads", num_heads)
    require_positive_int("d_head", d_head)
    if kind == "MLA":
        require_positive_int("d_latent", d_latent)
        require_nonnegative_int("d_rope", d_rope)
        return d_latent + d_rope
    return 2 * _kv_heads(kind, num_heads, num_kv_heads) * d_head


def attention_parameters(kind: str, d_model: int, num_heads: int, d_head: int,
                         num_kv_heads: int | None = None, d_latent: int | None = None,
                         d_rope: int = 0, d_query_latent: int | None = None) -> int:
    """Weights of one bias-free attention layer of each kind.

    MHA, GQA, MQA: W_Q (d_model → h·d_head), W_K and W_V (d_model → h_kv·d_head), W_O
    (h·d_head → d_model). MLA (DeepSeek-V2, section 2.1): W_Q, W_DKV (d_model → d_latent),
    W_UK and W_UV (d_latent → h·d_head), W_O, and for the decoupled RoPE part W_QR
    (d_model → h·d_rope) and W_KR (d_model → d_rope). With ``d_query_latent`` (MLA only:
    DeepSeek-V2's query compression, d_c', section 2.1.2) W_Q becomes W_DQ
    (d_model → d_query_latent) and W_UQ (d_query_latent → h·d_head), and W_QR reads the
    query latent (d_query_latent → h·d_rope, section 2.1.3).
    """
    _require_kind(kind)
    for name, value in (("d_model", d_model), ("num_heads", num_heads), ("d_head", d_head)):
        require_positive_int(name, value)
    q_and_o = 2 * d_model * num_heads * d_head  # W_Q and W_O, unless MLA compresses queries
    if kind != "MLA":
        return q_and_o + 2 * d_model * _kv_heads(kind, num_heads, num_kv_heads) * d_head
    require_positive_int("d_latent", d_latent)
    require_nonnegative_int("d_rope", d_rope)
    down = d_model * d_latent  # W_DKV
    up = 2 * d_latent * num_heads * d_head  # W_UK and W_UV
    if d_query_latent is None:
        rope = d_model * num_heads * d_rope + d_model * d_rope  # W_QR and W_KR
        return q_and_o + down + up + rope
    require_positive_int("d_query_latent", d_query_latent)
    query = d_model * d_query_latent + d_query_latent * num_heads * d_head  # W_DQ, W_UQ
    rope = d_query_latent * num_heads * d_rope + d_model * d_rope  # W_QR and W_KR
    return d_model * num_heads * d_head + query + down + up + rope  # W_O and the rest


def _require_kind(kind) -> None:
    if kind not in ATTENTION_KINDS:
        raise ValueError(f"kind must be one of {ATTENTION_KINDS}, got {kind!r}")


def _kv_heads(kind: str, num_heads: int, num_kv_heads) -> int:
    if kind == "MHA":
        return num_heads
    if kind == "MQA":
        return 1
    require_positive_int("num_kv_heads", num_kv_heads)
    if num_heads % num_kv_heads:
        raise ValueError(
            f"num_kv_heads={num_kv_heads} must divide num_heads={num_heads} so that every "
            f"key/value head serves the same number of query heads"
        )
    return num_kv_heads


def _require_bytes_per_element(bytes_per_element) -> None:
    if (isinstance(bytes_per_element, bool) or not isinstance(bytes_per_element, (int, float))
            or not bytes_per_element > 0):
        raise ValueError(
            f"bytes_per_element must be a positive number, got {bytes_per_element!r}"
        )


def scores_per_step(t: int, use_cache: bool) -> int:
    """Score entries q·k computed at step t (per head and layer)."""
    if not isinstance(t, int) or isinstance(t, bool) or t < 1:
        raise ValueError(f"t must be a positive integer, got {t!r}")
    return t if use_cache else t * t


def cumulative_scores(steps: int, use_cache: bool) -> int:
    """Score entries computed over steps 1..steps."""
    return sum(scores_per_step(t, use_cache) for t in range(1, steps + 1))
