"""check_sink_window_mask (q30): a right answer passes, each likely slip is named."""

import pytest
import torch

from attention_qa.checks import check_sink_window_mask
from attention_qa.masks import sink_window_mask


def learner(bug=None):
    def my_sink_window_mask(n, window, sinks):
        rows = []
        for i in range(n):
            row = []
            for j in range(n):
                last = window + 1 if bug == "plus_one" else window
                last = window - sinks if bug == "inside" else last
                in_window = 0 <= i - j < last
                if bug == "two_sided":
                    in_window = abs(i - j) < window
                is_sink = j < sinks and (j <= i or bug == "future_sinks")
                row.append(in_window or is_sink)
            rows.append(row)
        mask = torch.tensor(rows, dtype=torch.bool)
        return mask.long() if bug == "long" else mask

    return my_sink_window_mask


def test_right_answers_pass():
    check_sink_window_mask(learner())
    check_sink_window_mask(sink_window_mask)


@pytest.mark.parametrize(
    ("bug", "words"),
    [
        ("plus_one", r"window \+ 1 recent keys"),
        ("inside", "counted inside the window"),
        ("two_sided", "the window looks ahead"),
        ("future_sinks", "sees a later sink key"),
        ("long", "return a boolean tensor"),
    ],
)
def test_slips_are_named(bug, words):
    with pytest.raises(AssertionError, match=words):
        check_sink_window_mask(learner(bug))


def test_other_mistakes_are_located_and_unfinished_work_passes_through():
    def inverted(n, window, sinks):
        return ~sink_window_mask(n, window, sinks)

    def off(n, window, sinks):
        mask = sink_window_mask(n, window, sinks)
        mask[-1, 0] = ~mask[-1, 0]
        return mask

    def unfinished(n, window, sinks):
        raise NotImplementedError

    with pytest.raises(AssertionError, match="inverted"):
        check_sink_window_mask(inverted)
    with pytest.raises(AssertionError, match=r"wrong at \[i, j\] = \[7, 0\]"):
        check_sink_window_mask(off)
    with pytest.raises(NotImplementedError):
        check_sink_window_mask(unfinished)
    with pytest.raises(AssertionError, match="should be \\(8, 8\\)"):
        check_sink_window_mask(lambda n, window, sinks: sink_window_mask(n, window, sinks)[1:])
