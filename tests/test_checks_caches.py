"""check_mla_cache_bytes and check_blocks_needed: pass right answers, name each slip."""

import math

import numpy as np
import pytest
import torch

from attention_qa.checks.caches import (
    BLOCKS_SLIPS,
    MLA_CACHE_SLIPS,
    check_blocks_needed,
    check_mla_cache_bytes,
)
from attention_qa.costs import latent_cache_bytes


def mla_right(num_layers, num_heads, d_head, d_latent, d_rope, seq_len, bytes_per_element):
    return latent_cache_bytes(num_layers, d_latent, seq_len, 1, bytes_per_element, d_rope)


def test_mla_passes_right_answers_int_and_tensor():
    check_mla_cache_bytes(mla_right)
    check_mla_cache_bytes(lambda L, h, d, c, r, T, b: torch.tensor(L * (c + r) * T * b))


MLA_WRONG = {
    "keys_and_values": lambda L, h, d, c, r, T, b: 2 * L * h * d * T * b,
    "no_rope": lambda L, h, d, c, r, T, b: L * c * T * b,
    "latent_twice": lambda L, h, d, c, r, T, b: L * (2 * c + r) * T * b,
    "latent_and_rope_twice": lambda L, h, d, c, r, T, b: 2 * L * (c + r) * T * b,
    "rope_per_head": lambda L, h, d, c, r, T, b: L * (c + h * r) * T * b,
    "no_layers": lambda L, h, d, c, r, T, b: (c + r) * T * b,
    "elements": lambda L, h, d, c, r, T, b: L * (c + r) * T,
}


@pytest.mark.parametrize("slip", sorted(MLA_WRONG))
def test_mla_names_each_slip(slip):
    with pytest.raises(AssertionError) as err:
        check_mla_cache_bytes(MLA_WRONG[slip])
    assert MLA_CACHE_SLIPS[slip] in str(err.value)


def test_mla_unknown_error_gives_the_formula_and_a_crash_names_the_case():
    with pytest.raises(AssertionError, match=r"num_layers · \(d_latent \+ d_rope\)"):
        check_mla_cache_bytes(lambda *args: 1)
    with pytest.raises(AssertionError, match="raised ZeroDivisionError on num_layers=3"):
        check_mla_cache_bytes(lambda *args: 1 / 0)
    with pytest.raises(AssertionError, match="should be one number"):
        check_mla_cache_bytes(lambda *args: "576")


def test_blocks_passes_right_answers():
    check_blocks_needed(lambda lengths, b: sum(math.ceil(n / b) for n in lengths))
    check_blocks_needed(lambda lengths, b: sum(-(-n // b) for n in lengths))


BLOCKS_WRONG = {
    "floor": lambda lengths, b: sum(n // b for n in lengths),
    "plus_one": lambda lengths, b: sum(n // b + 1 for n in lengths),
    "pooled_slots": lambda lengths, b: math.ceil(sum(lengths) / b),
    "reserved": lambda lengths, b: len(lengths) * math.ceil(max(lengths) / b),
    "slots": lambda lengths, b: sum(lengths),
}


@pytest.mark.parametrize("slip", sorted(BLOCKS_WRONG))
def test_blocks_names_each_slip(slip):
    with pytest.raises(AssertionError) as err:
        check_blocks_needed(BLOCKS_WRONG[slip])
    assert BLOCKS_SLIPS[slip] in str(err.value)


def test_blocks_unknown_error_gives_the_formula():
    with pytest.raises(AssertionError, match=r"Σ ceil\(length / block_size\)"):
        check_blocks_needed(lambda lengths, b: 0)


@pytest.mark.parametrize("to_numpy", [np.int64, np.float64, np.array])
def test_numpy_answers_pass_and_a_string_or_bool_is_refused(to_numpy):
    check_mla_cache_bytes(lambda *args: to_numpy(mla_right(*args)))
    check_blocks_needed(lambda lengths, b: to_numpy(sum(math.ceil(n / b) for n in lengths)))
    for wrong in ("3", True, np.bool_(True), [1, 2]):
        with pytest.raises(AssertionError, match="should be one number"):
            check_blocks_needed(lambda lengths, b, wrong=wrong: wrong)
    with pytest.raises(AssertionError, match="should be one number"):
        check_mla_cache_bytes(lambda *args: "576")


def test_a_numpy_slip_is_still_named():
    with pytest.raises(AssertionError) as err:
        check_blocks_needed(lambda lengths, b: np.int64(sum(n // b for n in lengths)))
    assert BLOCKS_SLIPS["floor"] in str(err.value)


def test_a_scaffold_is_let_through():
    def scaffold(*args):
        raise NotImplementedError

    for check in (check_mla_cache_bytes, check_blocks_needed):
        with pytest.raises(NotImplementedError):
            check(scaffold)
