"""The helpers every checker shares: comparison at the learner's precision, and feedback."""

import pytest
import torch

from attention_qa.checks import call_learner, close, diagnose, tolerance
from attention_qa.checks.common import forget_learner


@pytest.fixture(autouse=True)
def no_learner_call_before():
    """Each test starts as if no checker had run: ``close`` reads the last learner call's
    precision, which another test file's checkers would otherwise leave behind."""
    forget_learner()


def test_close_holds_an_answer_to_its_own_dtype():
    exact = torch.tensor([1.0, -2.0, 3.0], dtype=torch.float64)
    assert close(exact.float() + 1e-6, exact)  # float32 rounding passes
    assert not close(exact + 1e-6, exact)  # the same gap in float64 is a real difference
    assert close(exact.half(), exact) and not close(exact.half() + 0.1, exact)
    assert not close(exact[:2], exact)  # shapes must agree
    assert tolerance(torch.float16) > tolerance(torch.float32) > tolerance(torch.float64)


def test_diagnose_names_the_first_matching_slip_then_nan_then_the_gap():
    expected = torch.tensor([1.0, 2.0], dtype=torch.float64)
    slips = {"double": "you doubled it", "impossible": "never shown"}

    def model(switch):
        if switch == "impossible":
            raise RuntimeError("this slip cannot run on these shapes")
        return 2 * expected

    assert diagnose(expected.float(), expected, "case", "the output", "x", slips, model) is None
    with pytest.raises(AssertionError, match="on case, you doubled it"):
        diagnose(2 * expected, expected, "case", "the output", "x", slips, model)
    with pytest.raises(AssertionError, match="NaN or inf in the output: hint"):
        diagnose(torch.tensor([float("nan"), 2.0]), expected, "case", "the output", "x",
                 nan_hint="hint")
    with pytest.raises(AssertionError, match="the weights are off by up to 0.5 from x"):
        diagnose(expected + 0.5, expected, "case", "the weights", "x")


def test_the_float32_hint_needs_float32_work():
    """Checker review 2: a float64 slip as small as float32's rounding is named by its gap,
    not as float32 work; float32 work whose trace into the answer was lost (through a Python
    number) is named as such."""
    x = torch.linspace(1.0, 2.0, 5, dtype=torch.float64)
    expected = x.exp()
    slipped = call_learner(lambda t: t.exp() * (1 + 3e-6), "case", x)  # float64 throughout
    with pytest.raises(AssertionError) as info:
        diagnose(slipped, expected, "case", "the output", "exp(x)")
    assert "the output is off by up to" in str(info.value)
    assert "float32" not in str(info.value)
    lost = call_learner(lambda t: t.exp() * (1 + 3e-6 * float(t.float().sum() / t.sum())),
                        "case", x)  # a float32 factor, taken out as a Python number
    with pytest.raises(AssertionError, match="right only to float32's precision"):
        diagnose(lost, expected, "case", "the output", "exp(x)")
