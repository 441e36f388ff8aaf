"""Pre-training objectives as masks and corruptions (q32).

- A prefix LM (Raffel et al., 2020, T5, section 3.2.1 and Figure 3; Dong et al., 2019,
  UniLM) attends bidirectionally within a prefix and causally after it: its mask lies
  between the causal mask (an empty prefix) and full attention (the whole sequence).
- Span corruption follows T5 (Raffel et al., 2020, section 3.1.4 and Figure 2): each
  dropped span of the input is replaced by one sentinel, and the target lists each
  sentinel followed by the span it replaced, closed by a final sentinel.
- Masked language modelling follows BERT (Devlin et al., 2019, section 3.1, "Task #1"):
  15 % of the positions are chosen for prediction; a chosen position is replaced by
  [MASK] 80 % of the time, by a random token 10 % of the time, and left as it is 10 % of
  the time. The loss is taken at the chosen positions only; the label −100 marks the
  others, the index PyTorch's ``cross_entropy`` ignores by default.
"""

import numbers

import torch

from attention_qa.masks import causal_mask
from attention_qa.validation import (
    require_generator,
    require_nonnegative_int,
    require_positive_int,
    require_tensor,
)

IGNORE_INDEX = -100  # F.cross_entropy's default ignore_index


def prefix_lm_mask(n: int, prefix_len: int) -> torch.Tensor:
    """Bool ``(n, n)``, True = may attend: query i sees key j when j ≤ i or j < prefix_len.

    Every position of the prefix sees the whole prefix; every later position sees the
    prefix and the positions up to itself. prefix_len 0 gives the causal mask, n full
    attention.
    """
    require_positive_int("n", n)
    require_nonnegative_int("prefix_len", prefix_len)
    if prefix_len > n:
        raise ValueError(f"prefix_len must be between 0 and n = {n}, got {prefix_len}")
    in_prefix = torch.arange(n) < prefix_len  # (n,) over keys
    return causal_mask(n) | in_prefix.unsqueeze(0)  # (n, n)


def span_corrupt(tokens: list, spans: list[tuple[int, int]],
                 sentinels=("<X>", "<Y>", "<Z>", "<W>", "<V>")) -> tuple[list, list]:
    """T5's corruption of ``tokens`` (a list) by the ``spans`` (start, end) it drops:
    (inputs, targets). Spans must be in order, not overlap and not touch."""
    if not isinstance(tokens, list):
        raise TypeError(f"tokens must be a list, got {type(tokens).__name__}")
    if len(spans) + 1 > len(sentinels):
        raise ValueError(f"{len(spans)} spans need {len(spans) + 1} sentinels, "
                         f"got {len(sentinels)}")
    previous_end = -1
    for start, end in spans:
        if not (isinstance(start, int) and isinstance(end, int)
                and previous_end < start < end <= len(tokens)):
            raise ValueError(f"spans must be (start, end) with 0 <= start < end <= "
                             f"{len(tokens)}, in order, not touching; got {spans}")
        previous_end = end
    inputs, targets, cursor = [], [], 0
    for sentinel, (start, end) in zip(sentinels, spans, strict=False):
        inputs += tokens[cursor:start] + [sentinel]
        targets += [sentinel] + tokens[start:end]
        cursor = end
    inputs += tokens[cursor:]
    targets.append(sentinels[len(spans)])
    return inputs, targets


OBJECTIVES = ("causal LM", "prefix LM", "masked LM", "span corruption")
EXAMPLE = "Thank you for inviting me to your party last week .".split()
EXAMPLE_SPANS = [(2, 4), (8, 9)]  # T5's Figure 2
EXAMPLE_MASKED = (2, 7)  # the positions the masked-LM example hides
EXAMPLE_PREFIX = 5


def objective_layout(objective: str) -> dict:
    """What one objective does to the example sentence: what the model reads (``inputs``),
    the attention ``mask`` over it (True = may attend), the ``targets`` it predicts and, for
    the objectives that predict at input positions, which positions carry a ``loss``.

    Causal LM predicts each next word at every position; prefix LM only after the prefix;
    masked LM the hidden words at their positions (here with [MASK], BERT's 80 % case);
    span corruption is T5's encoder–decoder: the encoder reads the corrupted input with
    full attention and the decoder writes the targets.
    """
    n = len(EXAMPLE)
    if objective == "causal LM":
        return {"inputs": EXAMPLE, "mask": causal_mask(n), "targets": EXAMPLE[1:] + ["</s>"],
                "loss": torch.ones(n, dtype=torch.bool)}
    if objective == "prefix LM":
        loss = torch.arange(n) >= EXAMPLE_PREFIX - 1  # the prefix itself is given
        return {"inputs": EXAMPLE, "mask": prefix_lm_mask(n, EXAMPLE_PREFIX),
                "targets": EXAMPLE[EXAMPLE_PREFIX:] + ["</s>"], "loss": loss}
    if objective == "masked LM":
        hidden = torch.zeros(n, dtype=torch.bool)
        hidden[list(EXAMPLE_MASKED)] = True
        inputs = ["[MASK]" if h else w for w, h in zip(EXAMPLE, hidden.tolist(), strict=True)]
        return {"inputs": inputs, "mask": torch.ones(n, n, dtype=torch.bool),
                "targets": [EXAMPLE[i] for i in EXAMPLE_MASKED], "loss": hidden}
    if objective == "span corruption":
        inputs, targets = span_corrupt(EXAMPLE, EXAMPLE_SPANS)
        m = len(inputs)
        return {"inputs": inputs, "mask": torch.ones(m, m, dtype=torch.bool),
                "targets": targets, "loss": None}
    raise ValueError(f"objective must be one of {list(OBJECTIVES)}, got {objective!r}")


def mlm_corrupt(tokens: torch.Tensor, mask_id: int, vocab_size: int, rate: float = 0.15,
                generator=None) -> tuple[torch.Tensor, torch.Tensor]:
    """BERT's corruption of an integer tensor of token ids (any shape): ``(inputs, labels)``.

    Each position is chosen with probability ``rate``; a chosen one becomes ``mask_id``
    with probability 0.8, a token drawn uniformly from ``[0, vocab_size)`` with 0.1, and
    stays with 0.1. ``labels`` holds the original token at the chosen positions and −100
    elsewhere. The draws use ``generator`` (None: PyTorch's global random state).
    """
    require_tensor("tokens", tokens)
    if tokens.is_floating_point() or tokens.is_complex() or tokens.dtype == torch.bool:
        raise TypeError(f"tokens must be an integer tensor of token ids, got {tokens.dtype}")
    require_positive_int("vocab_size", vocab_size)
    require_nonnegative_int("mask_id", mask_id)
    if tokens.numel() and (tokens.min() < 0 or tokens.max() >= vocab_size):
        raise ValueError(f"tokens must be ids in [0, vocab_size) = [0, {vocab_size})")
    if (isinstance(rate, bool) or not isinstance(rate, numbers.Real)
            or not 0 <= rate <= 1):
        raise ValueError(f"rate must be a number in [0, 1], got {rate!r}")
    require_generator("generator", generator)
    chosen = torch.rand(tokens.shape, generator=generator) < rate  # (...)
    action = torch.rand(tokens.shape, generator=generator)  # (...): < 0.8 mask, < 0.9 random
    random_ids = torch.randint(0, vocab_size, tokens.shape, generator=generator,
                               dtype=tokens.dtype)  # (...)
    inputs = torch.where(chosen & (action < 0.8), torch.full_like(tokens, mask_id), tokens)
    inputs = torch.where(chosen & (action >= 0.8) & (action < 0.9), random_ids, inputs)
    labels = torch.where(chosen, tokens, torch.full_like(tokens, IGNORE_INDEX))
    return inputs, labels
