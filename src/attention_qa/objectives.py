"""Pre-training objectives as masks and corruptions (q32).

- A prefix LM (Raffel et al., 2020, T5, section 3.2.1 and Figure 3; Dong et al., 2019,
  UniLM) attends bidirectionally within a prefix and causally after it: its mask lies
  between the causal mask (an empty prefix) and full attention (the whole sequence).
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
