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


def as_real_tensor(value, case: str, name: str = "alpha") -> torch.Tensor:
    """A learner's answer as a tensor: a torch tensor as it is, a NumPy array or a Python
    or NumPy number converted in its own dtype; anything else (a string, a list of
    strings, a bool, a complex number) is refused."""
    if isinstance(value, torch.Tensor):
        got = value
    else:
        refused = AssertionError(f"on {case}, {name} should be a tensor (or a NumPy array "
                                 f"or number) of real numbers, got {type(value).__name__}")
        if isinstance(value, (str, bytes, bool)):
            raise refused
        try:
            got = torch.as_tensor(value)
        except (TypeError, ValueError, RuntimeError):
            raise refused from None
    if got.dtype == torch.bool or got.is_complex():
        raise AssertionError(f"on {case}, {name} should hold real numbers, got {got.dtype}")
    return got


def require_shape(result, expected: tuple, case: str, name: str = "result") -> torch.Tensor:
    if not isinstance(result, torch.Tensor):
        raise AssertionError(f"on {case}, {name} should be a tensor, got {type(result).__name__}")
    if tuple(result.shape) != tuple(expected):
        raise AssertionError(
            f"on {case}, {name} has shape {tuple(result.shape)} but should be {tuple(expected)}"
        )
    return result


# (rtol, atol) at which an answer computed in a dtype counts as right: a few units in the
# last place of that dtype after a handful of operations, far below any real slip.
_TOLERANCE = {
    torch.float64: (1e-7, 1e-9),
    torch.float32: (1e-4, 1e-5),
    torch.float16: (1e-2, 1e-3),
    torch.bfloat16: (2e-2, 1e-2),
}


def tolerance(dtype: torch.dtype) -> tuple[float, float]:
    """(rtol, atol) for an answer in ``dtype``; integer answers are held to float32's."""
    return _TOLERANCE.get(dtype, _TOLERANCE[torch.float32])


def close(got: torch.Tensor, expected: torch.Tensor) -> bool:
    """Whether ``got`` equals ``expected`` at the precision of the less precise of the two.

    A learner who computes in float32 or float16 is right when the answer is right to that
    dtype's precision, whatever CPU rounded it; one who computes float32 cases in float64 is
    right to float32's. Both sides are compared in float64, atol scaled by the largest
    |expected| (at least 1). Shapes must match; NaN matches NaN (so a slip that yields NaN
    can still be recognised).
    """
    if got.shape != expected.shape:
        return False
    rtol, atol = max(tolerance(got.dtype), tolerance(expected.dtype))
    scale = max(1.0, expected.abs().max().item()) if expected.numel() else 1.0
    return torch.allclose(
        got.double(), expected.double(), rtol=rtol, atol=atol * scale, equal_nan=True
    )


NAN_SCORES = "a row of scores became NaN; check the mask and the softmax"


def diagnose(got, expected, case: str, what: str, formula: str, slips=None, slip_model=None,
             nan_hint: str | None = None) -> None:
    """The feedback of every numeric checker, in one place; returns None when ``got`` is right.

    ``got`` is right when it equals ``expected`` at its dtype's precision (``close``).
    Otherwise the first known slip it matches is named: ``slips`` maps each switch of the
    checker's slip model to its message, and ``slip_model(switch)`` computes that wrong
    answer (one that raises RuntimeError cannot happen on these shapes and is skipped). Then
    NaN or inf is explained with ``nan_hint``, if given; last, how far off ``what`` is from
    ``formula``.
    """
    if close(got, expected):
        return
    for switch, message in (slips or {}).items():
        try:
            wrong = slip_model(switch)
        except RuntimeError:
            continue
        if close(got, wrong):
            raise AssertionError(f"on {case}, {message}")
    if nan_hint is not None and not torch.isfinite(got).all():
        raise AssertionError(f"on {case}, there is NaN or inf in {what}: {nan_hint}")
    worst = (got.double() - expected.double()).abs().max().item()
    verb = "are" if what.endswith("s") else "is"
    raise AssertionError(f"on {case}, {what} {verb} off by up to {worst:.3g} from {formula}")


def as_number(value, case: str) -> torch.Tensor:
    """A learner's scalar answer as a 0-d tensor in its own dtype; anything but one real
    number (a string, a bool, several values, a complex number) is refused."""
    refused = AssertionError(f"on {case}, the answer should be one number, got {value!r}")
    try:
        number = as_real_tensor(value, case)
    except AssertionError:
        raise refused from None
    if number.numel() != 1:
        raise refused
    return number.reshape(())


def _number(got, case: str):
    """A whole-number answer as a Python int or float, to compare exactly: any one real
    number is accepted (a Python or numpy number, a one-element tensor), through
    ``as_number``; a string or a bool is refused."""
    return as_number(got, case).item()


def _first_slip(got, case: str, slips: dict, variant: Callable, expected) -> None:
    for bug, message in slips.items():
        wrong = variant(bug)
        if wrong != expected and got == wrong:
            raise AssertionError(f"on {case}, {message}")


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
