"""Checkers for masks and causality: masks (q07), shift-right (q08), greedy decoding (q09),
StreamingLLM's sink-plus-window mask (q30)."""

from __future__ import annotations

from typing import Callable

import torch

from attention_qa.checks.common import call_learner, require_shape
from attention_qa.masks import padding_mask
from attention_qa.objectives import prefix_lm_mask

# --- check_attention_mask (q07) -------------------------------------------------------------


def mask_variant(lengths, n: int, causal: bool, bug: str | None = None) -> torch.Tensor:
    """The (B, n, n) mask, True = may attend, with one known slip switched on."""
    keys = padding_mask(lengths, n)  # (B, n)
    if bug == "padding_on_queries":
        allowed = keys.unsqueeze(2).expand(-1, n, n)  # hides rows instead of columns
    elif bug == "padding_ignored":
        allowed = torch.ones(len(lengths), n, n, dtype=torch.bool)
    else:
        allowed = keys.unsqueeze(1).expand(-1, n, n)  # (B, n, n): column j hidden past length
    if causal and bug != "causal_ignored":
        diagonal = -1 if bug == "diagonal_blocked" else 0
        allowed = allowed & torch.ones(n, n, dtype=torch.bool).tril(diagonal)
    return ~allowed if bug == "inverted" else allowed


MASK_SLIPS = {
    "inverted": (
        "the mask is inverted: True must mean may attend (the convention of "
        "F.scaled_dot_product_attention), so real tokens and the past are True"
    ),
    "padding_on_queries": (
        "the padding hides queries, not keys: mask[b, i, j] must be False when key j is "
        "padding (j ≥ lengths[b]), whatever the query i"
    ),
    "padding_ignored": "the padding is ignored: keys at j ≥ lengths[b] must be False",
    "causal_ignored": "the causal part is missing: with causal=True, key j > i must be False",
    "diagonal_blocked": (
        "the diagonal is blocked: a position may attend to itself, so the causal part is "
        "j ≤ i (tril with diagonal=0), not j < i"
    ),
}


def _compare_masks(got, expected: torch.Tensor, case: str, slips: dict, index: str):
    """Raise the learner's message when ``got`` is not ``expected``: a wrong shape or dtype,
    a known slip (``slips`` maps each slip's message to the mask it makes), or else the
    first wrong entry."""
    got = require_shape(got, expected.shape, case, "the mask")
    if got.dtype != torch.bool:
        raise AssertionError(
            f"on {case}, the mask has dtype {got.dtype}; return a boolean tensor "
            f"(True = may attend)"
        )
    if torch.equal(got, expected):
        return
    for message, slipped in slips.items():
        if torch.equal(got, slipped):
            raise AssertionError(f"on {case}, {message}")
    wrong = (got != expected).nonzero()[0].tolist()
    raise AssertionError(
        f"on {case}, the mask is wrong at [{index}] = {wrong}: it should be "
        f"{bool(expected[tuple(wrong)])}"
    )


def check_attention_mask(fn: Callable) -> None:
    """Check ``fn(lengths, n, causal) -> (B, n, n)`` boolean, True = may attend.

    Query i of sequence b may see key j when j < lengths[b] and, if causal, j ≤ i.
    """
    cases = [
        ("lengths=[3, 5], n=5, causal=False", [3, 5], 5, False),
        ("lengths=[3, 5], n=5, causal=True", [3, 5], 5, True),
        ("lengths=[2], n=4, causal=True", [2], 4, True),
        ("lengths=[6, 1, 4], n=6, causal=False", [6, 1, 4], 6, False),
    ]
    for case, lengths, n, causal in cases:
        expected = mask_variant(lengths, n, causal)
        got = call_learner(fn, case, list(lengths), n, causal)
        _compare_masks(
            got,
            expected,
            case,
            {msg: mask_variant(lengths, n, causal, bug) for bug, msg in MASK_SLIPS.items()},
            "b, i, j",
        )


# --- check_shift_right (q08) ----------------------------------------------------------------


def check_shift_right(fn: Callable) -> None:
    """Check ``fn(targets, bos) -> decoder inputs``: (B, T) → (B, T), ``[bos, y_0 … y_{T-2}]``."""
    cases = [
        ("targets [[5, 6, 7, 8]], bos=1", torch.tensor([[5, 6, 7, 8]]), 1),
        ("targets [[4, 9, 2], [3, 3, 7]], bos=0", torch.tensor([[4, 9, 2], [3, 3, 7]]), 0),
        ("targets [[6]], bos=2", torch.tensor([[6]]), 2),
    ]
    for case, targets, bos in cases:
        B, T = targets.shape
        start = torch.full((B, 1), bos, dtype=targets.dtype)
        expected = torch.cat([start, targets[:, :-1]], dim=1)  # (B, T)
        got = call_learner(fn, case, targets.clone(), bos)
        if isinstance(got, torch.Tensor) and got.ndim == 2 and got.shape[0] == B:
            if got.shape[1] == T + 1 and torch.equal(got[:, :-1], expected):
                raise AssertionError(
                    f"on {case}, the last target is kept: drop it, so the inputs have T={T} "
                    f"tokens like the targets (y_{T - 1} is only ever predicted, never read)"
                )
            if got.shape[1] == T - 1 and torch.equal(got, targets[:, :-1]):
                raise AssertionError(
                    f"on {case}, the start token bos is missing: the inputs begin with bos"
                )
        got = require_shape(got, expected.shape, case, "the decoder inputs")
        if torch.equal(got, expected):
            continue
        mistakes = [
            (
                targets.roll(1, dims=1),
                "the last target wraps round to the front (roll): the first input is bos, so "
                "position 0 cannot see the answer",
            ),
            (
                torch.cat([targets[:, 1:], start], dim=1),
                "the targets are shifted left, not right: input t must be y_{t-1}, with bos first",
            ),
            (targets, "the targets are not shifted: each position would read its own answer"),
        ]
        for wrong, message in mistakes:
            if torch.equal(got, wrong):
                raise AssertionError(f"on {case}, {message}")
        raise AssertionError(
            f"on {case}, got {got.tolist()} but the decoder inputs are {expected.tolist()}"
        )


# --- check_greedy_decode (q09) --------------------------------------------------------------


def check_greedy_decode(fn: Callable) -> None:
    """Check ``fn(model, tokens, max_new_tokens) -> (B, T + max_new_tokens)`` greedy tokens.

    Compared with ``TinyTransformerLM.generate`` on a seeded tiny model; the global random
    state is left as it was.
    """
    from attention_qa.models import TinyTransformerLM

    with torch.random.fork_rng(devices=[]), torch.no_grad():
        torch.manual_seed(11)
        model = TinyTransformerLM(
            vocab_size=13, d_model=16, num_heads=2, num_layers=2, max_len=16
        ).eval()
        g = torch.Generator().manual_seed(12)
        cases = [
            ("a prompt of shape (1, 3), 5 new tokens", torch.randint(13, (1, 3), generator=g), 5),
            ("a prompt of shape (2, 4), 6 new tokens", torch.randint(13, (2, 4), generator=g), 6),
            ("a prompt of shape (1, 1), 1 new token", torch.randint(13, (1, 1), generator=g), 1),
        ]
        for case, prompt, steps in cases:
            expected = model.generate(prompt, steps, use_cache=False)
            B, T = prompt.shape
            got = call_learner(fn, case, model, prompt.clone(), steps)
            if isinstance(got, torch.Tensor) and tuple(got.shape) == (B, steps):
                raise AssertionError(
                    f"on {case}, only the new tokens came back: return the prompt followed "
                    f"by them, shape {(B, T + steps)}"
                )
            if (
                isinstance(got, torch.Tensor)
                and got.ndim == 2
                and got.shape[0] == B
                and (got.shape[1] == T + steps - 1 and torch.equal(got, expected[:, :-1]))
            ):
                raise AssertionError(f"on {case}, one step is missing: append {steps} tokens")
            got = require_shape(got, expected.shape, case, "the tokens")
            if torch.equal(got, expected):
                continue
            if not torch.equal(got[:, :T], prompt):
                raise AssertionError(f"on {case}, the prompt was changed: keep it as it is")
            first = prompt
            for _ in range(steps):
                nxt = model(first)[:, 0].argmax(-1, keepdim=True)  # (B, 1)
                first = torch.cat([first, nxt], dim=1)
            if torch.equal(got, first):
                raise AssertionError(
                    f"on {case}, the next token is read from position 0: the prediction "
                    f"for the next token is at the last position, logits[:, -1]"
                )
            wrong = (got != expected).nonzero()[0].tolist()
            raise AssertionError(
                f"on {case}, token {wrong[1]} of row {wrong[0]} is {int(got[tuple(wrong)])} but "
                f"greedy decoding gives {int(expected[tuple(wrong)])}: take the argmax of "
                f"the last position's logits at every step"
            )


# --- check_sink_window_mask (q30) -----------------------------------------------------------


def sink_window_variant(n: int, window: int, sinks: int, bug: str | None = None):
    """The (n, n) StreamingLLM mask, True = may attend, with one known slip switched on."""
    i = torch.arange(n).unsqueeze(1)  # (n, 1)
    j = torch.arange(n).unsqueeze(0)  # (1, n)
    last = {"window_plus_one": window + 1, "window_minus_one": window - 1,
            "sinks_inside_window": window - sinks}.get(bug, window)
    recent = (i - j >= 0) & (i - j < last)  # (n, n)
    if bug == "two_sided":
        recent = (i - j).abs() < window
    sink = j < sinks  # (1, n)
    if bug != "sinks_see_the_future":
        sink = sink & (j <= i)  # (n, n)
    if bug == "no_sinks":
        sink = torch.zeros(n, n, dtype=torch.bool)
    mask = recent | sink
    return ~mask if bug == "inverted" else mask


SINK_WINDOW_SLIPS = {
    "inverted": "the mask is inverted: True must mean may attend (kept in the cache)",
    "window_plus_one": (
        "the window keeps window + 1 recent keys: it counts the query's own key, so query i "
        "keeps keys i − window + 1 … i (i − j < window)"
    ),
    "window_minus_one": (
        "the window keeps window − 1 recent keys: the query's own key is one of the window, "
        "so query i keeps keys i − window + 1 … i, i itself included"
    ),
    "sinks_inside_window": (
        "the sinks are counted inside the window: the cache holds sinks + window keys, the "
        "first `sinks` plus the last `window`"
    ),
    "two_sided": (
        "the window looks ahead: a query may not see later keys (j ≤ i); only the last "
        "window keys up to the query itself are kept"
    ),
    "sinks_see_the_future": (
        "an early query sees a later sink key: the sinks are keys 0 … sinks − 1 but only "
        "those with j ≤ i, the mask stays causal"
    ),
    "no_sinks": "the sink keys are missing: key j < sinks must be kept (when j ≤ i)",
}


def check_sink_window_mask(fn: Callable) -> None:
    """Check ``fn(n, window, sinks) -> (n, n)`` boolean, True = may attend.

    Query i keeps key j when j ≤ i and (j < sinks or i − j < window): the first ``sinks``
    keys and the last ``window`` keys, its own included (StreamingLLM).
    """
    cases = [
        ("n=8, window=3, sinks=2", 8, 3, 2),
        ("n=10, window=4, sinks=1", 10, 4, 1),
        ("n=7, window=2, sinks=0", 7, 2, 0),
        ("n=5, window=6, sinks=2", 5, 6, 2),
    ]
    for case, n, window, sinks in cases:
        expected = sink_window_variant(n, window, sinks)
        got = call_learner(fn, case, n, window, sinks)
        _compare_masks(
            got,
            expected,
            case,
            {
                msg: sink_window_variant(n, window, sinks, bug)
                for bug, msg in SINK_WINDOW_SLIPS.items()
            },
            "i, j",
        )


PREFIX_SLIPS = {
    "inverted": "True marks the blocked keys; the book's masks use True = may attend",
    "causal_only": "the prefix is ignored: inside the prefix every position sees the whole prefix",
    "prefix_sees_all": (
        "a prefix position sees keys after the prefix; only the prefix is bidirectional, "
        "nothing may see a later position outside it"
    ),
    "off_by_one": (
        "the prefix is one position too long: positions 0 … prefix_len − 1 form the prefix"
    ),
    "full": "every position sees every position; after the prefix attention is causal",
}


def prefix_mask_variant(n: int, prefix_len: int, bug: str | None = None) -> torch.Tensor:
    i = torch.arange(n).unsqueeze(1)  # (n, 1)
    j = torch.arange(n).unsqueeze(0)  # (1, n)
    if bug == "causal_only":
        return j <= i
    if bug == "prefix_sees_all":
        return (j <= i) | (i < prefix_len)
    if bug == "off_by_one":
        return (j <= i) | (j <= prefix_len)
    if bug == "full":
        return torch.ones(n, n, dtype=torch.bool)
    mask = (j <= i) | (j < prefix_len)
    return ~mask if bug == "inverted" else mask


def check_prefix_lm_mask(fn: Callable) -> None:
    """Check ``fn(n, prefix_len) -> (n, n)`` mask, True = may attend: query i sees key j
    when j ≤ i or j < prefix_len. Bool or 0/1 tensors of any dtype are accepted."""
    for n, prefix_len in ((6, 3), (5, 0), (4, 4), (8, 1), (7, 5)):
        case = f"n = {n}, prefix_len = {prefix_len}"
        got = require_shape(call_learner(fn, case, n, prefix_len), (n, n), case, "the mask")
        if not ((got == 0) | (got == 1)).all():
            raise AssertionError(f"on {case}, the mask should hold only True/False (or 1/0)")
        got = got.bool()
        if torch.equal(got, prefix_lm_mask(n, prefix_len)):
            continue
        for bug, message in PREFIX_SLIPS.items():
            if torch.equal(got, prefix_mask_variant(n, prefix_len, bug)):
                raise AssertionError(f"on {case}, {message}")
        raise AssertionError(f"on {case}, the mask differs from j ≤ i or j < prefix_len")
