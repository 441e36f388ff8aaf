import pytest
from torch import nn

from attention_qa.blocks import TransformerBlock
from attention_qa.explorer import Frame
from attention_qa.explorers.weight_tying import model_parameter_counts, weight_tying_explorer


def test_counts_match_real_modules():
    vocab, d, layers = 100, 16, 2
    emb = nn.Embedding(vocab, d)
    blocks = nn.ModuleList(TransformerBlock(d, 4, 4 * d) for _ in range(layers))
    out = nn.Linear(d, vocab, bias=False)
    counts = model_parameter_counts(vocab, d, tied=False, num_blocks=layers)
    assert counts["input embedding"] == emb.weight.numel()
    assert counts["blocks"] == sum(p.numel() for p in blocks.parameters())
    assert counts["output projection"] == out.weight.numel()
    out.weight = emb.weight  # tied: the module list holds the matrix once
    model = nn.ModuleList([emb, blocks, out])
    tied = model_parameter_counts(vocab, d, tied=True, num_blocks=layers)
    assert sum(tied.values()) == sum(p.numel() for p in model.parameters())


def test_every_combination_computes():
    explorer = weight_tying_explorer()
    for settings in explorer.settings():
        assert isinstance(explorer.frame(**settings), Frame), settings


def test_savings_grow_with_the_vocabulary_and_shrink_in_share_with_d_model():
    explorer = weight_tying_explorer()

    def saved_share(vocab, d):
        data = explorer.frame(vocab_size=vocab, d_model=d).data
        return 1 - sum(data["tied"])

    assert saved_share(8_000, 512) < saved_share(37_000, 512) < saved_share(128_000, 512)
    assert saved_share(37_000, 2048) < saved_share(37_000, 256)
    assert explorer.frame(vocab_size=37_000, d_model=512).figures["saved"].startswith("18.9 M")


def test_bad_sizes_are_refused():
    with pytest.raises(ValueError, match="vocab_size must be a positive integer"):
        model_parameter_counts(0, 8, tied=True)
