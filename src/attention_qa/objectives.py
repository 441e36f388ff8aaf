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
- BERT's input (Devlin et al., 2019, §3, Figure 2): [CLS] a [SEP] b [SEP] with segment ids
  0 then 1 (``bert_inputs``, q41).
- BART's five noising functions (Lewis et al., 2020, §2.2, Figure 2): token masking, token
  deletion, text infilling (Poisson(3) spans, one mask each), sentence permutation and
  document rotation (``bart_noise``, q41).
"""

import math
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


# --- q41: BERT's input and BART's noising ---------------------------------------------------


def _token_ids(name: str, tokens) -> list[int]:
    """A 1-D sequence of token ids (a list of ints or a 1-D integer tensor) as a list."""
    if isinstance(tokens, torch.Tensor):
        if tokens.ndim != 1 or tokens.is_floating_point() or tokens.is_complex() \
                or tokens.dtype == torch.bool:
            raise ValueError(f"{name} must be a 1-D integer tensor of token ids, got shape "
                             f"{tuple(tokens.shape)} and dtype {tokens.dtype}")
        tokens = tokens.tolist()
    if not isinstance(tokens, (list, tuple)) or not all(
            isinstance(t, numbers.Integral) and not isinstance(t, bool) and t >= 0
            for t in tokens):
        raise ValueError(f"{name} must be a list of token ids (ints ≥ 0), got {tokens!r}")
    return [int(t) for t in tokens]


def bert_inputs(tokens_a, tokens_b=None, *, cls_id: int,
                sep_id: int) -> tuple[torch.Tensor, torch.Tensor]:
    """BERT's input for one sentence or a pair (Devlin et al., 2019, §3, "Input/Output
    Representations", Figure 2): ``(input_ids, token_type_ids)``, both int64 of length
    len(a) + 2 (one sentence) or len(a) + len(b) + 3 (a pair).

    ``[CLS] a [SEP]``, then for a pair ``b [SEP]``; the segment (token type) is 0 up to and
    including the first ``[SEP]`` and 1 after it. The model adds a token, a segment and a
    position embedding at every position.
    """
    a = _token_ids("tokens_a", tokens_a)
    require_nonnegative_int("cls_id", cls_id)
    require_nonnegative_int("sep_id", sep_id)
    ids = [cls_id, *a, sep_id]
    types = [0] * len(ids)
    if tokens_b is not None:
        b = _token_ids("tokens_b", tokens_b)
        ids += [*b, sep_id]
        types += [1] * (len(b) + 1)
    return torch.tensor(ids, dtype=torch.long), torch.tensor(types, dtype=torch.long)


BART_NOISES = ("token_masking", "token_deletion", "text_infilling", "sentence_permutation",
               "document_rotation")


def bart_noise(tokens, kind: str, *, mask_id: int, generator=None, rate: float = 0.3,
               poisson_lambda: float = 3.0, sentence_end_id=None) -> torch.Tensor:
    """One of BART's five noising functions (Lewis et al., 2020, §2.2 and Figure 2) applied
    to a document of token ids (a list or a 1-D integer tensor): the corrupted input, int64.
    The decoder's target is always the original document.

    - ``token_masking``: ⌈rate · n⌉ tokens, drawn uniformly, become ``mask_id``;
    - ``token_deletion``: ⌈rate · n⌉ tokens, drawn uniformly, are deleted;
    - ``text_infilling``: span lengths are drawn from Poisson(``poisson_lambda``) until they
      cover ⌈rate · n⌉ tokens (the last one cut to fit); each span is replaced by a single
      ``mask_id``, so a 0-length span inserts a mask; the spans do not overlap;
    - ``sentence_permutation``: the sentences (each ends at ``sentence_end_id``; a last one
      without it counts too) are shuffled;
    - ``document_rotation``: a token drawn uniformly becomes the start, ``torch.roll``-style.

    The draws use ``generator`` (None: PyTorch's global random state).
    """
    ids = _token_ids("tokens", tokens)
    if kind not in BART_NOISES:
        raise ValueError(f"kind must be one of {list(BART_NOISES)}, got {kind!r}")
    require_nonnegative_int("mask_id", mask_id)
    if (isinstance(rate, bool) or not isinstance(rate, numbers.Real)
            or not 0 <= rate <= 1):
        raise ValueError(f"rate must be a number in [0, 1], got {rate!r}")
    if (isinstance(poisson_lambda, bool) or not isinstance(poisson_lambda, numbers.Real)
            or not poisson_lambda > 0):
        raise ValueError(f"poisson_lambda must be a number > 0, got {poisson_lambda!r}")
    require_generator("generator", generator)
    n = len(ids)
    if kind == "sentence_permutation":
        if sentence_end_id is None:
            raise ValueError("sentence_permutation needs sentence_end_id, the id that ends "
                             "a sentence")
        require_nonnegative_int("sentence_end_id", sentence_end_id)
        sentences, current = [], []
        for t in ids:
            current.append(t)
            if t == sentence_end_id:
                sentences.append(current)
                current = []
        if current:
            sentences.append(current)
        order = torch.randperm(len(sentences), generator=generator).tolist()
        return torch.tensor([t for i in order for t in sentences[i]], dtype=torch.long)
    if n == 0:
        return torch.tensor(ids, dtype=torch.long)
    if kind == "document_rotation":
        start = int(torch.randint(0, n, (1,), generator=generator))
        return torch.tensor(ids[start:] + ids[:start], dtype=torch.long)
    num_noised = math.ceil(rate * n)
    if kind in ("token_masking", "token_deletion"):
        chosen = set(torch.randperm(n, generator=generator)[:num_noised].tolist())
        if kind == "token_masking":
            out = [mask_id if i in chosen else t for i, t in enumerate(ids)]
        else:
            out = [t for i, t in enumerate(ids) if i not in chosen]
        return torch.tensor(out, dtype=torch.long)
    # text infilling: span lengths until they cover num_noised tokens
    if num_noised == 0:
        return torch.tensor(ids, dtype=torch.long)
    lengths: list[int] = []
    while sum(lengths) < num_noised:  # a 0-length span is kept: it inserts a mask
        length = int(torch.poisson(torch.tensor([float(poisson_lambda)]), generator=generator))
        lengths.append(min(length, num_noised - sum(lengths)))
    kept = n - sum(lengths)
    # each span goes before one of the kept tokens (or at the end), in order
    gaps = torch.randint(0, kept + 1, (len(lengths),), generator=generator).sort().values
    order = torch.randperm(len(lengths), generator=generator).tolist()
    spans = [lengths[i] for i in order]
    out, cursor, kept_seen = [], 0, 0
    for gap, length in zip(gaps.tolist(), spans, strict=True):
        while kept_seen < gap:  # copy kept tokens up to this gap
            out.append(ids[cursor])
            cursor += 1
            kept_seen += 1
        out.append(mask_id)
        cursor += length  # the span's tokens are dropped
    out += ids[cursor:]
    return torch.tensor(out, dtype=torch.long)


def glm_blank_infilling(tokens, spans, *, mask_id: int, start_id: int, end_id: int,
                        order=None) -> dict:
    """GLM's autoregressive blank infilling (Du et al., 2022, §2.1 and Figure 2): one input.

    Part A is ``tokens`` with each span (start, end) replaced by one ``mask_id``; part B
    holds the spans in ``order`` (a permutation of ``range(len(spans))``, default as given),
    each as ``start_id`` followed by its tokens. The model reads A + B and predicts, at each
    part-B position, the next token of its span, then ``end_id`` (``targets``). §2.2's 2-D
    positions: ``position_ids`` counts part A from 0 and gives every part-B token the
    position of its span's mask; ``block_position_ids`` is 0 in part A and 1, 2, … within
    each span in part B. ``mask`` (bool (N, N), True = may attend): part A sees all of
    part A; part B sees part A and, causally, part B up to itself.

    Returns a dict of ``input_ids``, ``targets``, ``position_ids`` and ``block_position_ids``
    (1-D int64 tensors of length N = len(A) + len(B)), ``targets`` holding ``IGNORE_INDEX``
    over part A, ``mask``, and ``part_a_length``.
    """
    tokens = _token_ids("tokens", tokens)
    for name, value in (("mask_id", mask_id), ("start_id", start_id), ("end_id", end_id)):
        require_nonnegative_int(name, value)
    spans = _glm_spans(spans, len(tokens))
    if order is None:
        order = list(range(len(spans)))
    order = list(order) if isinstance(order, (list, tuple, range)) else order
    if sorted(order) != list(range(len(spans))) or not all(
            isinstance(i, numbers.Integral) and not isinstance(i, bool) for i in order):
        raise ValueError(f"order must be a permutation of range({len(spans)}), got {order!r}")

    part_a, mask_position, cursor = [], [], 0
    for start, end in spans:
        part_a += tokens[cursor:start]
        mask_position.append(len(part_a))  # where this span's [MASK] sits in part A
        part_a.append(mask_id)
        cursor = end
    part_a += tokens[cursor:]
    n_a = len(part_a)

    input_ids, targets = list(part_a), [IGNORE_INDEX] * n_a
    position_ids, block_ids = list(range(n_a)), [0] * n_a
    for i in order:
        start, end = spans[i]
        span = tokens[start:end]
        input_ids += [start_id] + span
        targets += span + [end_id]
        position_ids += [mask_position[i]] * (len(span) + 1)
        block_ids += list(range(1, len(span) + 2))

    total = len(input_ids)
    mask = causal_mask(total)  # (N, N): part B causally over everything before it
    mask[:n_a, :n_a] = True  # part A sees all of part A (and nothing of part B)
    as_tensor = lambda xs: torch.tensor(xs, dtype=torch.int64)  # noqa: E731
    return {"input_ids": as_tensor(input_ids), "targets": as_tensor(targets),
            "position_ids": as_tensor(position_ids), "block_position_ids": as_tensor(block_ids),
            "mask": mask, "part_a_length": n_a}


def _glm_spans(spans, n: int) -> list[tuple[int, int]]:
    """Spans as (start, end) pairs of ints, end exclusive, non-empty, increasing, inside n."""
    if not isinstance(spans, (list, tuple)) or not spans:
        raise ValueError(f"spans must be a non-empty list of (start, end) pairs, got {spans!r}")
    checked, previous_end = [], 0
    for span in spans:
        if (not isinstance(span, (list, tuple)) or len(span) != 2 or not all(
                isinstance(x, numbers.Integral) and not isinstance(x, bool) for x in span)):
            raise ValueError(f"each span must be a (start, end) pair of ints, got {span!r}")
        start, end = int(span[0]), int(span[1])
        if not previous_end <= start < end <= n:
            raise ValueError(
                f"spans must be non-empty, increasing, not overlapping and within the "
                f"{n} tokens (end exclusive), got {span!r} after an end of {previous_end}")
        checked.append((start, end))
        previous_end = end
    return checked
