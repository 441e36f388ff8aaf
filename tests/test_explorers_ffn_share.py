import pytest

from attention_qa.blocks import TransformerBlock
from attention_qa.explorer import Frame
from attention_qa.explorers.ffn_share import block_parameter_counts, ffn_share_explorer


@pytest.mark.parametrize("d_model, d_ff", [(8, 32), (16, 8), (32, 64)])
def test_counts_match_the_package_block(d_model, d_ff):
    block = TransformerBlock(d_model, 4, d_ff)
    counts = block_parameter_counts(d_model, d_ff)
    assert counts["attention"] == sum(p.numel() for p in block.attn.parameters())
    assert counts["feed-forward"] == sum(p.numel() for p in block.ffn.parameters())
    assert sum(counts.values()) == sum(p.numel() for p in block.parameters())


def test_every_combination_computes():
    explorer = ffn_share_explorer()
    for settings in explorer.settings():
        assert isinstance(explorer.frame(**settings), Frame), settings


def test_the_ffn_share_grows_with_the_multiplier():
    explorer = ffn_share_explorer()
    shares = [
        explorer.frame(d_model=512, multiplier=m).data["feed-forward"] for m in (0.5, 1, 4, 8)
    ]
    assert shares == sorted(shares)
    assert abs(explorer.frame(d_model=4096, multiplier=4).data["feed-forward"] - 2 / 3) < 1e-3


def test_bad_sizes_are_refused():
    with pytest.raises(ValueError, match="d_ff must be a positive integer"):
        block_parameter_counts(8, 0)
