"""q31's explorer agrees with the tokenizer it shows, frame by frame."""

from attention_qa.corpus import CHINESE, ENGLISH, SENTENCES
from attention_qa.costs import model_parameter_counts
from attention_qa.explorers.tokens import MERGES, token_explorer
from attention_qa.tokens import book_tokenizer, train_bpe


def test_every_frame_tiles_each_sentence_with_its_tokens():
    explorer = token_explorer()
    for merges in MERGES:
        for training in ("english", "both"):
            frame = explorer.frame(merges=merges, training=training)
            tokenizer = book_tokenizer(merges, chinese=training == "both")
            for name, text in SENTENCES.items():
                spans = frame.data[name]
                data = text.encode("utf-8")
                assert spans[0][0] == 0 and spans[-1][1] == len(data)
                assert all(a[1] == b[0] for a, b in zip(spans, spans[1:], strict=False))
                assert [data[s:e] for s, e in spans] == [
                    tokenizer.token_bytes(t) for t in tokenizer.encode(text)]
                n = len(spans)
                assert frame.figures[name].startswith(f"{n} tokens for {len(text)} characters")


def test_the_book_tokenizer_is_a_prefix_of_one_training():
    # The first k merges of a longer training are what a training stopped at k learns.
    for k in (0, 50, 200):
        assert book_tokenizer(k).merges == train_bpe(ENGLISH, k).merges
    assert book_tokenizer(100, chinese=True).merges == train_bpe(ENGLISH + CHINESE, 100).merges


def test_an_english_vocabulary_leaves_chinese_at_three_tokens_per_character():
    frame = token_explorer().frame(merges=800, training="english")
    assert frame.figures["Chinese"] == "57 tokens for 19 characters (3.00 per character)"
    both = token_explorer().frame(merges=800, training="both")
    assert int(both.figures["Chinese"].split()[0]) < 57


def test_the_embedding_share_is_the_cost_model_s():
    frame = token_explorer().frame(merges=400, training="english")
    counts = model_parameter_counts(656, 768, tied=True, num_blocks=12)
    share = counts["input embedding"] / sum(counts.values())
    assert frame.figures["embedding's share (12 blocks, d_model 768)"] == f"{share:.1%}"


def test_each_byte_s_bar_takes_its_token_s_colour():
    from matplotlib.colors import to_rgba
    from matplotlib.figure import Figure

    from attention_qa.explorers.tokens import COLOURS, TokenStrips

    view = TokenStrips()
    view.setup(Figure(figsize=view.figsize))
    frame = token_explorer().frame(merges=50, training="english")
    view.update(frame.data)
    for name, spans in frame.data.items():
        bars = view.bars[name]
        lefts = [path.vertices[:, 0].min() for path in bars.get_paths()]
        assert lefts == [byte - 0.5 for byte in range(spans[-1][1])]  # a bar per byte, in order
        colours = [tuple(c) for c in bars.get_facecolor()]
        assert set(colours) == {to_rgba(c) for c in COLOURS}
        token_of = [t for t, (start, end) in enumerate(spans) for _ in range(start, end)]
        for byte in range(1, len(colours)):  # a new colour exactly where a new token starts
            same_token = token_of[byte] == token_of[byte - 1]
            assert (colours[byte] == colours[byte - 1]) == same_token, (name, byte)
