"""q46's checker, check_glm_positions: right answers in several styles and forms pass, and
the known slips fail with their names."""

import numpy as np
import pytest
import torch

from attention_qa.checks import check_glm_positions
from attention_qa.checks.q46 import GLM_POSITIONS_SLIPS, glm_positions_variant
from attention_qa.objectives import glm_blank_infilling


def by_the_package(n, spans, order):
    """GLM's input built by objectives.glm_blank_infilling, its two position rows kept."""
    out = glm_blank_infilling(list(range(n)), spans, mask_id=0, start_id=0, end_id=0,
                              order=order)
    return torch.stack([out["position_ids"], out["block_position_ids"]])


def by_a_loop(n, spans, order):
    """Walk the text once for part A, then each span in order for part B."""
    first, second, mask_at = [], [], {}
    i = 0
    while i < n:
        span = next((s for s in spans if s[0] == i), None)
        if span:
            mask_at[span] = len(first)
            i = span[1]
        else:
            i += 1
        first.append(len(first))
        second.append(0)
    for k in order:
        start, end = spans[k]
        for j in range(end - start + 1):
            first.append(mask_at[spans[k]])
            second.append(j + 1)
    return [first, second]


def by_numpy(n, spans, order):
    starts = np.array([s for s, _ in spans])
    lengths = np.array([e - s for s, e in spans])
    # a span's mask sits at its start minus the tokens the earlier spans lost (length − 1 each)
    mask_at = starts - np.concatenate([[0], np.cumsum(lengths - 1)[:-1]])
    part_a = n - int((lengths - 1).sum())
    pos = [np.arange(part_a)] + [np.full(lengths[k] + 1, mask_at[k]) for k in order]
    blk = [np.zeros(part_a, dtype=np.int64)] + [np.arange(1, lengths[k] + 2) for k in order]
    return np.stack([np.concatenate(pos), np.concatenate(blk)])


@pytest.mark.parametrize("fn", [
    by_the_package, by_a_loop, by_numpy,
    lambda n, s, o: tuple(by_the_package(n, s, o)),  # a pair of 1-D tensors
    lambda n, s, o: by_the_package(n, s, o).to(torch.int32),
    lambda n, s, o: by_numpy(n, s, o).astype(np.int32),
    lambda n, s, o: by_the_package(n, s, o).tolist(),
])
def test_right_answers_in_every_form_pass(fn):
    assert check_glm_positions(fn) is None


@pytest.mark.parametrize("bug", list(GLM_POSITIONS_SLIPS))
def test_each_slip_fails_with_its_name(bug):
    with pytest.raises(AssertionError, match=GLM_POSITIONS_SLIPS[bug][:40].replace("(", r"\(")):
        check_glm_positions(lambda n, s, o: glm_positions_variant(n, s, o, bug))


def test_other_wrong_answers_fail_clearly():
    with pytest.raises(AssertionError, match="dtype"):
        check_glm_positions(lambda n, s, o: by_the_package(n, s, o).double())
    with pytest.raises(AssertionError, match="stack them with dim=0"):
        check_glm_positions(lambda n, s, o: by_the_package(n, s, o).T)
    with pytest.raises(AssertionError, match="block position id of token"):
        def off_by_one_at_the_end(n, s, o):
            out = by_the_package(n, s, o).clone()
            out[1, -1] += 5
            return out
        check_glm_positions(off_by_one_at_the_end)


def test_the_variant_without_a_bug_is_the_package():
    for n, spans, order in [(6, [(2, 3), (4, 6)], [1, 0]), (10, [(0, 4), (6, 10)], [0, 1])]:
        assert torch.equal(glm_positions_variant(n, spans, order),
                           by_the_package(n, spans, order))
