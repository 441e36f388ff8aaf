"""The checker of q09's exercise: ``check_greedy_decode``."""

from __future__ import annotations

from typing import Callable

import torch

from attention_qa.checks.common import call_learner, require_shape


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
