
from attention_qa.explorers.layer_costs import layer_costs_explorer


def test_the_crossover_is_at_n_equal_d():
    explorer = layer_costs_explorer()
    assert explorer.frame(n=256, d=512).figures["cheaper per layer"] == "self-attention"
    assert explorer.frame(n=1024, d=512).figures["cheaper per layer"] == "recurrent"
    assert explorer.frame(n=512, d=512).figures["cheaper per layer"] == "neither (n = d)"
    bars_short = explorer.frame(n=64, d=512).data["bars"]
    bars_long = explorer.frame(n=4096, d=512).data["bars"]
    assert bars_long[0] / bars_short[0] == 64**2 and bars_long[1] / bars_short[1] == 64
