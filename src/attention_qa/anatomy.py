"""The anatomy of today's open models (q38): one table of published shapes, and what they cost.

``MODELS`` maps a name to an :class:`Anatomy`, the fields of the model's Hugging Face
``config.json`` (layers, width, heads, K/V heads, head size, feed-forward, vocabulary, tied
or not, biases, experts, MLA's ranks) and of its paper (norm and where it sits, position
scheme, context), with the sources each row was taken from. Where a row's paper leaves a
field out, ``not_in_paper`` names it: the value is then the released configuration's or code's
alone. Where the paper and the released configuration give different values,
``paper_differs`` names the field and the row's notes give both.

``parameter_count`` adds up the weights from those fields: the token embedding (and learned
positions, token types and an embedding norm where a model has them), every block's
attention (Q, K, V and output projections, or MLA's down- and up-projections), its
feed-forward network (two matrices, three when gated; a router and experts for a
mixture of experts), its norms, the final norm and the output head (nothing extra when it is
tied to the embedding). ``kv_cache_bytes_per_token`` is what one token adds to the K/V
cache of one sequence: 2 · layers · kv_heads · d_head numbers (Shazeer, 2019; Ainslie et al.,
2023), or layers · (d_latent + d_rope) for multi-head latent attention (DeepSeek-AI, 2024)
where the implementation caches the latent (``latent=False``: the per-head keys and values it
expands to). ``model_cache_bytes`` is one sequence's whole cache, with sliding windows applied.
The tests check the counts against models built by Hugging Face ``transformers`` from the
same fields (a check of the formula), the rows against the defaults of the configuration
classes that document a given checkpoint (a check of the values), and the counts against
published totals.
"""

from __future__ import annotations

from dataclasses import dataclass

from attention_qa.validation import require_positive_number

# Marks a table entry that the model's paper does not state: its value comes from the
# released config.json or reference code alone.
UNSTATED_MARK = "†"
# Marks a table entry where the paper and the released config.json disagree (notes give both).
DIFFERS_MARK = "‡"
NOT_STATED = "not stated"  # what the table shows where no source here gives a value


@dataclass(frozen=True)
class Anatomy:
    """One model's shape. Sizes are the released configuration's (``config.json``).

    ``attention`` is "MHA", "GQA", "MQA" or "MLA"; ``ffn`` "GELU MLP", "SwiGLU" or "GeGLU"
    (the last two gated: three d × d_ff matrices); ``biases`` "all", "QKV" (on the Q, K, V
    projections only) or "none" (norm biases aside); ``norm_place`` "pre", "post",
    "pre and post" (a norm before and after each sub-layer) or "pre, parallel" (one norm
    feeding attention and the feed-forward side by side). A mixture of experts has
    ``experts`` routed experts of width ``d_ff_expert``, ``active_experts`` of them per
    token, ``shared_experts`` always used, and ``dense_layers`` leading dense blocks of width
    ``d_ff``. MLA (``attention == "MLA"``) has ranks ``q_rank`` (0: no query compression) and
    ``kv_rank``, a per-head ``d_nope`` + ``d_rope`` query/key size and value size ``d_v``.
    ``not_in_paper`` names fields the paper does not state (their values come from the
    released config or code); ``paper_differs`` those where the paper gives another value
    (the notes give it); ``not_stated`` those that no source here states at all.
    ``norm_bias`` is False where a LayerNorm has no bias (PaLM, §2). ``windowed_layers`` of the
    ``layers`` attend only to the last ``window`` positions (all of Mistral's; every other one
    of Gemma 2's).
    """

    name: str
    layers: int
    d_model: int
    heads: int
    kv_heads: int
    d_head: int
    attention: str
    ffn: str
    d_ff: int
    vocab: int
    tied: bool
    norm: str
    norm_place: str
    position: str
    rope_base: float | None
    context: int
    biases: str
    sources: tuple[str, ...]
    kind: str = "decoder"
    experts: int = 0
    active_experts: int = 0
    shared_experts: int = 0
    d_ff_expert: int = 0
    dense_layers: int = 0
    q_rank: int = 0
    kv_rank: int = 0
    d_rope: int = 0
    d_nope: int = 0
    d_v: int = 0
    window: int | None = None
    learned_positions: int = 0
    token_types: int = 0
    embedding_norm: bool = False
    pooler: bool = False
    windowed_layers: int = 0
    norm_bias: bool = True
    not_in_paper: tuple[str, ...] = ()
    paper_differs: tuple[str, ...] = ()
    not_stated: tuple[str, ...] = ()
    notes: str = ""
    published_total: int | None = None
    published_source: str = ""


LLAMA_CODE = ("facebookresearch/llama, llama/model.py (every projection built with "
              "bias=False; the papers do not mention biases)")


def _llama(name, layers, d, heads, kv, d_ff, vocab, context, base, sources, **kw):
    kw["not_in_paper"] = (*kw.get("not_in_paper", ()), "biases")
    return Anatomy(name, layers, d, heads, kv, d // heads, "MHA" if kv == heads else "GQA",
                   "SwiGLU", d_ff, vocab, False, "RMSNorm", "pre", "RoPE", base, context,
                   "none", sources, **kw)


KERAS = "KerasHub preset metadata, keras_hub/src/models/{}/{}_presets.py ({})"
MODELS: dict[str, Anatomy] = {m.name: m for m in (
    Anatomy(
        "GPT-2", 12, 768, 12, 12, 64, "MHA", "GELU MLP", 3072, 50257, True, "LayerNorm", "pre",
        "learned", None, 1024, "all",
        ("Radford et al. (2019), §2.3 (vocabulary 50,257; layer norm at each sub-block's "
         "input and after the last block; context 1,024), Table 2 (12 layers, d_model 768, "
         "listed as 117M)", "Hugging Face gpt2, config.json",
         "openai/gpt-2, README.md (the paper's parameter counts were wrong: 117M is the "
         "smallest model)"),
        learned_positions=1024, not_in_paper=("heads", "d_head", "d_ff", "biases"),
        notes="The paper's Table 2 says 117M; the released weights hold 124,439,808, and "
              "OpenAI's README says the paper's counts were wrong.",
        published_total=124_439_808,
        published_source=KERAS.format("gpt2", "gpt2", "gpt2_base_en"),
    ),
    Anatomy(
        "BERT-base", 12, 768, 12, 12, 64, "MHA", "GELU MLP", 3072, 30522, True, "LayerNorm",
        "post", "learned", None, 512, "all",
        ("Devlin et al. (2019), §3 (L = 12, H = 768, A = 12, 110M; a 30,000-token WordPiece "
         "vocabulary), Appendix A.2 (GELU; sequences of 512)",
         "Hugging Face bert-base-uncased, config.json"),
        kind="encoder", learned_positions=512, token_types=2, embedding_norm=True, pooler=True,
        not_in_paper=("biases",), paper_differs=("vocab",),
        notes="Counted as the bare encoder with its pooler (BertModel); the masked-LM head "
              "reuses the embedding. The paper's WordPiece vocabulary is 30,000 tokens; the "
              "released embedding has 30,522 rows.",
        published_total=109_482_240,
        published_source=KERAS.format("bert", "bert", "bert_base_en_uncased"),
    ),
    _llama("LLaMA-1-7B", 32, 4096, 32, 32, 11008, 32000, 2048, 10000.0,
           ("Touvron et al. (2023a), §2.2 (pre-normalisation with RMSNorm, SwiGLU with a "
            "2/3·4d hidden size, RoPE), Table 2 (dim 4096, 32 heads, 32 layers)",
            "Touvron et al. (2023b), Table 1 (LLaMA 1: 2k context)", LLAMA_CODE,
            "Hugging Face huggyllama/llama-7b, config.json"),
           not_in_paper=("d_ff", "rope_base")),
    _llama("Llama-2-7B", 32, 4096, 32, 32, 11008, 32000, 4096, 10000.0,
           ("Touvron et al. (2023b), §2.2 and Table 1 (4k context; GQA only in 34B and 70B; "
            "the architecture and 32k tokenizer of Llama 1, whose 7B shape is Touvron et al. "
            "(2023a), Table 2)", LLAMA_CODE,
            "Hugging Face meta-llama/Llama-2-7b-hf, config.json"),
           not_in_paper=("d_ff", "rope_base"), published_total=6_738_415_616,
           published_source=KERAS.format("llama", "llama", "llama2_7b_en")),
    _llama("Llama-2-70B", 80, 8192, 64, 8, 28672, 32000, 4096, 10000.0,
           ("Touvron et al. (2023b), §2.2, Table 1 and Appendix A.2.1 (GQA with 8 K/V "
            "heads)", LLAMA_CODE, "Hugging Face meta-llama/Llama-2-70b-hf, config.json"),
           not_in_paper=("layers", "d_model", "heads", "d_head", "d_ff", "rope_base"),
           published_total=68_976_648_192,
           published_source="Zhang et al. (2025), Train Small, Infer Large (LoRAM), "
                            "arXiv:2502.13533, Table 5 (\"#Orig. Params\" of LLaMA-2-70B; "
                            "a count of the released weights by a third party)"),
    _llama("Llama-3-8B", 32, 4096, 32, 8, 14336, 128256, 8192, 500000.0,
           ("Meta (April 2024), Hugging Face meta-llama/Meta-Llama-3-8B, model card and "
            "config.json (context 8,192; vocab_size 128,256)",
            "Llama Team (2024), The Llama 3 Herd of Models, arXiv:2407.21783, Table 3 (32 "
            "layers, 4,096 wide, FFN 14,336, 32 heads, 8 K/V heads, vocabulary 128,000, RoPE "
            "θ = 500,000), §3.4 (pre-training at 8K tokens, then continued to 128K)",
            LLAMA_CODE),
           paper_differs=("vocab", "context"),
           notes="This row is the April 2024 release, Meta-Llama-3-8B (context 8,192). The "
                 "paper (July 2024) describes the models released as Llama 3.1: the same "
                 "shapes, trained on to a 128K context. The paper's vocabulary is 128,000 "
                 "tokens; the embedding has 128,256 rows (256 reserved special tokens).",
           published_total=8_030_261_248,
           published_source=KERAS.format("llama3", "llama3", "llama3_8b_en")),
    Anatomy(
        "Mistral-7B", 32, 4096, 32, 8, 128, "GQA", "SwiGLU", 14336, 32000, False, "RMSNorm",
        "pre", "RoPE", 10000.0, 8192, "none",
        ("Jiang et al. (2023), arXiv:2310.06825, Table 1 (dim 4096, 32 layers, head_dim 128, "
         "hidden_dim 14336, 32 heads, 8 K/V heads, window 4096, context_len 8192, vocab "
         "32000), §2 (sliding window attention, rolling buffer cache)",
         "Hugging Face mistralai/Mistral-7B-v0.1, config.json"),
        window=4096, windowed_layers=32,
        not_in_paper=("ffn", "norm", "norm_place", "rope_base", "biases"),
        paper_differs=("context",),
        notes="config.json's max_position_embeddings is 32,768; the paper's context_len is "
              "8,192. Every layer uses the window.",
        published_total=7_241_732_096,
        published_source=KERAS.format("mistral", "mistral", "mistral_7b_en"),
    ),
    Anatomy(
        "Mixtral-8x7B", 32, 4096, 32, 8, 128, "GQA", "SwiGLU", 14336, 32000, False, "RMSNorm",
        "pre", "RoPE", 1e6, 32768, "none",
        ("Jiang et al. (2024), arXiv:2401.04088, Table 1 (as Mistral 7B, context_len 32768, "
         "8 experts, top-2), §2 (47B parameters, 13B active)",
         "Hugging Face mistralai/Mixtral-8x7B-v0.1, config.json"),
        experts=8, active_experts=2, d_ff_expert=14336,
        not_in_paper=("norm", "norm_place", "rope_base", "biases"),
        published_total=46_702_792_704,
        published_source=KERAS.format("mixtral", "mixtral", "mixtral_8_7b_en"),
    ),
    Anatomy(
        "Qwen2-7B", 28, 3584, 28, 4, 128, "GQA", "SwiGLU", 18944, 152064, False, "RMSNorm",
        "pre", "RoPE", 1e6, 32768, "QKV",
        ("Yang et al. (2024), Qwen2 Technical Report, §2.2.1 (GQA, SwiGLU, RoPE, QKV bias, "
         "RMSNorm, pre-normalisation), Table 1 (3,584 wide, 28 layers, 28 query and 4 K/V "
         "heads, head size 128, intermediate 18,944, vocabulary 151,646), §3.2 (context "
         "extended from 4,096 to 32,768 tokens, RoPE base from 10,000 to 1,000,000)",
         "Hugging Face Qwen/Qwen2-7B, config.json (max_position_embeddings 131,072, "
         "vocab_size 152,064)"),
        paper_differs=("vocab", "context"),
        notes="The report's vocabulary is 151,646 tokens (151,643 regular and 3 control, "
              "§2.1); the embedding has 152,064 rows. The context is the report's "
              "pre-training length; config.json says 131,072, as Qwen2.5-7B's does.",
    ),
    Anatomy(
        "Qwen2.5-7B", 28, 3584, 28, 4, 128, "GQA", "SwiGLU", 18944, 152064, False, "RMSNorm",
        "pre", "RoPE", 1e6, 131072, "QKV",
        ("Qwen Team (2024), Qwen2.5 Technical Report, §2 (the Qwen2 block with QKV bias; "
         "151,643 regular tokens and control tokens expanded from 3 to 22), Table 1 "
         "(28 layers, 28/4 heads, untied, context 128K)",
         "Hugging Face Qwen/Qwen2.5-7B, config.json"),
        not_in_paper=("d_model", "d_head", "d_ff"), paper_differs=("vocab",),
        notes="The report's vocabulary is 151,665 tokens (151,643 regular and 22 control); "
              "the embedding has 152,064 rows.",
    ),
    Anatomy(
        "Gemma-7B", 28, 3072, 16, 16, 256, "MHA", "GeGLU", 24576, 256000, True, "RMSNorm",
        "pre", "RoPE", 10000.0, 8192, "none",
        ("Gemma Team (2024a), arXiv:2403.08295, Table 1 (28 layers, feed-forward 49152 = "
         "2 × 24,576 for the gate and up halves, 16 heads and 16 K/V heads of size 256, "
         "vocabulary 256,128), §2 (MQA in the 2B model only, RoPE, GeGLU, RMSNorm at each "
         "sub-layer's input, shared input and output embeddings, context 8192)",
         "Hugging Face google/gemma-7b, config.json (hidden_size 3072, vocab_size 256,000)"),
        not_in_paper=("rope_base", "biases"), paper_differs=("vocab",),
        notes="The paper's vocabulary is 256,128 (Tables 1 and 2); the released embedding "
              "has 256,000 rows. Its Table 2 counts 7,751,248,896 non-embedding parameters.",
        published_total=8_537_680_896,
        published_source=KERAS.format("gemma", "gemma", "gemma_7b_en"),
    ),
    Anatomy(
        "Gemma-2-9B", 42, 3584, 16, 8, 256, "GQA", "GeGLU", 14336, 256000, True, "RMSNorm",
        "pre and post", "RoPE", 10000.0, 8192, "none",
        ("Gemma Team (2024b), arXiv:2408.00118, Table 1 (d_model 3584, 42 layers, pre-norm "
         "and post-norm, GeGLU, feed-forward 28672 = 2 × 14,336, GQA with 16 heads and 8 K/V "
         "heads of size 256, global span 8192, sliding window 4096, vocabulary 256,128, tied)",
         "Hugging Face google/gemma-2-9b, config.json"),
        window=4096, windowed_layers=21,
        not_in_paper=("rope_base", "biases"), paper_differs=("vocab",),
        notes="Local (4,096-token window) and global layers alternate (§2). The paper's "
              "vocabulary is 256,128; the released embedding has 256,000 rows.",
        published_total=9_241_705_984,
        published_source=KERAS.format("gemma", "gemma", "gemma2_9b_en"),
    ),
    Anatomy(
        "Falcon-7B", 32, 4544, 71, 1, 64, "MQA", "GELU MLP", 18176, 65024, True, "LayerNorm",
        "pre, parallel", "RoPE", 10000.0, 2048, "none",
        ("Hugging Face tiiuae/falcon-7b, model card (32 layers, d_model 4544, head_dim 64, "
         "vocabulary 65024, sequence length 2048; multiquery, parallel attention/MLP, "
         "rotary) and config.json",
         "Almazrouei et al. (2023), arXiv:2311.16867"),
        not_in_paper=("rope_base", "biases"),
    ),
    Anatomy(
        "BLOOM-176B", 70, 14336, 112, 112, 128, "MHA", "GELU MLP", 57344, 250880, True,
        "LayerNorm", "pre", "ALiBi", None, 2048, "all",
        ("BigScience Workshop (2022), arXiv:2211.05100, §3.2 (ALiBi, a layer norm after the "
         "embedding), Table 3 (70 layers, 112 heads, hidden 14,336, sequence length 2,048)",
         "Hugging Face bigscience/bloom, config.json (vocab_size 250,880) and model card "
         "(176,247,271,424 parameters, 3,596,615,680 of them the embedding)"),
        embedding_norm=True, not_in_paper=("biases",), paper_differs=("vocab",),
        notes="The tokenizer has 250,680 tokens; the embedding is padded to 250,880 rows.",
        published_total=176_247_271_424,
        published_source="BigScience, Hugging Face bigscience/bloom model card (the "
                         "authors' count)",
    ),
    Anatomy(
        "PaLM-540B", 118, 18432, 48, 1, 256, "MQA", "SwiGLU", 73728, 256000, True,
        "LayerNorm", "pre, parallel", "RoPE", None, 2048, "none",
        ("Chowdhery et al. (2022), arXiv:2204.02311, §2 (SwiGLU, parallel layers, "
         "multi-query attention, RoPE, shared input-output embeddings, no biases in dense "
         "kernels or layer norms, a 256k SentencePiece vocabulary), Table 1 (118 layers, 48 "
         "heads, d_model 18432; d_ff = 4 · d_model, heads of 256; 540B parameters)",),
        norm_bias=False, not_stated=("rope_base",),
        notes="Weights not released: counted from the paper alone, taking its '256k' "
              "vocabulary as 256,000 rows and its layer norms without bias (§2).",
    ),
    Anatomy(
        "DeepSeek-V2", 60, 5120, 128, 128, 128, "MLA", "SwiGLU", 12288, 102400, False,
        "RMSNorm", "pre", "RoPE", 10000.0, 131072, "none",
        ("DeepSeek-AI (2024a), arXiv:2405.04434, §2.1 (MLA), §3.1.2 (60 layers, hidden "
         "5120, 128 heads of 128, d_c = 512, d_c' = 1536, RoPE dimension 64; MoE in all but "
         "the first layer: 2 shared and 160 routed experts of width 1536, 6 routed per "
         "token; 236B total, 21B activated), context 128K after YaRN, §3.1.1 (a 100K "
         "vocabulary)",
         "Hugging Face deepseek-ai/DeepSeek-V2, config.json (vocab_size 102,400, rope_theta "
         "10,000)"),
        experts=160, active_experts=6, shared_experts=2, d_ff_expert=1536, dense_layers=1,
        q_rank=1536, kv_rank=512, d_rope=64, d_nope=128, d_v=128,
        not_in_paper=("d_ff", "rope_base", "biases"), paper_differs=("vocab",),
        notes="The paper's vocabulary is '100K'; the released embedding has 102,400 rows.",
    ),
    Anatomy(
        "DeepSeek-V3", 61, 7168, 128, 128, 128, "MLA", "SwiGLU", 18432, 129280, False,
        "RMSNorm", "pre", "RoPE", 10000.0, 131072, "none",
        ("DeepSeek-AI (2024b), arXiv:2412.19437, §4.2 (61 layers, hidden 7168, 128 heads of "
         "128, d_c = 512, d_c' = 1536, RoPE dimension 64; MoE in all but the first three "
         "layers: 1 shared and 256 routed experts of width 2048, 8 routed per token; 671B "
         "total, 37B activated; one multi-token-prediction module), §4.1 (a 128K "
         "vocabulary)",
         "Hugging Face deepseek-ai/DeepSeek-V3, config.json (vocab_size 129,280, rope_theta "
         "10,000)",
         "deepseek-ai/DeepSeek-V3, README_WEIGHTS.md (main model: 671B, 36.7B activated "
         "including 0.9B of embedding and 0.9B of output head)"),
        experts=256, active_experts=8, shared_experts=1, d_ff_expert=2048, dense_layers=3,
        q_rank=1536, kv_rank=512, d_rope=64, d_nope=128, d_v=128,
        not_in_paper=("d_ff", "rope_base", "biases"), paper_differs=("vocab",),
        notes="Counted without the multi-token-prediction module (about 14B more in the "
              "released checkpoint) and without the routers' bias terms. The paper's "
              "vocabulary is '128K'; the released embedding has 129,280 rows.",
    ),
)}

# Rows another chapter uses that q38's table does not show (q33 costs Llama-2-13B too): the
# same fields and the same kind of sources, kept out of ``MODELS`` so that q38's table and
# explorer stay as they are. ``shape`` looks a name up in both; ``costs.MODEL_PRESETS`` and
# ``inference.LLAMA_CONFIGS`` are read from here, so a corrected row is corrected once.
OTHER_MODELS: dict[str, Anatomy] = {m.name: m for m in (
    _llama("Llama-2-13B", 40, 5120, 40, 40, 13824, 32000, 4096, 10000.0,
           ("Touvron et al. (2023b), §2.2 and Table 1 (4k context; GQA only in 34B and 70B; "
            "the architecture and 32k tokenizer of Llama 1, whose 13B shape is Touvron et "
            "al. (2023a), Table 2: dim 5120, 40 heads, 40 layers)", LLAMA_CODE,
            "Hugging Face meta-llama/Llama-2-13b-hf, config.json"),
           not_in_paper=("d_ff", "rope_base")),
)}


def shape(name: str) -> Anatomy:
    """The published shape of ``name``, a row of ``MODELS`` or of ``OTHER_MODELS``."""
    if name in MODELS:
        return MODELS[name]
    if name in OTHER_MODELS:
        return OTHER_MODELS[name]
    raise ValueError(f"name must be one of {[*MODELS, *OTHER_MODELS]}, got {name!r}")


PARTS = ("embedding", "attention", "feed-forward", "norms", "output head")


def _model(name: str) -> Anatomy:
    # every row, q38's table and OTHER_MODELS alike, so that the counts work for all of them
    return shape(name)


def parameter_count(name: str) -> int:
    """Every weight of the model ``name``: embedding, blocks, final norm and output head."""
    return sum(parameter_parts(name).values())


def parameter_parts(name: str) -> dict[str, int]:
    """The weights of ``name`` by part (the keys of ``PARTS``), counted from its fields.

    "output head" is the unembedding matrix where it is not tied to the embedding (0 where it
    is). BERT-base, an encoder counted as ``BertModel``, has no unembedding of its own: its
    "output head" is its pooler, a d × d dense layer with a bias on the first token.
    """
    m = _model(name)
    d, L = m.d_model, m.layers
    # LayerNorm has a bias, RMSNorm none; PaLM dropped the layer norms' biases too (§2)
    norm = 2 * d if m.norm == "LayerNorm" and m.norm_bias else d
    embedding = (m.vocab + m.learned_positions + m.token_types) * d
    norms = norm if m.embedding_norm else 0
    attention = L * _attention_weights(m)
    if m.attention == "MLA":
        norms += L * ((m.q_rank if m.q_rank else 0) + m.kv_rank)  # the latents' RMSNorms
    dense = 0 if m.experts else L
    feed_forward = dense * _ffn_weights(m, m.d_ff)
    if m.experts:
        moe_layers = L - m.dense_layers
        feed_forward += m.dense_layers * _ffn_weights(m, m.d_ff)
        feed_forward += moe_layers * (d * m.experts  # the router
                                      + (m.experts + m.shared_experts)
                                      * _ffn_weights(m, m.d_ff_expert))
    per_block = {"pre": 2, "post": 2, "pre and post": 4, "pre, parallel": 1}[m.norm_place]
    norms += L * per_block * norm
    final = 0 if m.kind == "encoder" else norm  # BERT's last norm is its last block's
    head = (d * d + d) if m.pooler else (0 if m.tied else m.vocab * d)  # pooler: d×d + bias
    return {"embedding": embedding, "attention": attention, "feed-forward": feed_forward,
            "norms": norms + final, "output head": head}


def _attention_weights(m: Anatomy) -> int:
    """One block's attention weights (its norms are counted with the other norms)."""
    d = m.d_model
    if m.attention == "MLA":
        qk = m.d_nope + m.d_rope
        query = (d * m.q_rank + m.q_rank * m.heads * qk) if m.q_rank else d * m.heads * qk
        latent = d * (m.kv_rank + m.d_rope)  # the compressed c_KV and the shared RoPE key
        up = m.kv_rank * m.heads * (m.d_nope + m.d_v)  # W_UK and W_UV
        return query + latent + up + m.heads * m.d_v * d
    q, kv = m.heads * m.d_head, m.kv_heads * m.d_head
    weights = d * (q + 2 * kv) + q * d
    bias = {"all": q + 2 * kv + d, "QKV": q + 2 * kv, "none": 0}[m.biases]
    return weights + bias


def _ffn_weights(m: Anatomy, width: int) -> int:
    """One feed-forward network of hidden ``width``: 3 matrices if gated, else 2."""
    matrices = 3 if m.ffn in ("SwiGLU", "GeGLU") else 2
    bias = width + m.d_model if m.biases == "all" else 0
    return matrices * m.d_model * width + bias


def active_parameter_count(name: str) -> int:
    """The weights one token uses: for a mixture of experts, only its routed experts and
    the shared ones. The embedding and the output head are counted whole (a token reads one
    row of the embedding but every row of the head); DeepSeek's README_WEIGHTS.md counts both
    in its 36.7B for DeepSeek-V3."""
    m = _model(name)
    total = parameter_count(name)
    if not m.experts:
        return total
    idle = (m.layers - m.dense_layers) * (m.experts - m.active_experts)
    return total - idle * _ffn_weights(m, m.d_ff_expert)


def kv_cache_bytes_per_token(name: str, bytes_per_element: float = 2,
                             latent: bool = True) -> int:
    """Bytes one token adds to one sequence's K/V cache, over all layers: 2 · layers ·
    kv_heads · d_head elements, or layers · (d_latent + d_rope) with MLA (DeepSeek-V2,
    §2.1.2 and Table 1) where the implementation caches the latent. ``latent=False`` gives
    MLA's cache where the per-head keys (d_nope + d_rope) and values (d_v) are cached instead.
    A sliding window caps how many tokens are kept, not this."""
    m = _model(name)
    require_positive_number("bytes_per_element", bytes_per_element)
    if m.kind == "encoder":
        raise ValueError(f"{name} is an encoder: it reads its whole input at once and keeps "
                         "no K/V cache")
    if m.attention != "MLA":
        elements = 2 * m.kv_heads * m.d_head
    elif latent:
        elements = m.kv_rank + m.d_rope  # the latent c_KV and the shared RoPE key
    else:
        elements = m.heads * (m.d_nope + m.d_rope + m.d_v)  # every head's key and value
    total = m.layers * elements * bytes_per_element
    if total != int(total):
        raise ValueError(f"bytes_per_element={bytes_per_element} gives a fractional number "
                         f"of bytes per token ({total})")
    return int(total)


def model_cache_bytes(name: str, tokens: int, bytes_per_element: float = 2) -> int:
    """One sequence's whole K/V cache after ``tokens`` tokens of the model ``name`` (for layer
    and head counts instead of a name, ``costs.kv_cache_bytes``): a layer with a sliding window
    keeps at most ``window`` of them (Mistral's rolling buffer; Gemma 2's local layers), the
    others keep all. Beyond the model's context the figure is arithmetic, not the model's."""
    m = _model(name)
    require_positive_number("tokens", tokens)
    per_layer = kv_cache_bytes_per_token(name, bytes_per_element) // m.layers
    kept = min(tokens, m.window) if m.window else tokens
    return per_layer * (m.windowed_layers * kept + (m.layers - m.windowed_layers) * tokens)


def kv_sharing(name: str) -> str:
    """How many query heads share one K/V head, in words (MLA shares one latent)."""
    m = _model(name)
    if m.attention == "MLA":
        return f"one {m.kv_rank}-wide latent + a {m.d_rope}-wide RoPE key for {m.heads} heads"
    if m.kv_heads == m.heads:
        return "every head its own K and V"
    return f"{m.heads // m.kv_heads} query heads per K/V head"


def _window_label(m: Anatomy) -> str:
    """", window W" when every layer is windowed; ", window W in k of L layers" otherwise."""
    if not m.window:
        return ""
    if m.windowed_layers == m.layers:
        return f", window {m.window:,}"
    return f", window {m.window:,} in {m.windowed_layers} of {m.layers} layers"


def table_rows(names=None) -> list[dict[str, str]]:
    """The table as strings, one dict per model; a value its paper does not state is marked
    with ``UNSTATED_MARK`` (it comes from the released configuration or code alone), one where
    paper and configuration differ with ``DIFFERS_MARK``. Every column is marked but "tied"
    and "MoE": "tied" is config.json's in every row, "MoE" the paper's."""
    rows = []
    for name in names or MODELS:
        m = _model(name)

        def show(field_name, text, unstated=m.not_in_paper, differs=m.paper_differs):
            if field_name in unstated:
                return f"{text} {UNSTATED_MARK}"
            return f"{text} {DIFFERS_MARK}" if field_name in differs else text

        moe = (f"{m.experts} × {m.d_ff_expert:,}, top-{m.active_experts}"
               + (f" + {m.shared_experts} shared" if m.shared_experts else "")
               if m.experts else "dense")
        rows.append({
            "model": name,
            "layers": show("layers", str(m.layers)),
            "d_model": show("d_model", f"{m.d_model:,}"),
            "heads / K/V heads": show("heads", f"{m.heads} / {m.kv_heads}"
                                      if m.attention != "MLA" else f"{m.heads} / latent"),
            "attention": m.attention + _window_label(m),
            "d_head": show("d_head", str(m.d_head)),
            "FFN": show("ffn", m.ffn) + ", " + show("d_ff", f"{m.d_ff:,}"),
            "MoE": moe,
            "norm": show("norm", m.norm) + ", " + show("norm_place", m.norm_place),
            "position": m.position + (", base " + show("rope_base", f"{m.rope_base:,.0f}")
                                      if m.rope_base else
                                      f", base {NOT_STATED}" if "rope_base" in m.not_stated
                                      else ""),
            "context": show("context", f"{m.context:,}"),
            "vocab": show("vocab", f"{m.vocab:,}"),
            "tied": "yes" if m.tied else "no",
            "biases": show("biases", m.biases),
        })
    return rows


# --- q46: the Chinese open models -------------------------------------------------------
# Rows kept out of ``MODELS`` so that q38's table and explorer stay as they are; ``shape``
# finds them, ``parameter_count`` counts them.
QWEN_CODE = ("Hugging Face Qwen/Qwen-7B, modeling_qwen.py (c_attn: one Q/K/V projection with a "
             "bias; c_proj and the MLP without; use_logn_attn and use_dynamic_ntk)")
OTHER_MODELS.update({m.name: m for m in (
    Anatomy(
        "Qwen-7B", 32, 4096, 32, 32, 128, "MHA", "SwiGLU", 11008, 151936, False, "RMSNorm",
        "pre", "RoPE", 10000.0, 8192, "QKV",
        ("Bai et al. (2023), Qwen Technical Report, arXiv:2309.16609, §2.3 (untied "
         "embedding, RoPE, biases only in the QKV layer, pre-norm RMSNorm, SwiGLU with the FFN "
         "cut to 8/3 of the hidden size), Table 1 (hidden 4096, 32 heads, 32 layers), §2.4 "
         "(trained at 2048 tokens), §2.5 (dynamic NTK, LogN-Scaling, layer-wise window "
         "attention, at inference only), Table 3",
         "Hugging Face Qwen/Qwen-7B, config.json (intermediate_size 22,016 = the two 11,008-"
         "wide halves, vocab_size 151,936, seq_length 8,192, use_logn_attn and "
         "use_dynamic_ntk true)", QWEN_CODE),
        not_in_paper=("d_ff", "vocab", "rope_base"), paper_differs=("context",),
        notes="The report trains at 2,048 tokens (§2.4); the released Qwen-7B was trained on "
              "to 8,192 (QwenLM/Qwen README), its config's seq_length. Its FFN is 11,008 "
              "wide, not 8/3 · 4,096 ≈ 10,923.",
    ),
    Anatomy(
        "ChatGLM2-6B", 28, 4096, 32, 2, 128, "GQA", "SwiGLU", 13696, 65024, False, "RMSNorm",
        "pre", "RoPE", 10000.0, 32768, "QKV",
        ("THUDM/ChatGLM2-6B, README (GLM's hybrid objective, 1.4T tokens; context from 2K to "
         "32K with FlashAttention, 8K in dialogue training; Multi-Query Attention)",
         "Hugging Face THUDM/chatglm2-6b, config.json (28 layers, hidden 4096, 32 heads, "
         "multi_query_group_num 2, kv_channels 128, ffn_hidden_size 13,696, "
         "padded_vocab_size 65,024, seq_length 32,768, add_qkv_bias, rmsnorm, "
         "post_layer_norm) and modeling_chatglm.py (RoPE on half of each head's 128 "
         "features)"),
        not_in_paper=("layers", "d_model", "heads", "d_head", "ffn", "d_ff", "vocab", "norm",
                      "norm_place", "rope_base", "biases"),
        notes="No paper: the README and the released configuration and code are the "
              "sources. The README calls it Multi-Query Attention; the configuration has 2 "
              "K/V groups for 32 heads (grouped-query attention). ChatGLM3-6B keeps this "
              "shape (its config.json has seq_length 8,192).",
    ),
    _llama("Baichuan2-7B", 32, 4096, 32, 32, 11008, 125696, 4096, 10000.0,
           ("Yang et al. (2023), Baichuan 2, arXiv:2309.10305, §2 (a 125,696-token "
            "vocabulary; RoPE for the 7B model and ALiBi for the 13B; SwiGLU; pre-norm "
            "RMSNorm; a normalised output head, NormHead)",
            "Hugging Face baichuan-inc/Baichuan2-7B-Base, config.json (hidden 4096, "
            "intermediate 11,008, 32 layers, 32 heads, model_max_length 4,096, untied)"),
           not_in_paper=("d_ff", "rope_base")),
    Anatomy(
        "Baichuan2-13B", 40, 5120, 40, 40, 128, "MHA", "SwiGLU", 13696, 125696, False,
        "RMSNorm", "pre", "ALiBi", None, 4096, "none",
        ("Yang et al. (2023), Baichuan 2, arXiv:2309.10305, §2 (ALiBi for the 13B model)",
         "Hugging Face baichuan-inc/Baichuan2-13B-Base, config.json (hidden 5120, "
         "intermediate 13,696, 40 layers, 40 heads, model_max_length 4,096, untied) and "
         "modeling_baichuan.py (_gen_alibi_mask)"),
        not_in_paper=("d_ff", "biases"),
    ),
    Anatomy(
        "Qwen2.5-72B", 80, 8192, 64, 8, 128, "GQA", "SwiGLU", 29568, 152064, False, "RMSNorm",
        "pre", "RoPE", 1e6, 131072, "QKV",
        ("Qwen Team (2024), Qwen2.5 Technical Report, arXiv:2412.15115, §2 (the Qwen2 block: "
         "GQA, SwiGLU, RoPE, QKV bias, pre-norm RMSNorm), Table 1 (80 layers, 64 query and 8 "
         "K/V heads, untied, context 128K)",
         "Yang et al. (2024), Qwen2 Technical Report, arXiv:2407.10671, Table 1 (72B: hidden "
         "8192, intermediate 29,568), §3.2 (YaRN and Dual Chunk Attention for long contexts)",
         "Hugging Face Qwen/Qwen2.5-72B, config.json"),
        not_in_paper=("d_head",), paper_differs=("vocab",),
        notes="The report's vocabulary is 151,665 tokens; the embedding has 152,064 rows.",
    ),
)})

