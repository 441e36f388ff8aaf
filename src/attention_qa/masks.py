"""Boolean attention masks, True = may attend (PyTorch's ``scaled_dot_product_attention``
convention). ``nn.MultiheadAttention`` uses the opposite one for its boolean masks; see q07.

The sparse patterns follow Longformer (Beltagy et al., 2020): a sliding window around each
query, plus a few global positions that see, and are seen by, every position. BigBird
(Zaheer et al., 2020) adds a few random keys to every other row. StreamingLLM (Xiao et al.,
2024) keeps a causal window of recent keys plus the first few keys, the attention sinks.
"""

import torch

from attention_qa.validation import (
    require_generator,
    require_nonnegative_int,
    require_positive_int,
    require_tensor,
    shape_str,
)


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


def combine_masks(*masks: torch.Tensor) -> torch.Tensor:
    """The logical AND of boolean masks: a key is allowed only where every mask allows it.

    The masks broadcast against each other, so a causal ``(n, m)`` mask combines with a
    padding mask reshaped to ``(B, 1, 1, m)`` into a ``(B, 1, n, m)`` one. Combine the
    boolean masks first and convert once with :func:`to_additive`: adding two additive masks
    would add two ``finfo.min`` values and overflow to ``-inf``.
    """
    if not masks:
        raise ValueError("combine_masks needs at least one mask")
    for idx, mask in enumerate(masks):
        require_tensor(f"masks[{idx}]", mask)
        if mask.dtype != torch.bool:
            raise TypeError(
                f"masks[{idx}] must be a boolean tensor (True = may attend), got dtype {mask.dtype}"
            )
    try:
        shape = torch.broadcast_shapes(*(mask.shape for mask in masks))
    except RuntimeError:
        shapes = ", ".join(shape_str(mask.shape) for mask in masks)
        raise ValueError(
            f"the masks have shapes {shapes}, which do not broadcast together"
        ) from None
    combined = torch.ones(shape, dtype=torch.bool, device=masks[0].device)
    for mask in masks:
        combined = combined & mask
    return combined


def to_additive(mask: torch.Tensor, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """The float form of a boolean mask: 0 where allowed (True), ``finfo(dtype).min`` where not.

    Adding it to the scores before the softmax blocks the same keys as the boolean mask.
    The most negative finite value is used rather than ``-inf`` so that a fully masked row
    stays finite (uniform) instead of turning into NaN, and rather than ``-1e9`` because that
    overflows float16.
    """
    require_tensor("mask", mask)
    if mask.dtype != torch.bool:
        raise TypeError(
            f"mask must be a boolean tensor (True = may attend), got dtype {mask.dtype}"
        )
    if not isinstance(dtype, torch.dtype) or not dtype.is_floating_point:
        raise TypeError(f"dtype must be a floating-point torch.dtype, got {dtype!r}")
    additive = torch.zeros(mask.shape, dtype=dtype, device=mask.device)
    return additive.masked_fill(~mask, torch.finfo(dtype).min)


def _require_window(window) -> int:
    if isinstance(window, bool) or not isinstance(window, int) or window < 0:
        raise ValueError(f"window must be a non-negative integer, got {window!r}")
    return window


def sliding_window_mask(n: int, window: int, causal: bool = False) -> torch.Tensor:
    """Bool ``(n, n)``: query i may see key j when ``|i − j| ≤ window``.

    With ``causal=True`` only the ``window`` keys before i and i itself: ``0 ≤ i − j ≤ window``,
    the pattern of Mistral 7B (Jiang et al., 2023). The two-sided band is the local part of
    Longformer (Beltagy et al., 2020). ``window=0`` lets each query see only itself.
    """
    require_positive_int("n", n)
    _require_window(window)
    if not isinstance(causal, bool):
        raise ValueError(f"causal must be True or False, got {causal!r}")
    i = torch.arange(n).unsqueeze(1)  # (n, 1)
    j = torch.arange(n).unsqueeze(0)  # (1, n)
    offset = i - j  # (n, n), positive when the key lies before the query
    if causal:
        return (offset >= 0) & (offset <= window)  # (n, n)
    return offset.abs() <= window  # (n, n)


def sink_window_mask(n: int, window: int, sinks: int) -> torch.Tensor:
    """Bool ``(n, n)``: query i may see the first ``sinks`` keys and its last ``window`` keys.

    Follows Xiao et al. (2024), "Efficient Streaming Language Models with Attention Sinks"
    (StreamingLLM): the cache keeps a few initial tokens, the attention sinks, plus a rolling
    window of the most recent tokens, the query's own key included. Causal throughout: key j
    is kept when ``j ≤ i`` and (``j < sinks`` or ``i − j < window``), so every query sees at
    most ``sinks + window`` keys however long the sequence. ``window`` counts keys, the
    query's own included: ``sliding_window_mask(n, window − 1, causal=True)`` is this mask
    with ``sinks=0``.
    """
    require_positive_int("n", n)
    require_positive_int("window", window)  # window 0 would leave later queries no key
    require_nonnegative_int("sinks", sinks)
    i = torch.arange(n).unsqueeze(1)  # (n, 1)
    j = torch.arange(n).unsqueeze(0)  # (1, n)
    recent = (i - j >= 0) & (i - j < window)  # (n, n): the last `window` keys up to i
    sink = (j < sinks) & (j <= i)  # (n, n): the first `sinks` keys, never the future
    return recent | sink  # (n, n)


def global_local_mask(n: int, window: int, global_tokens) -> torch.Tensor:
    """Bool ``(n, n)``: a two-sided sliding window plus global positions, as in Longformer.

    Follows Beltagy et al. (2020), "Longformer: The Long-Document Transformer", section 3.1:
    a global position (such as ``[CLS]``) attends to every position and every position
    attends to it, so information can cross the sequence in two steps.
    ``global_tokens`` lists positions in ``0..n-1``; an empty list gives the plain window.
    """
    require_positive_int("n", n)
    _require_window(window)
    is_global = _global_rows(n, global_tokens)  # (n,)
    # A global query sees every key (its row) and every query sees a global key (its column).
    return (
        sliding_window_mask(n, window) | is_global.unsqueeze(1) | is_global.unsqueeze(0)
    )  # (n, n)


def bigbird_mask(n: int, window: int, global_tokens, num_random: int,
                 generator=None) -> torch.Tensor:
    """Bool ``(n, n)``: Longformer's window and global positions plus random keys, as in BigBird.

    Follows Zaheer et al. (2020), "Big Bird: Transformers for Longer Sequences", section 2:
    window, global and random attention. Starts from ``global_local_mask(n, window,
    global_tokens)``; then every non-global query row gets ``num_random`` further keys drawn
    uniformly, without replacement, from the keys it does not see yet (all of them if fewer
    remain). Global rows already see every key. BigBird draws blocks of keys; this draws
    single keys, the same pattern at block size 1. ``generator`` (a ``torch.Generator``, or
    None for PyTorch's global random state) makes the draw reproducible.
    """
    mask = global_local_mask(n, window, global_tokens)  # (n, n)
    require_nonnegative_int("num_random", num_random)
    require_generator("generator", generator)
    if num_random == 0:
        return mask
    # A random priority for every (query, key) pair; the keys a row already sees go last, so
    # the num_random smallest priorities of a row are a uniform sample of its unseen keys.
    priority = torch.rand(n, n, generator=generator)  # (n, n)
    priority = priority.masked_fill(mask, float("inf"))  # (n, n)
    picked = priority.topk(min(num_random, n), dim=-1, largest=False)  # (n, r) each
    extra = torch.zeros(n, n, dtype=torch.bool)
    # Only the finite priorities are unseen keys: a row with fewer left takes all of them.
    extra.scatter_(1, picked.indices, picked.values.isfinite())  # (n, n)
    return mask | extra  # (n, n); global rows were all True already


def _global_rows(n: int, global_tokens) -> torch.Tensor:
    """Bool (n,): True at the positions listed in global_tokens, after checking them."""
    positions = torch.as_tensor(global_tokens)
    if positions.numel() == 0:
        # torch.as_tensor([]) is float32; an empty list is still a valid list of positions.
        positions = positions.reshape(0).long()
    if positions.ndim != 1 or positions.is_floating_point() or positions.dtype == torch.bool:
        raise ValueError(
            f"global_tokens must be a 1-D sequence of integer positions, got "
            f"dtype {positions.dtype} with shape {tuple(positions.shape)}"
        )
    bad = (positions < 0) | (positions >= n)
    if bad.any():
        raise ValueError(f"global_tokens must lie in 0..n-1={n - 1}, got {positions[bad].tolist()}")
    is_global = torch.zeros(n, dtype=torch.bool)
    is_global[positions] = True  # (n,)
    return is_global
