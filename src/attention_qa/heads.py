"""Looking inside attention heads: capture each head's map and score it by simple patterns.

The scores follow the head taxonomy of Clark et al. (2019), "What Does BERT Look At? An
Analysis of BERT's Attention" (heads that attend to the previous token, to the token itself,
to a fixed position such as [CLS]), and Voita et al. (2019), "Analyzing Multi-Head
Self-Attention" (positional versus content-driven heads). Every score reads weight maps of
shape (..., n, n), rows summing to 1, query i in row i.
"""

import functools

import torch
from torch import nn

from attention_qa.training import portable_init_, single_thread, trained_once
from attention_qa.validation import require_tensor, shape_str


def _require_square_maps(weights, min_batch: int = 0) -> None:
    require_tensor("weights", weights, min_ndim=2 + min_batch, floating=True)
    n, m = weights.shape[-2:]
    if n != m or n < 2:
        raise ValueError(
            f"weights has shape {shape_str(weights.shape)} but must be (..., n, n) with n ≥ 2: "
            "self-attention maps, query i in row i"
        )


def previous_token_score(weights: torch.Tensor) -> torch.Tensor:
    """Mean weight a query puts on the token just before it: mean over i ≥ 1 of w[i, i−1].

    weights: (..., n, n) → (...). 1 for a perfect previous-token head.
    """
    _require_square_maps(weights)
    return weights.diagonal(offset=-1, dim1=-2, dim2=-1).mean(dim=-1)  # (...)


def self_score(weights: torch.Tensor) -> torch.Tensor:
    """Mean weight a query puts on itself, w[i, i] over i ≥ 1: (..., n, n) → (...).

    Query 0 is left out here and in ``first_token_score``: under a causal mask it can only
    attend to key 0, itself, so it would add 1/n to every head's self and first-token score.
    """
    _require_square_maps(weights)
    return weights.diagonal(dim1=-2, dim2=-1)[..., 1:].mean(dim=-1)  # (...)


def first_token_score(weights: torch.Tensor) -> torch.Tensor:
    """Mean weight on position 0 (a [CLS] or beginning-of-sequence token), over queries
    i ≥ 1: (..., n, n) → (...)."""
    _require_square_maps(weights)
    return weights[..., 1:, 0].mean(dim=-1)  # (...)


def content_score(weights: torch.Tensor) -> torch.Tensor:
    """How much a head's map changes with the input: (B, ..., n, n) maps of B inputs → (...).

    For each query position, the total-variation distance ½ Σ_j |w_b[i, j] − w̄[i, j]|
    between one input's row and the row averaged over the B inputs, averaged over inputs and
    positions. 0 for a purely positional head (the same map whatever the tokens), towards 1
    for a head whose weights follow the tokens' content.
    """
    _require_square_maps(weights, min_batch=1)
    if weights.shape[0] < 2:
        raise ValueError(
            f"weights has shape {shape_str(weights.shape)}: content_score compares inputs, "
            "so the first dimension (inputs) needs at least 2"
        )
    mean_map = weights.mean(dim=0, keepdim=True)  # (1, ..., n, n)
    distance = 0.5 * (weights - mean_map).abs().sum(dim=-1)  # (B, ..., n)
    return distance.mean(dim=-1).mean(dim=0)  # (...)


PATTERN_THRESHOLD = 0.5
CONTENT_THRESHOLD = 0.25


def classify_head(scores: dict) -> str:
    """A name for a head from its scores (floats keyed by pattern name), first match wins.

    A head is "previous-token", "self" or "first-token" when at least half of its weight,
    on average, sits on that position; else "content" when its maps change with the input by
    at least CONTENT_THRESHOLD; else "mixed".
    """
    for name in ("previous-token", "self", "first-token"):
        if scores[name] >= PATTERN_THRESHOLD:
            return name
    return "content" if scores["content"] >= CONTENT_THRESHOLD else "mixed"


def pattern_scores(weights: torch.Tensor) -> dict:
    """All four scores of one head, as floats, from its maps on B inputs: (B, n, n)."""
    _require_square_maps(weights, min_batch=1)
    return {
        "previous-token": previous_token_score(weights).mean().item(),
        "self": self_score(weights).mean().item(),
        "first-token": first_token_score(weights).mean().item(),
        "content": content_score(weights).item(),
    }


@torch.no_grad()
def attention_maps(model: nn.Module, tokens: torch.Tensor) -> torch.Tensor:
    """Every head's weights from a model whose blocks hold ``attn`` modules returning
    ``(output, weights)`` (``attention_qa.models.TinyTransformerLM``).

    tokens: (B, T) → weights (num_layers, B, h, T, T), captured with forward hooks that are
    removed again before returning.
    """
    captured = []
    hooks = [
        block.attn.register_forward_hook(lambda _m, _i, out: captured.append(out[1]))
        for block in model.blocks
    ]
    try:
        model(tokens)
    finally:
        for hook in hooks:
            hook.remove()
    return torch.stack(captured)  # (L, B, h, T, T)


# --- a task that needs the previous token ---------------------------------------------------

SUM_VOCAB = 12
SUM_LENGTH = 16


def sum_task_batch(batch: int, g: torch.Generator, vocab: int = SUM_VOCAB,
                   length: int = SUM_LENGTH):
    """Random tokens x (batch, length) and targets y_t = (x_{t−1} + x_t) mod vocab.

    y_0 has no previous token and is not trained on. Solving the task needs position t to
    read token t − 1: the job of a previous-token head.
    """
    x = torch.randint(vocab, (batch, length), generator=g)  # (B, T)
    y = (x + x.roll(1, dims=1)) % vocab  # (B, T); y[:, 0] is meaningless
    return x, y


_TRAINED = {}


def untrained_sum_model(seed: int = 0):
    """The model ``train_sum_model`` starts from: a 2-layer, 2-head ``TinyTransformerLM``
    (d_model = 32) in float64, initialised the same on every machine, in eval mode."""
    from attention_qa.models import TinyTransformerLM

    return portable_init_(TinyTransformerLM(SUM_VOCAB, 32, 2, 2, SUM_LENGTH), seed).eval()


def train_sum_model(steps: int = 300, seed: int = 0):
    """A 2-layer, 2-head ``TinyTransformerLM`` (d_model = 32) trained on ``sum_task_batch``.

    Adam, learning rate 0.003, batch 128, float64, on one thread, from ``portable_init_``: a
    start that is bit-identical everywhere and a step small enough that training is not
    chaotic, so the trained weights, and every figure drawn from them, agree to about 1e-12
    on any CPU and thread count. Returns ``(model, losses)``; the result is cached per
    (steps, seed), so a chapter and its explorer train once. Do not modify the returned model.
    """
    key = (steps, seed)
    if key in _TRAINED:
        return _TRAINED[key]

    def train() -> dict:
        model = untrained_sum_model(seed).train()
        opt = torch.optim.Adam(model.parameters(), lr=3e-3)
        g = torch.Generator().manual_seed(seed + 1)
        losses = []
        with single_thread():
            for _ in range(steps):
                x, y = sum_task_batch(128, g)
                logits = model(x)  # (B, T, vocab)
                loss = nn.functional.cross_entropy(
                    logits[:, 1:].reshape(-1, SUM_VOCAB), y[:, 1:].reshape(-1)
                )
                opt.zero_grad()
                loss.backward()
                opt.step()
                losses.append(loss.item())
        return {"state": model.state_dict(), "losses": losses}

    with torch.random.fork_rng(devices=[]):
        result = trained_once(f"sum-model-{steps}-{seed}", train)
        model = untrained_sum_model(seed)
    model.load_state_dict(result["state"])
    _TRAINED[key] = (model.eval(), result["losses"])
    return _TRAINED[key]


SUM_MODELS = ("trained", "untrained")
NUM_PROBE_INPUTS = 64


@functools.lru_cache(maxsize=None)
def sum_model_maps(model_name: str) -> torch.Tensor:
    """Every head's maps, (layers, NUM_PROBE_INPUTS, heads, T, T), of the trained sum model
    or of its starting point, on the same NUM_PROBE_INPUTS held-out inputs."""
    if model_name == "trained":
        model, _ = train_sum_model()
    elif model_name == "untrained":
        model = untrained_sum_model()
    else:
        raise ValueError(f"model must be one of {SUM_MODELS}, got {model_name!r}")
    tokens, _ = sum_task_batch(NUM_PROBE_INPUTS, torch.Generator().manual_seed(100))
    return attention_maps(model, tokens)
