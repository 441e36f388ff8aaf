import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from attention_qa.explorer import Frame
from attention_qa.explorers.layer_costs import layer_costs_explorer, layer_flops


def counted(fn, *args):
    with FlopCounterMode(display=False) as counter:
        fn(*args)
    return counter.get_total_flops()


@pytest.mark.parametrize("n, d", [(8, 16), (32, 8)])
def test_counts_match_pytorchs_flop_counter(n, d):
    x = torch.randn(n, d)
    U, W = torch.randn(d, d), torch.randn(d, d)
    conv = torch.nn.Conv1d(d, d, kernel_size=3, padding=1, bias=False)

    def attention(x):
        return torch.softmax(x @ x.T, dim=-1) @ x

    def recurrent(x):
        h = torch.zeros(1, d)
        for t in range(n):
            h = torch.tanh(x[t : t + 1] @ U + h @ W)
        return h

    expected = layer_flops(n, d, kernel=3)
    assert counted(attention, x) == expected["self-attention"]
    assert counted(recurrent, x) == expected["recurrent"]
    assert counted(conv, x.T.unsqueeze(0)) == expected["convolution (k = 3)"]


def test_every_combination_computes():
    explorer = layer_costs_explorer()
    for settings in explorer.settings():
        assert isinstance(explorer.frame(**settings), Frame), settings


def test_the_crossover_is_at_n_equal_d():
    explorer = layer_costs_explorer()
    assert explorer.frame(n=256, d=512).figures["cheaper per layer"] == "self-attention"
    assert explorer.frame(n=1024, d=512).figures["cheaper per layer"] == "recurrent"
    assert explorer.frame(n=512, d=512).figures["cheaper per layer"] == "neither (n = d)"
    bars_short = explorer.frame(n=64, d=512).data["bars"]
    bars_long = explorer.frame(n=4096, d=512).data["bars"]
    assert bars_long[0] / bars_short[0] == 64**2 and bars_long[1] / bars_short[1] == 64


def test_bad_sizes_are_refused():
    with pytest.raises(ValueError, match="n must be a positive integer"):
        layer_flops(0, 8)
