import math

import pytest
import torch

from attention_qa.explorers.position_schemes import position_schemes_explorer, scheme_scores
from attention_qa.explorers.rope import rope_explorer
from attention_qa.positional import SCHEME_NAMES, apply_rope


def test_the_angle_is_offset_times_theta_and_the_pair_alone_is_its_cosine():
    explorer = rope_explorer()
    for offset, pair, base in [(4, 2, 10000.0), (64, 15, 500000.0), (8, 0, 100.0)]:
        f = explorer.frame(offset=offset, pair=pair, base=base).figures
        theta = base ** (-2 * pair / 32)
        assert float(f["angle between the key's and the query's pair"].split()[0]) == (
            pytest.approx(offset * theta, rel=5e-3)
        )
        assert f[f"pair {pair} alone"] == f"{math.cos(offset * theta):.2f}"


def test_the_score_curve_is_rotate_then_multiply():
    explorer = rope_explorer()
    frame = explorer.frame(offset=16, pair=2, base=10000.0)
    x = frame.data["total"]
    g = torch.Generator().manual_seed(25)
    content = torch.randn(32, generator=g, dtype=torch.float64)
    key = apply_rope(content.view(1, 32), torch.tensor([5]))  # key at position 5
    query = apply_rope(content.expand(65, 32), torch.arange(5, 70))  # offsets 0 … 64
    expected = (query @ key.T).squeeze(1)
    torch.testing.assert_close(x, expected / expected[0])


def test_offset_zero_scores_one_and_a_slower_base_keeps_scores_higher():
    explorer = rope_explorer()
    assert explorer.frame(offset=0, pair=4, base=100.0).figures[
        "score / score at offset 0, all pairs"
    ] == "1.00"
    fast = explorer.frame(offset=32, pair=15, base=100.0).figures["pair 15 alone"]
    slow = explorer.frame(offset=32, pair=15, base=500000.0).figures["pair 15 alone"]
    assert float(fast) < float(slow) == 1.0


def test_rope_and_alibi_depend_on_the_offset_alone_and_the_others_do_not():
    explorer = position_schemes_explorer()
    expected = {"sinusoidal": "no", "learned": "no", "rope": "yes", "rope-pi": "yes",
                "rope-ntk": "yes", "alibi": "yes"}
    for scheme in SCHEME_NAMES:
        f = explorer.frame(scheme=scheme, query=48).figures
        assert f["depends only on m − n"] == expected[scheme], scheme
        gap = f["largest gap to query 32's curve"]
        assert (gap == "0.00") == (expected[scheme] == "yes"), scheme


def test_the_learned_table_has_no_score_past_its_length():
    scores = scheme_scores("learned")
    assert scores[:64, :64].tril().isfinite().all()
    assert scores[64:].isnan().all()
    f = position_schemes_explorer().frame(scheme="learned", query=96).figures
    assert f["score, query 96, offset 0"] == "undefined (no row)"


def test_interpolation_and_ntk_keep_the_slowest_pair_within_its_trained_angle():
    explorer = position_schemes_explorer()

    def ratio(scheme):
        text = explorer.frame(scheme=scheme, query=127).figures["past position 63"]
        return float(text.split("turns ")[1].split("×")[0])

    assert ratio("rope") == pytest.approx(127 / 63, abs=0.01)
    assert ratio("rope-pi") == pytest.approx(127 / 126, abs=0.01)
    assert ratio("rope-ntk") == pytest.approx(127 / 126, abs=0.01)


def test_alibi_scores_fall_by_the_slope_per_position():
    scores = scheme_scores("alibi")
    torch.testing.assert_close(scores[100, 99] - scores[100, 100], torch.tensor(-1 / 16,
                               dtype=torch.float64))
