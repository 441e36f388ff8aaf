from attention_qa.explorers.heads import head_explorer, head_maps
from attention_qa.heads import previous_token_score
from attention_qa.panel import Frame


def test_every_setting_computes():
    explorer = head_explorer()
    assert explorer.num_frames <= 200
    for settings in explorer.settings():
        frame = explorer.frame(**settings)
        assert isinstance(frame, Frame), settings
        assert set(frame.figures) == {
            "previous-token", "self", "first-token", "content", "kind",
            "this input: previous-token / self / first-token", "named from this input alone",
        }


def test_training_makes_a_previous_token_head_that_the_untrained_model_lacks():
    explorer = head_explorer()
    kinds = {
        model: [
            explorer.frame(head=h, example=0, model=model).figures["kind"]
            for h in ((0, 0), (0, 1), (1, 0), (1, 1))
        ]
        for model in ("trained", "untrained")
    }
    assert "previous-token" in kinds["trained"]
    assert "previous-token" not in kinds["untrained"]
    best = {
        model: max(
            float(explorer.frame(head=h, example=0, model=model).figures["previous-token"])
            for h in ((0, 0), (0, 1))
        )
        for model in ("trained", "untrained")
    }
    assert best["trained"] > 0.5 and best["trained"] > 3 * best["untrained"]


def test_the_map_and_its_own_scores_change_with_the_example_but_the_heads_scores_do_not():
    explorer = head_explorer()
    a = explorer.frame(head=(1, 0), example=0, model="trained")
    b = explorer.frame(head=(1, 0), example=1, model="trained")
    head_figures = ("previous-token", "self", "first-token", "content", "kind")
    assert all(a.figures[name] == b.figures[name] for name in head_figures)
    one = "this input: previous-token / self / first-token"
    assert a.figures[one] != b.figures[one]
    assert not (a.data["map"] == b.data["map"]).all()
    # the scores of one input are the head's scores computed on that input alone
    prev = float(a.figures[one].split(" / ")[0])
    assert abs(prev - previous_token_score(a.data["map"]).item()) < 0.006
    assert head_maps("trained").shape == (2, 64, 2, 16, 16)
