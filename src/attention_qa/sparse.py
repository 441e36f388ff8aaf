"""The strided sparse pattern of the Sparse Transformer, as a boolean mask.

Child et al. (2019), "Generating Long Sequences with Sparse Transformers", section 4.1, split
attention into a local part (the previous ``stride`` positions) and a strided part (every
``stride``-th position before the query), so that any position reaches any other in two
steps while each query sees about ``2 · n / stride`` keys instead of n. Here both parts are
in one mask, True = may attend (the convention of ``attention_qa.masks``); with
``causal=False`` the pattern is mirrored so that queries also see later keys.
"""

import torch

from attention_qa.validation import require_positive_int


def strided_mask(n: int, stride: int, causal: bool = False) -> torch.Tensor:
    """Bool ``(n, n)``: query i sees key j when ``|i − j| < stride`` or ``stride`` divides i − j.

    With ``causal=True`` only keys ``j ≤ i`` are kept. ``stride=1`` allows every key.
    """
    require_positive_int("n", n)
    require_positive_int("stride", stride)
    if not isinstance(causal, bool):
        raise ValueError(f"causal must be True or False, got {causal!r}")
    i = torch.arange(n).unsqueeze(1)  # (n, 1)
    j = torch.arange(n).unsqueeze(0)  # (1, n)
    offset = i - j  # (n, n), positive when the key lies before the query
    allowed = (offset.abs() < stride) | (offset % stride == 0)  # (n, n)
    if causal:
        allowed = allowed & (offset >= 0)
    return allowed
