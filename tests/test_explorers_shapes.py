"""q02's explorer: every setting computes, shapes follow."""

import torch

from attention_qa.explorers.shapes import shapes_explorer


def test_shapes_follow_the_controls():
    explorer = shapes_explorer()
    for settings in explorer.settings():
        n, m, d_k, d_v = (settings[key] for key in ("n", "m", "d_k", "d_v"))
        frame = explorer.frame(**settings)
        shapes = {name: tuple(x.shape) for name, x in frame.data.items()}
        assert shapes == {
            "Q": (n, d_k),
            "Kᵀ": (d_k, m),
            "weights": (n, m),
            "V": (m, d_v),
            "output": (n, d_v),
        }
        assert frame.figures["output"] == f"n × d_v = {n} × {d_v}"
        torch.testing.assert_close(frame.data["weights"].sum(-1), torch.ones(n))
        assert ("self" in frame.figures["case"]) == (n == m)


def test_growing_d_v_widens_only_v_and_the_output():
    explorer = shapes_explorer()
    small = explorer.frame(n=2, m=4, d_k=4, d_v=2).data
    large = explorer.frame(n=2, m=4, d_k=4, d_v=5).data
    assert large["output"].shape[1] > small["output"].shape[1]
    torch.testing.assert_close(large["weights"], small["weights"])
    torch.testing.assert_close(large["output"][:, :2], small["output"])


def test_the_layout_lines_up_the_products():
    """Weights share rows with Q and the output, columns with Kᵀ; the output's columns are V's."""
    from attention_qa.explorers.shapes import cell_squares

    data = shapes_explorer().frame(n=4, m=6, d_k=2, d_v=3).data
    corners = {name: cell_squares(matrix, name)[0] for name, matrix in data.items()}

    def xs(name):
        return sorted({round(float(c[0, 0]), 6) for c in corners[name]})

    def ys(name):
        return sorted({round(float(c[0, 1]), 6) for c in corners[name]})

    assert ys("weights") == ys("Q") == ys("output")
    assert xs("weights") == xs("Kᵀ") and xs("output") == xs("V")
    assert max(xs("Q")) < min(xs("weights")) and min(ys("Kᵀ")) > max(ys("weights"))


def test_a_label_pasted_from_its_kept_picture_looks_as_drawn_afresh():
    """The labels keep their pictures per place; Q's label reaches into the weights' box at
    some settings (n = 1, m = 2, d_k = 2), so what lies under a box is part of its key."""
    import io

    import numpy as np
    from PIL import Image

    def pixels(explorer, settings):
        return np.asarray(Image.open(io.BytesIO(explorer.render(explorer.frame(**settings)))))

    used = shapes_explorer()
    for settings in used.settings():
        used.render(used.frame(**settings))
    for settings in (dict(n=1, m=2, d_k=4, d_v=2), dict(n=6, m=6, d_k=8, d_v=5), used.defaults):
        assert np.array_equal(pixels(used, settings), pixels(shapes_explorer(), settings))
