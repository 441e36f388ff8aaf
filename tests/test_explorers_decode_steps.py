"""q09's decoding-step explorer: counts per step and in total, frames for every setting."""

import numpy as np

from attention_qa.costs import scores_per_step
from attention_qa.explorers.decode_steps import MAX_STEPS, decode_step_explorer, step_grid


def test_figures_grow_with_the_step():
    explorer = decode_step_explorer()

    def count(t, cache):
        return int(explorer.frame(t=t, cache=cache).figures["scores at this step"])

    assert count(4, "on") < count(8, "on") < count(8, "off")
    assert count(16, "off") / count(8, "off") == 4 and count(16, "on") / count(8, "on") == 2


def test_the_grid_colours_as_many_cells_as_scores_computed():
    for n in range(1, MAX_STEPS + 1):
        grid_on, grid_off = step_grid(n, True), step_grid(n, False)
        assert (grid_on == 1).sum() == scores_per_step(n, True) == n
        assert np.isin(grid_off, (1, 2)).sum() == scores_per_step(n, False) == n * n
