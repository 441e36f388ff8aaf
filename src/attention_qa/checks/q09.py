"""The checker of q09's exercise: ``check_greedy_decode``."""

from __future__ import annotations

from typing import Callable

import torch

from attention_qa.checks.common import (
    as_answer,
    call_learner,
    require_integer_ids,
    require_shape,
)


def greedy_variant(model, prompt, steps: int, bug: str):
    """Greedy tokens with one known slip: ``position_0`` reads the next token's logits at
    position 0, ``repeats_first`` appends the prompt's first prediction at every step."""
    if bug == "repeats_first":
        once = model(prompt)[:, -1].argmax(-1, keepdim=True)  # (B, 1)
        return torch.cat([prompt, once.expand(prompt.shape[0], steps)], dim=1)
    tokens = prompt
    for _ in range(steps):
        nxt = model(tokens)[:, 0].argmax(-1, keepdim=True)  # (B, 1)
        tokens = torch.cat([tokens, nxt], dim=1)
    return tokens


GREEDY_SLIPS = {
    "position_0": (
        "the next token is read from position 0: the prediction for the next token is at "
        "the last position, logits[:, -1]"
    ),
    "repeats_first": (
        "every new token is the prompt's first prediction: append each new token to the "
        "sequence and run the model on the longer sequence to predict the next one"
    ),
}


def check_greedy_decode(fn: Callable) -> None:
    """Check ``fn(model, tokens, max_new_tokens) -> (B, T + max_new_tokens)`` greedy tokens.

    Compared with ``TinyTransformerLM.generate`` on a seeded tiny model, on whose (2, 4)
    prompt the two rows' greedy continuations differ at every step; the global random state
    is left as it was.
    """
    from attention_qa.models import TinyTransformerLM

    with torch.random.fork_rng(devices=[]), torch.no_grad():
        # a model whose two rows of the (2, 4) prompt continue differently at every step, so
        # that a decoder reading one row's prediction for the whole batch is wrong
        torch.manual_seed(28)
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
            got = as_answer(got, case, "the tokens")
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
                require_integer_ids(got, case, "the tokens", "; keep the prompt's dtype")
                continue
            if not torch.equal(got[:, :T], prompt):
                raise AssertionError(f"on {case}, the prompt was changed: keep it as it is")
            # a slip is named only when the learner's tokens are that slip's on every case
            # (on a short prompt two slips can give the same tokens)
            for slip, message in GREEDY_SLIPS.items():
                if all(torch.equal(as_answer(call_learner(fn, c, model, p.clone(), s), c),
                                   greedy_variant(model, p, s, slip))
                       for c, p, s in cases):
                    raise AssertionError(f"on {case}, {message}")
            new = got[:, T:]
            if B > 1 and (new == new[:1]).all() and not (expected[:, T:] == expected[:1, T:]).all():
                raise AssertionError(
                    f"on {case}, every row got row 0's new tokens: each row has its own "
                    f"prediction, logits[:, -1].argmax(-1), one token per row"
                )
            wrong = (got != expected).nonzero()[0].tolist()
            raise AssertionError(
                f"on {case}, token {wrong[1]} of row {wrong[0]} is {int(got[tuple(wrong)])} but "
                f"greedy decoding gives {int(expected[tuple(wrong)])}: take the argmax of "
                f"the last position's logits at every step"
            )
