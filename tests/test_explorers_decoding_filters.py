import torch

from attention_qa.decoding import LOGITS
from attention_qa.explorers.decoding_filters import decoding_explorer


def test_temperature_zero_is_greedy_and_higher_temperatures_spread_the_mass():
    explorer = decoding_explorer()
    greedy = explorer.frame(temperature=0, top_k=0, top_p=1.0)
    assert greedy.data.argmax() == LOGITS.argmax() and greedy.data.max() == 1
    assert greedy.figures["entropy"] == "0.00 bits"
    entropies = [float(explorer.frame(temperature=t, top_k=0, top_p=1.0).figures["entropy"]
                       .split()[0]) for t in (0.5, 1, 1.5, 2)]
    assert entropies == sorted(entropies)


def test_top_p_keeps_the_smallest_set_reaching_p():
    explorer = decoding_explorer()
    plain = torch.softmax(LOGITS, -1)
    for p in (0.95, 0.9, 0.75, 0.5):
        kept = int((explorer.frame(temperature=1, top_k=0, top_p=p).data > 0).sum())
        assert plain[:kept].sum() >= p > plain[: kept - 1].sum()


def test_top_k_keeps_k_tokens_and_renormalises():
    explorer = decoding_explorer()
    for k in (1, 2, 5, 10):
        probs = explorer.frame(temperature=1, top_k=k, top_p=1.0).data
        assert int((probs > 0).sum()) == k and abs(probs.sum().item() - 1) < 1e-12
