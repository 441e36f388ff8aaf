"""check_shift_right (q08) and check_greedy_decode (q09): right answers pass, slips are named."""

import pytest
import torch

from attention_qa.checks import check_greedy_decode, check_shift_right


def shift(bug=None):
    def shift_right(targets, bos):
        start = torch.full((targets.shape[0], 1), bos, dtype=targets.dtype)
        if bug == "roll":
            return targets.roll(1, dims=1)
        if bug == "left":
            return torch.cat([targets[:, 1:], start], dim=1)
        if bug == "none":
            return targets
        if bug == "keep_last":
            return torch.cat([start, targets], dim=1)
        if bug == "no_bos":
            return targets[:, :-1]
        return torch.cat([start, targets[:, :-1]], dim=1)

    return shift_right


def test_shift_right_passes():
    check_shift_right(shift())


@pytest.mark.parametrize(
    ("bug", "words"),
    [
        ("roll", "wraps round"),
        ("left", "shifted left"),
        ("none", "not shifted"),
        ("keep_last", "last target is kept"),
        ("no_bos", "bos is missing"),
    ],
)
def test_shift_right_slips(bug, words):
    with pytest.raises(AssertionError, match=words):
        check_shift_right(shift(bug))


def decode(bug=None):
    @torch.no_grad()
    def greedy_decode(model, tokens, max_new_tokens):
        out = tokens
        steps = max_new_tokens - 1 if bug == "short" else max_new_tokens
        for _ in range(steps):
            logits = model(out)  # (B, t, vocab)
            pos = 0 if bug == "first" else -1
            out = torch.cat([out, logits[:, pos].argmax(-1, keepdim=True)], dim=1)
        return out[:, tokens.shape[1] :] if bug == "new_only" else out

    return greedy_decode


def test_greedy_decode_passes():
    check_greedy_decode(decode())


@pytest.mark.parametrize(
    ("bug", "words"),
    [("first", "position 0"), ("short", "one step is missing"), ("new_only", "only the new")],
)
def test_greedy_decode_slips(bug, words):
    with pytest.raises(AssertionError, match=words):
        check_greedy_decode(decode(bug))


def test_greedy_decode_keeps_global_random_state():
    torch.manual_seed(0)
    expected = torch.rand(1)
    torch.manual_seed(0)
    check_greedy_decode(decode())
    assert torch.equal(torch.rand(1), expected)


def test_greedy_decode_rows_of_the_batch_continue_differently():
    """P1 of the 2026-11-27 checker review: on the (2, 4) prompt the two rows' greedy
    continuations differ, so a decoder that reads row 0's prediction for every row fails."""
    seen = []

    def spy(model, tokens, max_new_tokens):
        out = decode()(model, tokens, max_new_tokens)
        seen.append((tokens.shape, out[:, tokens.shape[1]:]))
        return out

    check_greedy_decode(spy)
    (new,) = [new for shape, new in seen if tuple(shape) == (2, 4)]
    assert (new[0] != new[1]).all()

    @torch.no_grad()
    def row_0_for_all(model, tokens, max_new_tokens):
        for _ in range(max_new_tokens):
            nxt = model(tokens)[0, -1].argmax()
            tokens = torch.cat([tokens, nxt.repeat(tokens.shape[0], 1)], dim=1)
        return tokens

    with pytest.raises(AssertionError, match="every row got row 0's new tokens"):
        check_greedy_decode(row_0_for_all)
