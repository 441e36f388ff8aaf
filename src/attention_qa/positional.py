"""Sinusoidal positional encoding.

Follows Vaswani et al. (2017), "Attention Is All You Need", section 3.5:
``PE[pos, 2i] = sin(pos / 10000^(2i/d_model))`` and
``PE[pos, 2i+1] = cos(pos / 10000^(2i/d_model))``. Each pair of columns is one
frequency, from one cycle per 2π positions down to one per 10000·2π.
"""

import torch

from attention_qa.validation import require_positive_int


def sinusoidal_encoding(num_positions: int, d_model: int) -> torch.Tensor:
    """Return the (num_positions, d_model) encoding for positions 0 … num_positions − 1.

    d_model must be even, because every frequency fills a sine column and a cosine column.
    The result has the default float dtype (float32 unless changed).
    """
    require_positive_int("num_positions", num_positions)
    require_positive_int("d_model", d_model)
    if d_model % 2:
        raise ValueError(
            f"d_model must be even (one sine and one cosine column per frequency), "
            f"got {d_model}"
        )
    # float64 for the angles: at large positions float32 loses the low digits of
    # pos / 10000^(2i/d_model), and sin/cos of a rounded angle is visibly wrong.
    pos = torch.arange(num_positions, dtype=torch.float64).unsqueeze(1)  # (num_positions, 1)
    two_i = torch.arange(0, d_model, 2, dtype=torch.float64)  # (d_model/2,)
    angles = pos / 10000.0 ** (two_i / d_model)  # (num_positions, d_model/2)
    pe = torch.empty(num_positions, d_model, dtype=torch.float64)  # (num_positions, d_model)
    pe[:, 0::2] = torch.sin(angles)
    pe[:, 1::2] = torch.cos(angles)
    return pe.to(torch.get_default_dtype())


def similarity_to(position: int, d_model: int, num_positions: int = 128):
    """Cosine similarity of PE(position) with PE(q) for q = 0 … num_positions − 1."""
    pe = sinusoidal_encoding(num_positions, d_model)  # (num_positions, d_model)
    return pe @ pe[position] / (d_model / 2)  # (num_positions,)
