"""The text q31 trains its byte-level BPE on: text this book wrote.

ENGLISH holds the short answers of q01–q30 as they stood when q31 was written (maths
written as plain text; links, emphasis and Chinese glosses removed); CHINESE the Chinese
wording of the same thirty questions. A snapshot, so that q31's vocabulary does not move
when a chapter is edited.

SENTENCES are the two sentences q31 and its explorer tokenize, one in each language.

HELD_OUT holds English the tokenizer never trains on: the short answers of q32–q34 (maths
as plain text, as above) and one everyday sentence, to measure it outside its training text.
"""

ENGLISH = (
    (
        'Attention is a lookup by content. A query is compared with every key; softmax '
        'turns the scores into weights that are non-negative and sum to 1; the output is '
        'the weighted average of the values. A dictionary does a hard lookup, one exact '
        'key; attention does a soft one, a blend dominated by the best-matching keys, and'
        ' a sharper softmax turns it into the hard lookup. In a Transformer, Q, K and V '
        'are learned projections of the tokens.'
    ),
    (
        'Attention(Q, K, V) = softmax(QK^top/sqrtd_k),V (Vaswani et al., 2017). Q holds n'
        ' queries, K holds m keys, both of length d_k; V holds m values of length d_v. '
        'QK^top is n times m, one score per pair; softmax runs along each row; times V '
        'gives n times d_v, one weighted average per query. d_v need not equal d_k, and n'
        ' = m only in self-attention.'
    ),
    (
        'Five steps. (1) Project the token vectors three ways: Q = XW_Q, K = XW_K, V = '
        'XW_V. (2) Score each query against every key, q_i cdot k_j. (3) Divide by '
        "sqrtd_k. (4) Softmax each query's scores into weights that sum to 1. (5) Output "
        'the weighted sum of the values, z_i = sum_j p_ij v_j, not their plain sum. For '
        'all tokens at once that is softmax(QK^top/sqrtd_k)V.'
    ),
    (
        'Because a dot product of d_k independent unit-variance components has variance '
        'd_k: unscaled, the scores spread like sqrtd_k, softmax goes nearly one-hot, its '
        'Jacobian diag(p) - pp^top nearly vanishes, and the gradient to the queries and '
        'keys stalls. Dividing by sqrtd_k restores variance 1 at every d_k; dividing by '
        'd_k overshoots towards uniform weights. It is a sensible default at '
        'initialisation, not a guarantee for a trained network.'
    ),
    (
        'They differ only in the score. Additive attention (Bahdanau et al., 2015) uses a'
        ' small network, w_v^top tanh(W_q q + W_k k); dot-product uses q^top k; scaled '
        'uses q^top k / sqrtd_k. The FLOPs are of the same order, but the dot product is '
        'one matrix multiplication while additive builds an n times m times d_h tensor: '
        'slower, more memory. Additive beat unscaled dot products at large d_k, likely '
        'through saturation; scaling fixes that and keeps the speed.'
    ),
    (
        'Project X to Q = XW_Q, K = XW_K, V = XW_V, then compute '
        'softmax(QK^top/sqrtd_k),V with a mask on the keys a query may not see: five '
        'lines. Most bugs are four choices: transpose the last two dims of K '
        '(k.transpose(-2, -1)); divide by sqrtd_k, not sqrtd_model; read the mask in the '
        'convention of the code you call; softmax over the keys, dim=-1.'
    ),
    (
        'A mask tells attention which keys a query may not see: before the softmax, '
        'blocked scores become a very negative number, so their weights are 0 and the '
        'rest still sum to 1. A padding mask hides the padding of shorter sequences; a '
        'causal mask hides every later key. They combine with AND. Traps: libraries '
        'disagree on what True means, -1e9 overflows float16, and -inf turns a fully '
        'blocked row into NaN.'
    ),
    (
        'With teacher forcing: the decoder reads the whole target at once and predicts '
        'every next token in one parallel pass. Shift right: the input at position t is '
        'y_t-1 (<bos> at 0), and the output at t predicts y_t. Causal mask: position t '
        'attends to 0, dots, t only. So the prediction of y_t never sees y_t or later. '
        'The blocking mask is strictly upper triangular, triu(ones, diagonal=1).'
    ),
    (
        'Autoregressively: predict one token, append it, predict the next, so N tokens '
        'take N sequential steps; greedy decoding takes the argmax each time. Naively, '
        'step t recomputes the whole prefix, an O(t^2) score matrix. With a causal mask '
        'earlier keys and values never change, so a KV cache (KV) keeps them and each '
        "step computes only the new token's row of t scores. The tokens are identical; "
        'the price is memory.'
    ),
    (
        'Multi-head attention runs h attentions side by side, each with its own '
        'projections down to d_k = d_model/h and its own weights; their outputs are '
        'concatenated and mixed by W_O. One head gives each query a single weighted '
        'average, so it cannot look at two places for two reasons without blurring them; '
        'with several, one head can follow position while another follows content. It '
        'costs no extra parameters (q11).'
    ),
    (
        'So that adding heads costs nothing. With d_k = d_model/h the heads together use '
        'the same four d_model times d_model projections, so parameters and matrix-'
        'product FLOPs are the same for every h as for one full-width head. The split is '
        'a choice of representation, not a saving: several narrow heads can attend to '
        "different places. The price: each head's score matrix Q_iK_i^top has rank at "
        'most d_k.'
    ),
    (
        'Never loop over heads. Project Q, K, V for all heads with one matrix each, split'
        ' the last axis with view(B, n, h, d_k) and transpose(1, 2) to (B, h, n, d_k), so'
        " heads become a batch axis: one batched product gives every head's scores, one "
        'softmax, one product with V. Merge back with transpose(1, 2) and reshape to (B, '
        'n, d_model); view after a transpose needs contiguous. It equals '
        'nn.MultiheadAttention.'
    ),
    (
        'The same multi-head attention with different inputs and masks. Encoder self-'
        'attention: Q, K, V from the source; every real source token sees every other. '
        'Masked decoder self-attention: all three from the target, with a causal mask. '
        "Cross-attention: queries from the decoder, keys and values from the encoder's "
        'output (the memory); its weights are n times m, and it is how the source reaches'
        ' the decoder at all.'
    ),
    (
        'They share key and value heads among query heads. MQA (Shazeer, 2019) gives all '
        'h query heads one K/V head; GQA (Ainslie et al., 2023) gives each group of g = h'
        ' / h_kv query heads one. The K/V cache shrinks g-fold and each cached byte read '
        'serves g heads. Decoding is bandwidth-bound; where the cache dominates that '
        'traffic (long contexts, large batches) steps get faster. The arithmetic does not'
        ' shrink. MQA costs quality; GQA stays close to MHA.'
    ),
    (
        'Because self-attention alone treats its input as a set: shuffle the tokens and '
        'the outputs shuffle the same way, so "dog bites man" looks like "man bites dog".'
        ' A positional encoding adds a position-dependent vector to each embedding. The '
        '2017 Transformer uses sines and cosines of geometric frequencies: a shift by k '
        'is one fixed rotation, and every position has the same norm. Learned position '
        'vectors did as well there. Later models encode relative position inside '
        'attention (RoPE, ALiBi).'
    ),
    (
        'An embedding layer is a V times d_model matrix E: looking up token t returns row'
        ' t (one-hot times E, done by indexing). Weight tying reuses E^top as the output '
        'projection that scores every token. It saves V cdot d_model parameters per extra'
        " use (18.9 million for 37,000 tokens at d_model = 512), and in Press and Wolf's "
        'language models it also lowered perplexity. GPT-2, BERT, T5 and Gemma tie; LLaMA'
        ' 2, T5 v1.1 and Mistral do not.'
    ),
    (
        'Every sublayer sits in a residual connection, x + F(x): an identity path for the'
        ' signal and the gradient, so a layer learns a correction. Layer normalisation '
        "normalises each token's own feature vector; BatchNorm averages over the batch, "
        'so a token depends on other sequences and their padding, and inference needs '
        'running averages. Post-LN (2017) normalises after the sum, Pre-LN (GPT-2 on) '
        'before the sublayer: better gradients at initialisation.'
    ),
    (
        'A two-layer network applied to every position on its own: FFN(x) = max(0, xW_1 +'
        ' b_1)W_2 + b_2, the same weights everywhere (a 1 × 1 convolution), widening '
        'd_model to d_ff (usually 4,d_model) and back. Attention decides where to read; '
        'the feed-forward network transforms what was read, and holds about two thirds of'
        " a block's parameters. Without its nonlinearity the two layers collapse into one"
        ' matrix.'
    ),
    (
        'On three counts (Vaswani et al., 2017, Table 1). Cost per layer: attention O(n^2'
        ' d), recurrence O(nd^2), so attention is cheaper while n < d. Sequential steps: '
        'a recurrence needs n, attention one, which suits parallel hardware. Path length '
        'between two positions: O(n) through a recurrence, O(1) through attention, so '
        'gradients between distant tokens need not survive a long chain. The price is '
        'time and memory quadratic in n.'
    ),
    (
        'Full attention scores every query against every key, so time and memory grow as '
        'n^2. Three routes cut that. Linear attention replaces e^q cdot k by '
        'varphi(q)cdotvarphi(k) and regroups the products, linear in n: with a fixed '
        'varphi it is a different model; with random features (Performer) it approximates'
        ' softmax. Low-rank methods (Linformer) project keys and values to k ll n rows. '
        'Sparse attention keeps the softmax on some keys only: a window, strides, global '
        'tokens.'
    ),
    (
        'FlashAttention (Dao et al., 2022) computes exact attention block by block and '
        'never stores the n times m scores. Online softmax makes that possible: per '
        'query, keep a running max M, a running sum L and a running weighted sum O, and '
        'rescale them by e^M_old - M_new when a block raises the max; at the end O/L is '
        'softmax attention exactly. The FLOPs are the same; memory falls to O(n cdot '
        'block), and GPU memory traffic with it.'
    ),
    (
        "Capture each head's weight matrix (a forward hook, or need_weights), draw it, "
        'and score it over many inputs: previous-token, positional (self, first token) '
        'and content heads are the common kinds (Clark et al., 2019; Voita et al., 2019).'
        ' Maps are clues, not proof: only an intervention, such as switching a head off, '
        'shows the model uses it. BERT, GPT and ViT share the attention and differ in the'
        ' mask: bidirectional, causal, all-to-all over patches.'
    ),
    (
        'Every family uses the same attention; what differs is where Q, K and V come from'
        ' and the mask. BERT: bidirectional self-attention. GPT: causal self-attention. '
        'T5: a bidirectional encoder, a causal decoder, and cross-attention from decoder '
        'to encoder. ViT: bidirectional over [CLS] and 16 × 16 patches. CLIP has no '
        'cross-attention: two separate encoders, compared only through a matrix of cosine'
        ' similarities. Text reads image through cross-attention in BLIP and Flamingo, or'
        ' through one causal sequence in LLaVA.'
    ),
    (
        "A mixture of experts (MoE) replaces a block's one feed-forward network by E of "
        'them and a router that sends each token to its top k, mixing their outputs with '
        'a softmax over the k chosen logits. Parameters grow with E, compute per token '
        'with k: Mixtral 8×7B holds 46.7 B parameters and uses 12.9 B per token. An '
        'auxiliary loss keeps the experts evenly loaded; a capacity cap drops the '
        'overflow.'
    ),
    (
        'RoPE rotates each pair of query and key features by the angle mtheta_i, position'
        " times a pair's frequency theta_i = 10000^-2i/d, so a rotated query and key "
        'score by their offset m - n alone. ALiBi adds no vector: each head adds '
        '-slopecdotdistance to its scores, one fixed slope per head. Past the training '
        "length RoPE's slow pairs reach unseen angles; position interpolation or a larger"
        ' base (NTK, YaRN) brings them back.'
    ),
    (
        'LLaMA changed three things (§2.2). RMSNorm, before each sublayer (pre-norm), '
        'divides by the root mean square, with no mean subtraction and no bias. SwiGLU '
        'replaces the ReLU network: three matrices, so d_ff approx tfrac83d keeps the '
        'parameter count. Rotary embeddings (RoPE) replace the absolute positions, '
        "rotating q and k in every layer. The biases go; LLaMA 2's largest models share "
        'K/V heads (GQA); newer models add QK-norm, which bounds the logits.'
    ),
    (
        "It caches one small latent vector per token instead of every head's keys and "
        'values. Multi-head latent attention (MLA, DeepSeek-V2, 2024) projects each token'
        " to c = W_DKV,x and rebuilds every head's K and V from c. W_UK folds into the "
        'query, so decoding attends to the cached c directly. A small shared RoPE key '
        'rides beside it: DeepSeek-V2 caches 576 numbers per token and layer, where MHA '
        'would cache 32,768.'
    ),
    (
        'Greedy takes the most probable token at each step; beam search keeps the b most '
        'probable prefixes and can find a likelier sequence that greedy misses. Sampling '
        'draws from the distribution: temperature T divides the logits (T to 0 is '
        'greedy), top-k keeps the k likeliest tokens, top-p the smallest set whose '
        'probability reaches p. Translation wants the likeliest output, so beam; chat '
        'wants varied text, and maximising probability repeats itself, so sampling.'
    ),
    (
        'It stops the K/V cache from wasting memory. A contiguous cache per request must '
        'reserve the maximum length up front, and most of it sits unused. PagedAttention '
        '(vLLM; Kwon et al., 2023) stores K/V in fixed-size blocks from one shared pool, '
        'with a block table per sequence, as an operating system pages memory. A sequence'
        ' wastes less than one block, so many more requests fit; finished requests free '
        'blocks at once; prompts can be shared.'
    ),
    (
        'Softmax weights sum to 1, so a head with nothing to read still puts its weight '
        'somewhere; trained LLMs park it on the first tokens, which every query sees: the'
        ' attention sinks. A window that evicts them pushes that weight onto recent '
        'tokens and the output breaks. StreamingLLM keeps about four sinks plus the last '
        'w tokens: fixed memory, but evicted tokens are forgotten. Positions count within'
        ' the cache, so keys are cached before RoPE and rotated again every step.'
    ),
)

CHINESE = (
    (
        '什么是注意力机制？Q、K、V 分别代表什么？'
    ),
    (
        '自注意力的计算公式是怎样的？各个矩阵的形状？'
    ),
    (
        'Transformer 里自注意力的计算过程是怎样的？'
    ),
    (
        '为什么要除以 √d_k？为什么缩放因子是 √d_k？'
    ),
    (
        '加性注意力、点积注意力、缩放点积注意力有什么区别？为什么 Transformer'
        ' 用点积而不是加法？'
    ),
    (
        '手写 self-attention 代码'
    ),
    (
        'Mask 的作用是什么？padding mask 和 causal mask '
        '有什么区别？'
    ),
    (
        '解码器如何保证因果性？为什么要 shifted right？'
    ),
    (
        'Transformer 如何生成序列？什么是自回归？'
    ),
    (
        'Multi-Head Attention 是什么，有什么作用？'
    ),
    (
        '为什么 Multi-head Attention 中每个 head 要降维？'
    ),
    (
        '多头注意力的高效实现：view / transpose / contiguous'
    ),
    (
        'self-attention 和 encoder-decoder '
        'attention 的关系？'
    ),
    (
        'MQA / GQA 是什么？为什么能省显存？'
    ),
    (
        '为什么需要位置编码？正余弦位置编码怎么理解？'
    ),
    (
        '词嵌入与权重共享'
    ),
    (
        '为什么 Transformer 用 LayerNorm 而不是 '
        'BatchNorm？'
    ),
    (
        '前馈网络 FFN 的作用是什么？'
    ),
    (
        '为什么选择注意力？与 RNN、CNN 的复杂度比较'
    ),
    (
        '线性注意力、稀疏注意力、滑动窗口注意力'
    ),
    (
        'FlashAttention 的原理：分块与 online softmax'
    ),
    (
        '如何可视化和分析多头注意力？BERT、GPT、ViT 的注意力有何不同？'
    ),
    (
        'BERT、GPT、ViT、多模态模型里的注意力有什么不同？'
    ),
    (
        'MoE 是什么？门控网络如何选择专家？'
    ),
    (
        'RoPE 旋转位置编码的原理？ALiBi 是什么？'
    ),
    (
        'LLaMA 的 Transformer block 和原始的有什么不同？'
    ),
    (
        'MLA 是什么？为什么它的 KV cache 更小？'
    ),
    (
        '解码策略有哪些？top-k 和 top-p 的区别？'
    ),
    (
        'PagedAttention 解决了什么问题？'
    ),
    (
        '为什么会有 attention sink？StreamingLLM '
        '怎么做到无限长度？'
    ),
)

SENTENCES = {
    "English": "Attention lets every token look at every other token.",
    "Chinese": "注意力让每个词元都能看到其他所有词元。",
}

HELD_OUT = {
    "q32's short answer": (
        'Each objective is an attention mask plus a choice of where the loss goes. Causal LM '
        '(GPT): each position sees the past and predicts the next token. Masked LM (BERT): '
        'attention is bidirectional; 15% of tokens are hidden and only those are predicted. '
        'Prefix LM: bidirectional over a prefix, causal after it. Span corruption (T5): '
        'dropped spans become sentinels a decoder writes out. The usual case for '
        'decoder-only: every token predicts, generation is the task, the cache never changes.'
    ),
    "q33's short answer": (
        'Prefill runs the whole prompt through the model at once: thousands of tokens share '
        'each weight read, so it is compute-bound and sets the time to first token. Decode '
        'adds one token per sequence per step: each step reads all the weights and the K/V '
        'cache for about one FLOP per byte at batch 1, so it is memory-bound and sets the '
        'time per token. Memory is weights (2 bytes per parameter in bfloat16), cache and '
        'activations.'
    ),
    "q34's short answer": (
        'Decoding one token reads all the weights, so the target model can check several '
        'tokens in one pass for about the cost of one. A small draft model proposes gamma '
        'tokens; the target scores them together and keeps draft token x with probability '
        'min(1, p(x)/q(x)). At the first rejection it samples from the leftover mass '
        'max(p - q, 0), renormalised; if all are kept it adds one token of its own. Every '
        'token follows p exactly.'
    ),
    "an everyday sentence": (
        'My sister bought fresh bread and cheese at the market before the rain started.'
    ),
}
