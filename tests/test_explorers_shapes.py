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
