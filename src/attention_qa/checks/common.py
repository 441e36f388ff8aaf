"""What every checker shares: the learner's way in, the comparison, and the feedback.

One way in for every answer: ``call_learner`` runs the learner's function and notes the least
precise floating dtype along the tensors its torch calls computed the answer from
(``watch.Precision``); ``as_answer`` turns what it returned (a tensor, a NumPy array or
number, a list or tuple of numbers, a Python number, or an (output, weights) pair where only
the output is asked for) into a tensor in its own dtype;
``close`` compares in float64 at the precision of the least precise of the reference's dtype
(the inputs'), the answer's and the one the learner computed in (float32 for a float64 answer
of float32 numbers).
"""

from __future__ import annotations

import contextvars
import numbers
from typing import Callable

import numpy as np
import torch

from attention_qa.checks.watch import Precision

# the least precise floating dtype the learner's last call computed in (None: not watched)
_COMPUTED_IN: contextvars.ContextVar = contextvars.ContextVar("computed_in", default=None)
# the least precise floating dtype any torch call of the learner's last call made, whether or
# not it flowed into the answer (its trace may be lost through Python numbers)
_SAW: contextvars.ContextVar = contextvars.ContextVar("saw", default=None)


def forget_learner() -> None:
    """Forget what the last learner call computed in, so that a ``close`` made outside a
    checker (a test, a reader's own comparison) holds its answer to that answer's dtype only."""
    _COMPUTED_IN.set(None)
    _SAW.set(None)


def call_learner(fn: Callable, case: str, *args, passthrough: tuple = (), **kwargs):
    """Call the learner's function; if it raises, say which input it failed on.

    NotImplementedError (an exercise not yet done) and the exception types in
    ``passthrough`` (ones the caller handles itself) propagate unchanged.
    The least precise floating dtype along the tensors its torch calls computed what it
    returned from is noted for ``close`` (``watch.Precision.lowest_in``): a float64 answer
    with float32 steps inside is held to float32's precision; a throwaway float16 tensor made
    beside the answer loosens nothing.
    """
    forget_learner()  # a call that raises leaves nothing of the previous one behind
    watch = Precision()
    try:
        with watch:
            result = fn(*args, **kwargs)
    except (NotImplementedError, *passthrough):
        raise
    except Exception as err:
        raise AssertionError(
            f"your function raised {type(err).__name__} on {case}: {err}"
        ) from None
    _COMPUTED_IN.set(watch.lowest_in(result))
    _SAW.set(watch.lowest)
    return result


def computed_in() -> torch.dtype | None:
    """The least precise floating dtype the learner's last call computed in, if any."""
    return _COMPUTED_IN.get()


def _is_array(x) -> bool:
    return isinstance(x, (torch.Tensor, np.ndarray)) or (
        isinstance(x, (list, tuple)) and len(x) > 0 and not isinstance(x[0], numbers.Number)
    )


def first_of_pair(value):
    """The output of an (output, weights) pair, as ``F.scaled_dot_product_attention``-style
    code or ``nn.MultiheadAttention`` returns it (weights may be None); else ``value``."""
    if (isinstance(value, tuple) and len(value) == 2 and _is_array(value[0])
            and (value[1] is None or _is_array(value[1]))):
        return value[0]
    return value


def require_integer_ids(got: torch.Tensor, case: str, what: str, advice: str) -> None:
    """Token ids whose values are right must be integers too (``nn.Embedding`` refuses
    floats); ``advice`` ends the message with how to keep them so."""
    if got.is_floating_point() or got.dtype == torch.bool:
        raise AssertionError(
            f"on {case}, {what} are right but their dtype is {got.dtype}: token ids are "
            f"integers{advice}"
        )


def check_weights(result, expected_weights: torch.Tensor, case: str, what: str) -> None:
    """When the learner returned (output, weights) with weights, the weights must be
    ``expected_weights`` (``what`` names them in the message); None or no pair passes."""
    if first_of_pair(result) is result or result[1] is None:
        return
    weights = require_shape(result[1], expected_weights.shape, case, "the weights")
    if not close(weights, expected_weights):
        raise AssertionError(f"on {case}, the output is right but the weights are not {what}")


def as_answer(value, case: str, name: str = "the answer", output_only: bool = False
              ) -> torch.Tensor:
    """The learner's answer as a tensor in its own dtype.

    Accepted: a torch tensor; a NumPy array or number; a (nested) list or tuple of numbers,
    or of tensors of one shape; a Python number. With ``output_only``, the first element of
    an (output, weights) pair. A string, a bool, a complex number, None or a ragged list is
    refused with a message naming what came back.
    """
    if output_only:
        value = first_of_pair(value)
    if isinstance(value, torch.Tensor):
        return value.detach().cpu() if value.requires_grad or value.device.type != "cpu" else value
    refused = AssertionError(f"on {case}, {name} should be a tensor, a NumPy array or a list "
                             f"of numbers, got {type(value).__name__}")
    if value is None or isinstance(value, (str, bytes, bool, np.bool_, complex)):
        raise refused
    if isinstance(value, (list, tuple)) and value and all(
            isinstance(x, torch.Tensor) for x in value):
        try:
            return torch.stack([x.detach().cpu() for x in value])
        except RuntimeError:
            raise refused from None
    try:
        array = np.asarray(value)
    except (TypeError, ValueError):
        raise refused from None
    if array.dtype == object or array.dtype.kind not in "biuf":
        raise refused
    return torch.tensor(array)


def as_real_tensor(value, case: str, name: str = "alpha") -> torch.Tensor:
    """A learner's answer as a tensor of real numbers (``as_answer``; a bool or complex
    tensor is refused too)."""
    got = as_answer(value, case, name)
    if got.dtype == torch.bool or got.is_complex():
        raise AssertionError(f"on {case}, {name} should hold real numbers, got {got.dtype}")
    return got


def require_shape(result, expected: tuple, case: str, name: str = "result",
                  output_only: bool = False) -> torch.Tensor:
    """The learner's answer (any form ``as_answer`` takes) as a tensor of shape ``expected``."""
    result = as_answer(result, case, name, output_only)
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
    right to float32's; a float64 answer whose torch calls went through float32 (noted by
    ``call_learner``), or whose every value is a float32 number (float32 work, in NumPy or
    torch, returned as float64), is right to float32's. A float64 answer computed in float64
    keeps float64's precision, so a slip of 1e-4 still fails. Both sides are compared in
    float64, atol scaled by the largest |expected| (at least 1).
    Shapes must match; NaN matches NaN (so a slip that yields NaN
    can still be recognised).
    """
    if got.shape != expected.shape:
        return False
    dtypes = [got.dtype, expected.dtype]
    if computed_in() is not None and got.is_floating_point():
        dtypes.append(computed_in())
    if got.dtype == torch.float64 and float32_numbers(got):
        dtypes.append(torch.float32)
    return _close_at(got, expected, dtypes)


def float32_numbers(got: torch.Tensor) -> bool:
    """Whether every finite value of a float64 tensor is a float32 number: float32 work
    (NumPy's or torch's) cast to float64 at the end."""
    finite = got[torch.isfinite(got)]
    return torch.equal(finite.float().double(), finite)


def float32_work(got: torch.Tensor) -> bool:
    """Whether float32 (or half-precision) work was seen behind a float64 answer: the
    learner's torch calls made float32 tensors (even ones whose trace into the answer was
    lost through Python numbers), or every value is a float32 number up to a last float64
    step (within 1e-11 of it, where float32's own spacing is about 6e-8)."""
    lowest = _SAW.get()
    if lowest is not None and lowest != torch.float64:
        return True
    finite = got[torch.isfinite(got)].double()
    return bool(finite.numel()) and torch.allclose(
        finite.float().double(), finite, rtol=1e-11, atol=0.0)


def _close_at(got: torch.Tensor, expected: torch.Tensor, dtypes: list) -> bool:
    rtol, atol = max(tolerance(d) for d in dtypes)
    scale = max(1.0, expected.abs().max().item()) if expected.numel() else 1.0
    return torch.allclose(
        got.double(), expected.double(), rtol=rtol, atol=atol * scale, equal_nan=True
    )


def close_at(got: torch.Tensor, expected: torch.Tensor, dtypes: list) -> bool:
    """Whether ``got`` equals ``expected`` at the precision of the least precise of
    ``dtypes``, whatever the dtype it was computed in."""
    return _close_at(got, expected, dtypes)


NAN_SCORES = "a row of scores became NaN; check the mask and the softmax"


def diagnose(got, expected, case: str, what: str, formula: str, slips=None, slip_model=None,
             nan_hint: str | None = None, plural: bool | None = None) -> None:
    """The feedback of every numeric checker, in one place; returns None when ``got`` is right.

    ``got`` is right when it equals ``expected`` at its dtype's precision (``close``).
    Otherwise the first known slip it matches is named: ``slips`` maps each switch of the
    checker's slip model to its message, and ``slip_model(switch)`` computes that wrong
    answer (one that raises RuntimeError cannot happen on these shapes and is skipped). Then
    NaN or inf is explained with ``nan_hint``, if given; then a float64 answer right only to
    float32's precision is named as such, where float32 work was seen (``float32_work``);
    last, how far off ``what`` is from ``formula``, with "are" when ``plural`` (by default:
    ``what`` ends in one "s", as "the weights" does and "the loss" does not).
    """
    if close(got, expected):
        return
    for switch, message in (slips or {}).items():
        try:
            wrong = slip_model(switch)
        except (RuntimeError, IndexError):  # a slip these shapes cannot show
            continue
        if close(got, wrong):
            raise AssertionError(f"on {case}, {message}")
    if nan_hint is not None and not torch.isfinite(got).all():
        raise AssertionError(f"on {case}, there is NaN or inf in {what}: {nan_hint}")
    worst = (got.double() - expected.double()).abs().max().item()
    if plural is None:
        plural = what.endswith("s") and not what.endswith("ss")
    verb = "are" if plural else "is"
    if (got.dtype == torch.float64 and _close_at(got, expected, [torch.float32])
            and float32_work(got)):
        raise AssertionError(
            f"on {case}, {what} {verb} right only to float32's precision, off by up to "
            f"{worst:.3g} from {formula}: a step was computed in float32. Compute every step "
            "in float64, or return the float32 result as it is")
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


def as_pair(value, case: str, what: str) -> tuple:
    """A pair of whole numbers (a tuple, a list, a NumPy array or a tensor of two numbers) as
    a tuple of Python ints; anything else (a number with a fractional part too) is refused,
    naming the pair expected."""
    try:
        pair = as_real_tensor(value, case, f"the pair {what}")
    except AssertionError:
        pair = None
    if pair is None or pair.numel() != 2:
        raise AssertionError(f"on {case}, return a pair {what} (a tuple or list of two "
                             f"numbers), got {value!r}")
    return tuple(whole_numbers(pair.reshape(2).tolist(), case, f"the pair {what}"))


def whole_numbers(values, case: str, what: str) -> list:
    """Numbers that must be whole (counts, sizes) as Python ints; a number with a fractional
    part (or NaN, inf) is refused, naming it, rather than cut to an int."""
    out = []
    for v in values:
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Real):
            raise AssertionError(f"on {case}, {what} should hold whole numbers, but one is "
                                 f"{v!r}")
        if not isinstance(v, numbers.Integral) and not float(v).is_integer():
            raise AssertionError(f"on {case}, {what} should hold whole numbers, but one is "
                                 f"{v!r}")
        out.append(int(v))
    return out


def _number(got, case: str):
    """A whole-number answer as a Python int or float, to compare exactly: any one real
    number is accepted (a Python or numpy number, a one-element tensor), through
    ``as_number``; a string or a bool is refused."""
    return as_number(got, case).item()


def first_slip(got, case: str, slips: dict, variant: Callable, expected) -> None:
    """For an exact answer: name the first slip whose wrong answer ``got`` equals (one that
    happens to equal the right answer on this case is skipped)."""
    for bug, message in slips.items():
        wrong = variant(bug)
        if wrong != expected and got == wrong:
            raise AssertionError(f"on {case}, {message}")


def compare_masks(got, expected: torch.Tensor, case: str, slips: dict, index: str):
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


_first_slip = first_slip  # the names older code imports
_compare_masks = compare_masks
