import torch

from attention_qa.explorers.positional import positional_explorer, similarity_to
from attention_qa.positional import sinusoidal_encoding


def test_similarity_depends_only_on_distance_and_peaks_at_the_position():
    a, b = similarity_to(20, 64), similarity_to(50, 64)
    assert torch.allclose(a[20:60], b[50:90], atol=1e-5)
    assert a.argmax().item() == 20 and abs(a[20].item() - 1) < 1e-5
    pe = sinusoidal_encoding(128, 64)
    assert torch.allclose(a, torch.cosine_similarity(pe, pe[20:21], dim=-1), atol=1e-5)


def test_more_dimensions_keep_neighbours_more_alike():
    explorer = positional_explorer()

    def near(d):
        figures = explorer.frame(d_model=d, position=48).figures
        return float(figures["similarity to the next position"])

    assert near(4) < near(64) < near(512)


def test_similarity_to_position_0_is_the_curve_read_at_distance_p():
    explorer = positional_explorer()
    from_zero = similarity_to(0, 64)
    for p in (0, 16, 80):
        figure = explorer.frame(d_model=64, position=p).figures["similarity to position 0"]
        assert figure == f"{from_zero[p].item():.3f}"
    assert explorer.frame(d_model=64, position=0).figures["similarity to position 0"] == "1.000"
