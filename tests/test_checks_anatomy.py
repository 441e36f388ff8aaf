"""check_llama_parameters: passes independent right answers, names each slip."""

import numpy as np
import pytest
import torch

from attention_qa.anatomy import Anatomy, parameter_count
from attention_qa.checks.anatomy import LLAMA_PARAMETER_SLIPS, check_llama_parameters


def by_formula(L, d, h, kv, dh, ff, V, tied):
    return V * d + L * (2 * d * h * dh + 2 * d * kv * dh + 3 * d * ff + 2 * d) + d + (
        0 if tied else V * d)


def by_modules(L, d, h, kv, dh, ff, V, tied):
    """Counted from torch modules of the right shapes, on the meta device."""
    with torch.device("meta"):
        block = torch.nn.ModuleList([
            torch.nn.Linear(d, h * dh, bias=False), torch.nn.Linear(d, kv * dh, bias=False),
            torch.nn.Linear(d, kv * dh, bias=False), torch.nn.Linear(h * dh, d, bias=False),
            torch.nn.Linear(d, ff, bias=False), torch.nn.Linear(d, ff, bias=False),
            torch.nn.Linear(ff, d, bias=False), torch.nn.RMSNorm(d), torch.nn.RMSNorm(d)])
        per_block = sum(p.numel() for p in block.parameters())
    return V * d * (1 if tied else 2) + L * per_block + d


def by_package_table(L, d, h, kv, dh, ff, V, tied):
    """The package's own counter on a row built from these fields, as a numpy integer."""
    row = Anatomy("case", L, d, h, kv, dh, "GQA", "SwiGLU", ff, V, tied, "RMSNorm", "pre",
                  "RoPE", 1e4, 8, "none", ("test",))
    import attention_qa.anatomy as anatomy
    anatomy.MODELS["case"] = row
    try:
        return np.int64(parameter_count("case"))
    finally:
        del anatomy.MODELS["case"]


@pytest.mark.parametrize("right", [by_formula, by_modules, by_package_table])
def test_passes_independent_right_answers(right):
    check_llama_parameters(right)


def test_passes_a_tensor_answer_in_float64():
    check_llama_parameters(lambda *a: torch.tensor(by_formula(*a), dtype=torch.float64))


def _slip(bug):
    def wrong(L, d, h, kv, dh, ff, V, tied):
        q = d * d if bug == "q_width_d_model" else d * h * dh
        k = d * d if bug == "kv_full" else d * kv * dh
        f = (2 if bug == "two_matrices" else 3) * d * ff
        n = 0 if bug == "no_norms" else 2 * d
        final = 0 if bug in ("no_norms", "no_final_norm") else d
        head = V * d if (not tied or bug == "head_when_tied") and bug != "no_head" else 0
        return V * d + L * (2 * q + 2 * k + f + n) + final + head
    return wrong


@pytest.mark.parametrize("bug", sorted(LLAMA_PARAMETER_SLIPS))
def test_names_each_slip(bug):
    with pytest.raises(AssertionError) as err:
        check_llama_parameters(_slip(bug))
    assert LLAMA_PARAMETER_SLIPS[bug] in str(err.value)


def test_unknown_errors_give_the_formula_and_bad_types_are_refused():
    with pytest.raises(AssertionError, match="unless tied"):
        check_llama_parameters(lambda *a: 1)
    with pytest.raises(AssertionError, match="should be one number"):
        check_llama_parameters(lambda *a: "7B")
    with pytest.raises(AssertionError, match="raised ZeroDivisionError"):
        check_llama_parameters(lambda *a: 1 / 0)
