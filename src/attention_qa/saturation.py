"""How saturated a softmax is: the figures behind "why divide by √d_k".

As the scores spread out, softmax tends to a one-hot vector and its Jacobian
``diag(p) − p pᵀ`` tends to zero, so almost no gradient flows back through it
(Vaswani et al., 2017, footnote 4 and section 3.2.1).
"""

import torch

from attention_qa.validation import require_tensor


def softmax_jacobian_norm(p: torch.Tensor) -> torch.Tensor:
    """Frobenius norm of ``diag(p) − p pᵀ`` over the last dim, without building the matrix.

    ‖diag(p) − ppᵀ‖²_F = Σ pᵢ² − 2 Σ pᵢ³ + (Σ pᵢ²)².
    """
    sum_sq = (p * p).sum(dim=-1)
    sum_cube = (p * p * p).sum(dim=-1)
    return (sum_sq - 2 * sum_cube + sum_sq * sum_sq).clamp_min(0).sqrt()


def saturation_stats(scores: torch.Tensor) -> dict[str, torch.Tensor]:
    """Saturation figures of ``softmax(scores)`` over the last dim; leading dims are kept.

    Returns ``max_weight`` (1 for one-hot, 1/m for uniform), ``entropy`` in nats
    (0 for one-hot, log m for uniform) and ``jacobian_norm`` (0 for one-hot).
    """
    require_tensor("scores", scores, min_ndim=1, floating=True)
    p = torch.softmax(scores, dim=-1)  # (..., m)
    return {
        "max_weight": p.amax(dim=-1),
        "entropy": torch.special.entr(p).sum(dim=-1),
        "jacobian_norm": softmax_jacobian_norm(p),
    }
