
from attention_qa.explorers.weight_tying import weight_tying_explorer
from attention_qa.panel import Frame


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
