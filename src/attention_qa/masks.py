"""Boolean attention masks, True = may attend (PyTorch's ``scaled_dot_product_attention``
convention). ``nn.MultiheadAttention`` uses the opposite one for its boolean masks; see q07.
"""

import torch

from attention_qa.validation import require_positive_int


def causal_mask(n: int, m: int | None = None) -> torch.Tensor:
    """Bool ``(n, m)``: query i may see key j when j ≤ i + (m − n).

    With m = n this is the lower triangle, diagonal included. With m > n (earlier keys
    held in a cache) the queries are the last n positions, so the last query sees all m.
    """
    require_positive_int("n", n)
    m = n if m is None else require_positive_int("m", m)
    i = torch.arange(n).unsqueeze(1)  # (n, 1)
    j = torch.arange(m).unsqueeze(0)  # (1, m)
    return j <= i + (m - n)  # (n, m)


def padding_mask(lengths, max_len: int) -> torch.Tensor:
    """Bool ``(B, max_len)``: True where position < lengths[b], i.e. a real token."""
    require_positive_int("max_len", max_len)
    lengths = torch.as_tensor(lengths)
    if lengths.ndim != 1 or lengths.is_floating_point() or lengths.dtype == torch.bool:
        raise ValueError(
            f"lengths must be a 1-D sequence of integers (one per batch row), got "
            f"dtype {lengths.dtype} with shape {tuple(lengths.shape)}"
        )
    bad = (lengths < 0) | (lengths > max_len)
    if bad.any():
        raise ValueError(
            f"lengths must lie in 0..max_len={max_len}, got {lengths[bad].tolist()}"
        )
    return torch.arange(max_len).unsqueeze(0) < lengths.unsqueeze(1)  # (B, max_len)
