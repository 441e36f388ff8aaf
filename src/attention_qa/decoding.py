"""Choosing the next token: top-k and top-p filtering, sampling with a temperature, beam search.

- Top-k sampling follows Fan, Lewis and Dauphin (2018), "Hierarchical Neural Story
  Generation": sample among the k most likely tokens only.
- Top-p ("nucleus") sampling follows Holtzman et al. (2020), "The Curious Case of Neural Text
  Degeneration", section 3.1: sample among the smallest set of most likely tokens whose
  probability reaches p, so the number of candidates adapts to how sure the model is.
- The temperature T divides the logits before the softmax: T < 1 sharpens the distribution,
  T > 1 flattens it, and T → 0 tends to the argmax, which is what T = 0 returns.
- ``next_token_probs`` is the distribution ``sample_next`` draws from, and ``entropy_bits``
  its Shannon entropy: how many bits of choice the filters leave.
- Min-p sampling (Nguyen et al., 2024, "Turning Up the Heat: Min-p Sampling for Creative
  and Coherent LLM Outputs") keeps the tokens whose probability is at least min_p times the
  most probable token's, so the cut follows how sure the model is.
- Penalties on tokens already generated: the repetition penalty of CTRL (Keskar et al.,
  2019, section 4.1) divides a positive logit by r and multiplies a negative one by r (as
  ``transformers``' ``RepetitionPenaltyLogitsProcessor`` does); the frequency and presence
  penalties subtract count × frequency and, once, presence (as OpenAI's API defines them).
- Beam search keeps the ``beam_size`` most probable prefixes at every step (e.g. Sutskever,
  Vinyals and Le, 2014, "Sequence to Sequence Learning with Neural Networks", section 3.1),
  ranked by their total log-probability divided by L^length_penalty, L the number of
  tokens after bos; length_penalty 0 (the default) is no length normalisation.
"""

import math
import numbers

import torch

from attention_qa.validation import (
    require_generator,
    require_nonnegative_int,
    require_positive_int,
    require_positive_number,
    require_tensor,
    shape_str,
)

# q28's example: a made-up next-token distribution after "The cat sat on the".
TOKENS = ("mat", "sofa", "floor", "bed", "chair", "rug", "roof", "table", "box", "grass",
          "moon", "piano")
LOGITS = torch.tensor([3.0, 2.4, 2.1, 1.8, 1.5, 1.2, 0.8, 0.5, 0.2, -0.2, -1.0, -1.5],
                      dtype=torch.float64)  # (V,)

def filter_logits(logits: torch.Tensor, top_k: int | None = None,
                  top_p: float | None = None, min_p: float | None = None) -> torch.Tensor:
    """Set to −inf every token outside the top_k, then outside the nucleus of mass top_p,
    then below min_p times the most probable token's probability.

    logits: (..., V), filtered over the last dim; returns a new tensor of the same shape and
    dtype. top_k: keep the k largest logits of each row (ties broken by ``torch.topk``; a k
    above V keeps all). top_p: then keep the smallest set of most probable tokens whose
    probability, by the softmax of what top-k kept, reaches top_p; the token whose
    probability crosses top_p is kept, so the most probable token always is and no row is
    ever empty. min_p: keep the tokens whose probability is at least min_p times the top
    token's, i.e. whose logit is at least the largest plus log(min_p); the top token always
    stays. None skips a filter; top_p = 1 and min_p = 0 keep every token.
    """
    _check_logits(logits)
    _check_filters(top_k, top_p, min_p)
    filtered = logits
    if top_k is not None and top_k < logits.shape[-1]:
        kept = logits.topk(top_k, dim=-1).indices  # (..., k)
        keep = torch.zeros_like(logits, dtype=torch.bool).scatter_(-1, kept, True)  # (..., V)
        filtered = filtered.masked_fill(~keep, -math.inf)  # (..., V)
    if top_p is not None and top_p < 1:
        work = torch.promote_types(logits.dtype, torch.float32)
        probs = torch.softmax(filtered.to(work), dim=-1)  # (..., V)
        sorted_probs, order = probs.sort(dim=-1, descending=True, stable=True)  # (..., V)
        # The mass of the tokens ranked before each one; a token is dropped once the mass
        # before it has reached top_p. The first token has 0 before it, so it always stays.
        cumulative = sorted_probs.cumsum(dim=-1)  # (..., V)
        mass_before = torch.cat(
            [torch.zeros_like(cumulative[..., :1]), cumulative[..., :-1]], dim=-1
        )  # (..., V)
        drop_sorted = mass_before >= top_p  # (..., V), in ranked order
        drop = torch.zeros_like(drop_sorted).scatter_(-1, order, drop_sorted)  # vocab order
        filtered = filtered.masked_fill(drop, -math.inf)  # (..., V)
    if min_p is not None and min_p > 0:
        top = filtered.amax(dim=-1, keepdim=True)  # (..., 1), kept by every filter above
        # p_i >= min_p · p_top  ⇔  logit_i >= logit_top + log(min_p), with no softmax.
        filtered = filtered.masked_fill(filtered < top + math.log(min_p), -math.inf)
    return filtered if filtered is not logits else logits.clone()


def apply_penalties(logits: torch.Tensor, previous_tokens: torch.Tensor,
                    repetition: float = 1.0, frequency: float = 0.0,
                    presence: float = 0.0) -> torch.Tensor:
    """Logits (..., V) with the tokens already generated made less likely.

    previous_tokens: (..., t) integer ids, the same leading dims as logits (t may be 0).
    Every token that occurs there has its logit divided by ``repetition`` when positive
    and multiplied by it when negative, then lowered by count × ``frequency`` and, once,
    by ``presence``. repetition 1 and frequency = presence = 0 change nothing; returns a
    new tensor.
    """
    _check_logits(logits)
    require_tensor("previous_tokens", previous_tokens, min_ndim=1)
    V = logits.shape[-1]
    if (previous_tokens.is_floating_point() or previous_tokens.dtype == torch.bool
            or previous_tokens.shape[:-1] != logits.shape[:-1]):
        raise ValueError(
            f"previous_tokens must be integer ids of shape (..., t) with the leading dims of "
            f"logits {shape_str(logits.shape)}, got {previous_tokens.dtype} "
            f"{shape_str(previous_tokens.shape)}")
    if previous_tokens.numel() and (previous_tokens.min() < 0 or previous_tokens.max() >= V):
        raise ValueError(f"previous_tokens must be ids in [0, V) = [0, {V})")
    require_positive_number("repetition", repetition)
    for name, value in (("frequency", frequency), ("presence", presence)):
        if (isinstance(value, bool) or not isinstance(value, numbers.Real)
                or not math.isfinite(value)):
            raise ValueError(f"{name} must be a finite number, got {value!r}")
    counts = torch.zeros(logits.shape, dtype=logits.dtype).scatter_add_(
        -1, previous_tokens.long(), torch.ones(previous_tokens.shape, dtype=logits.dtype)
    )  # (..., V): how often each token occurred
    seen = counts > 0  # (..., V)
    penalised = torch.where(logits > 0, logits / repetition, logits * repetition)
    out = torch.where(seen, penalised, logits)  # (..., V)
    return out - counts * frequency - seen.to(logits.dtype) * presence


def sample_next(logits: torch.Tensor, temperature: float = 1.0, top_k: int | None = None,
                top_p: float | None = None, generator=None) -> torch.Tensor:
    """Draw one token per row of logits (..., V); returns an integer tensor of shape (...).

    temperature = 0 returns the argmax (greedy decoding; the filters cannot remove it).
    Otherwise the logits are divided by the temperature, filtered by ``filter_logits(...,
    top_k, top_p)`` and a token is drawn from their softmax with ``generator`` (a
    ``torch.Generator``, or None for PyTorch's global random state).
    """
    _check_logits(logits)
    _check_filters(top_k, top_p)
    require_generator("generator", generator)
    _check_temperature(temperature)
    if temperature == 0:
        return logits.argmax(dim=-1)  # (...)
    # Shifting by the row maximum first changes no probability, and keeps a tiny temperature
    # from overflowing the largest logit to +inf (0 / T stays 0).
    shifted = logits - logits.amax(dim=-1, keepdim=True)  # (..., V), max 0
    filtered = filter_logits(shifted / temperature, top_k, top_p)  # (..., V)
    work = torch.promote_types(logits.dtype, torch.float32)
    probs = torch.softmax(filtered.to(work), dim=-1)  # (..., V)
    V = logits.shape[-1]
    draws = torch.multinomial(probs.reshape(-1, V), 1, generator=generator)  # (rows, 1)
    return draws.reshape(logits.shape[:-1])  # (...)


def beam_search(log_probs_fn, bos: int, beam_size: int, max_len: int,
                eos: int | None = None,
                length_penalty: float = 0.0) -> list[tuple[list[int], float]]:
    """The ``beam_size`` most probable continuations of ``bos`` that beam search finds.

    log_probs_fn(prefixes): prefixes is a (beams, t) integer tensor, each row a prefix that
    starts with bos; it returns (beams, V) log-probabilities of the next token. At most
    max_len tokens are generated after bos. At each step every live beam is extended by
    every token, and the beam_size best of these and of the beams already finished survive.
    A beam that emits eos is finished: it is not extended again and keeps its score.
    Candidates of log-probability −inf are never kept. Beams are ranked by their total
    log-probability divided by L ** length_penalty, L the number of tokens after bos (eos
    included): 0 ranks by the total, which favours short beams since every token adds a
    negative log-probability; 1 ranks by the mean per token.

    Returns a list of ``(tokens, total log-probability)``, tokens a list of ints starting
    with bos, best first by that ranking: beam_size pairs, or fewer when fewer possible
    sequences exist.
    """
    if not callable(log_probs_fn):
        raise TypeError(f"log_probs_fn must be callable, got {type(log_probs_fn).__name__}")
    require_nonnegative_int("bos", bos)
    require_positive_int("beam_size", beam_size)
    require_positive_int("max_len", max_len)
    if eos is not None:
        require_nonnegative_int("eos", eos)
    if (isinstance(length_penalty, bool) or not isinstance(length_penalty, numbers.Real)
            or not math.isfinite(length_penalty)):
        raise ValueError(f"length_penalty must be a finite number, got {length_penalty!r}")

    def rank(tokens: list[int], score: float) -> float:
        return score / (len(tokens) - 1) ** length_penalty

    finished: list[tuple[list[int], float]] = []
    alive: list[tuple[list[int], float]] = [([bos], 0.0)]
    vocab = None
    for _ in range(max_len):
        if not alive:
            break
        prefixes = torch.tensor([tokens for tokens, _ in alive])  # (beams, t)
        log_probs = log_probs_fn(prefixes)
        vocab = _check_log_probs(log_probs, len(alive), vocab)
        scores = torch.tensor([score for _, score in alive], dtype=torch.float64)  # (beams,)
        extended = scores.unsqueeze(1) + log_probs.detach().cpu().double()  # (beams, V)
        # Finished beams compete with the extensions for the beam_size places.
        pool = torch.cat([torch.tensor([s for _, s in finished], dtype=torch.float64),
                          extended.flatten()])  # (finished + beams·V,)
        lengths = torch.tensor([len(t) - 1 for t, _ in finished] + [len(alive[0][0])]
                               * extended.numel(), dtype=torch.float64)  # (same,)
        keys = pool / lengths ** length_penalty  # (same,)
        ranked = keys.sort(descending=True, stable=True).indices[:beam_size]
        next_finished, next_alive = [], []
        for idx in ranked.tolist():
            if pool[idx] == -math.inf:
                break  # an impossible sequence; every later one is too
            if idx < len(finished):
                next_finished.append(finished[idx])
                continue
            beam, token = divmod(idx - len(finished), vocab)
            candidate = (alive[beam][0] + [token], float(pool[idx]))
            (next_finished if token == eos else next_alive).append(candidate)
        finished, alive = next_finished, next_alive
    # Beams still alive after max_len tokens end there.
    return sorted(finished + alive, key=lambda pair: -rank(*pair))[:beam_size]


def next_token_probs(logits: torch.Tensor, temperature: float = 1.0, top_k: int | None = None,
                     top_p: float | None = None) -> torch.Tensor:
    """The distribution ``sample_next`` draws from: probabilities (..., V) of logits (..., V).

    temperature = 0 puts all the mass on the argmax (ties: the first); otherwise the
    softmax of ``filter_logits(logits / temperature, top_k, top_p)``, in float32 or wider.
    """
    _check_logits(logits)
    _check_filters(top_k, top_p)
    _check_temperature(temperature)
    work = torch.promote_types(logits.dtype, torch.float32)
    if temperature == 0:
        best = logits.argmax(dim=-1, keepdim=True)  # (..., 1)
        return torch.zeros_like(logits, dtype=work).scatter_(-1, best, 1.0)  # (..., V)
    shifted = logits - logits.amax(dim=-1, keepdim=True)  # (..., V), max 0
    filtered = filter_logits(shifted / temperature, top_k, top_p)  # (..., V)
    return torch.softmax(filtered.to(work), dim=-1)  # (..., V)


def entropy_bits(probs: torch.Tensor) -> torch.Tensor:
    """Shannon entropy −Σ p log₂ p over the last dim, in bits; tokens of probability 0 add 0."""
    require_tensor("probs", probs, min_ndim=1, floating=True)
    terms = torch.where(probs > 0, probs * torch.log2(probs), torch.zeros_like(probs))
    # + 0.0 turns the −0.0 of a single sure token into 0.0.
    return -terms.sum(dim=-1) + 0.0  # (...)


def _check_temperature(temperature) -> None:
    if (isinstance(temperature, bool) or not isinstance(temperature, numbers.Real)
            or not 0 <= temperature < math.inf):
        raise ValueError(f"temperature must be a non-negative, finite number, got {temperature!r}")


def _check_logits(logits) -> None:
    require_tensor("logits", logits, min_ndim=1, floating=True)
    if logits.shape[-1] == 0:
        raise ValueError(f"logits has shape {shape_str(logits.shape)}: no token to choose from")
    if torch.isnan(logits).any() or (logits == math.inf).any():
        raise ValueError("logits must not contain NaN or +inf")
    if (logits == -math.inf).all(dim=-1).any():
        raise ValueError("logits has a row whose every entry is -inf: no token can be chosen")


def _check_filters(top_k, top_p, min_p=None) -> None:
    if top_k is not None:
        require_positive_int("top_k", top_k)
    if top_p is not None and (isinstance(top_p, bool) or not isinstance(top_p, numbers.Real)
                              or not 0 < top_p <= 1):
        raise ValueError(f"top_p must be a number in (0, 1], got {top_p!r}")
    if min_p is not None and (isinstance(min_p, bool) or not isinstance(min_p, numbers.Real)
                              or not 0 <= min_p <= 1):
        raise ValueError(f"min_p must be a number in [0, 1], got {min_p!r}")


def _check_log_probs(log_probs, beams: int, vocab: int | None) -> int:
    """The vocabulary size V of log_probs_fn's answer, after checking it."""
    require_tensor("log_probs_fn's output", log_probs, floating=True)
    want_vocab = "V" if vocab is None else str(vocab)
    if (log_probs.ndim != 2 or log_probs.shape[0] != beams or log_probs.shape[1] == 0
            or (vocab is not None and log_probs.shape[1] != vocab)):
        raise ValueError(
            f"log_probs_fn returned shape {shape_str(log_probs.shape)} for {beams} prefixes "
            f"but must return ({beams}, {want_vocab}), one row of next-token log-probabilities "
            f"per prefix"
        )
    if torch.isnan(log_probs).any() or (log_probs == math.inf).any():
        raise ValueError("log_probs_fn returned NaN or +inf log-probabilities")
    return log_probs.shape[1]
