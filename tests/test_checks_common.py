"""The helpers every checker shares: comparison at the learner's precision, and feedback."""

import pytest
import torch

from attention_qa.checks import close, diagnose, tolerance


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
