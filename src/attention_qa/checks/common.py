"""What every checker shares: calling the learner's code, and checking shapes."""

from __future__ import annotations

from typing import Callable

import torch


def call_learner(fn: Callable, case: str, *args, passthrough: tuple = (), **kwargs):
    """Call the learner's function; if it raises, say which input it failed on.

    NotImplementedError (an exercise not yet done) and the exception types in
    ``passthrough`` (ones the caller handles itself) propagate unchanged.
    """
    try:
        return fn(*args, **kwargs)
    except (NotImplementedError, *passthrough):
        raise
    except Exception as err:
        raise AssertionError(
            f"your function raised {type(err).__name__} on {case}: {err}"
        ) from None


def require_shape(result, expected: tuple, case: str, name: str = "result") -> torch.Tensor:
    if not isinstance(result, torch.Tensor):
        raise AssertionError(f"on {case}, {name} should be a tensor, got {type(result).__name__}")
    if tuple(result.shape) != tuple(expected):
        raise AssertionError(
            f"on {case}, {name} has shape {tuple(result.shape)} but should be {tuple(expected)}"
        )
    return result
