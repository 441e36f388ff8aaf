
from attention_qa.explorers.ffn_share import ffn_share_explorer


def test_the_ffn_share_grows_with_the_multiplier():
    explorer = ffn_share_explorer()
    shares = [
        explorer.frame(d_model=512, multiplier=m).data["feed-forward"] for m in (0.5, 1, 4, 8)
    ]
    assert shares == sorted(shares)
    assert abs(explorer.frame(d_model=4096, multiplier=4).data["feed-forward"] - 2 / 3) < 1e-3
