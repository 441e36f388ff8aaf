"""Watching a learner's torch calls."""

import torch


def _tensors(x):
    """The tensors in an op's output (a tensor, or tuples and lists of them)."""
    if isinstance(x, torch.Tensor):
        yield x
    elif isinstance(x, (tuple, list)):
        for item in x:
            yield from _tensors(item)
