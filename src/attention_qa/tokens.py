"""Tokens: a byte-level BPE trained from the 256 byte values, and WordPiece's lookup (q31).

- Byte pair encoding for subwords follows Sennrich, Haddow and Birch (2016), "Neural Machine
  Translation of Rare Words with Subword Units": start from single symbols and repeatedly
  merge the most frequent adjacent pair. GPT-2 (Radford et al., 2019, section 2.2) starts
  from bytes instead of characters, so any string is covered and no token is unknown.
- Here a *word* is a maximal run of non-space characters together with the spaces before it
  (a run of spaces at the end of a text is a word of its own), and no merge crosses words.
  Each step merges the most frequent adjacent pair over all words, counted with the words'
  frequencies; ties go to the smallest ``(left id, right id)``. The new token gets the next
  id, 256, 257, … in merge order. Training stops early when no pair occurs twice.
- Encoding applies the merges by rank, as GPT-2's tokenizer does: in each word, the
  adjacent pair merged earliest in training is merged everywhere in that word, until no
  adjacent pair is a merge.
- ``wordpiece_tokenize`` is BERT's lookup (Devlin et al., 2019; google-research/bert,
  ``tokenization.py``, ``WordpieceTokenizer``): a word is split greedily, longest match
  first, into pieces of a fixed vocabulary; every piece after the first is written with
  ``##``. A word it cannot cover, or longer than ``max_chars_per_word``, becomes the
  unknown token. Song et al. (2021, "Fast WordPiece Tokenization") call this MaxMatch.
  WordPiece's vocabulary itself comes from Schuster and Nakajima (2012), who grow it by
  likelihood gain; GNMT (Wu et al., 2016, section 4.1) marks the start of each word with
  ``_`` instead of marking continuations.
"""

import functools
import heapq
import re
from collections import Counter
from collections.abc import Iterable
from itertools import pairwise

from attention_qa.validation import require_nonnegative_int, require_positive_int

_WORD = re.compile(r"\s*\S+|\s+")


def split_words(text: str) -> list[str]:
    """The words BPE works within: each run of non-space characters with the spaces before it."""
    _require_str("text", text)
    return _WORD.findall(text)


class BPETokenizer:
    """A byte-level BPE tokenizer given by its merges, in the order they were learned.

    merges: a list of ``(left, right)`` token-id pairs; merge r makes token 256 + r, and
    each pair may only use ids that exist before it (0–255 are the bytes).
    """

    def __init__(self, merges):
        self.merges: list[tuple[int, int]] = []
        self._bytes = [bytes([b]) for b in range(256)]
        for pair in merges:
            left, right = _require_pair(pair, len(self._bytes))
            self.merges.append((left, right))
            self._bytes.append(self._bytes[left] + self._bytes[right])
        self._rank = {pair: rank for rank, pair in enumerate(self.merges)}

    @property
    def vocab_size(self) -> int:
        return len(self._bytes)

    def token_bytes(self, token_id: int) -> bytes:
        """The bytes token ``token_id`` stands for."""
        require_nonnegative_int("token_id", token_id)
        if token_id >= self.vocab_size:
            raise ValueError(f"token_id {token_id} is not in the vocabulary of "
                             f"{self.vocab_size} tokens (ids 0 to {self.vocab_size - 1})")
        return self._bytes[token_id]

    def encode(self, text: str) -> list[int]:
        """The token ids of ``text``: its UTF-8 bytes, merged word by word by rank."""
        ids: list[int] = []
        for word in split_words(text):
            ids.extend(self._encode_word(_utf8(word)))
        return ids

    def decode(self, ids) -> str:
        """The text of ``ids``: ``decode(encode(s)) == s`` for every string ``s``.

        Ids whose bytes are not valid UTF-8 (a character cut between tokens) decode with
        U+FFFD in place of the bad bytes, as GPT-2's tokenizer does.
        """
        data = b"".join(self.token_bytes(i) for i in _require_ids(ids))
        try:
            return data.decode("utf-8", errors="surrogatepass")
        except UnicodeDecodeError:
            return data.decode("utf-8", errors="replace")

    def _encode_word(self, data: bytes) -> list[int]:
        ids = list(data)
        while len(ids) > 1:
            ranks = [self._rank.get(pair) for pair in pairwise(ids)]
            known = [r for r in ranks if r is not None]
            if not known:
                break
            ids = _merge(ids, self.merges[min(known)], 256 + min(known))
        return ids


def train_bpe(texts, num_merges: int) -> BPETokenizer:
    """Learn up to ``num_merges`` merges from ``texts`` (a string or an iterable of strings).

    Fewer merges are learned when no adjacent pair occurs twice any more.
    """
    require_nonnegative_int("num_merges", num_merges)
    words = Counter()
    for text in [texts] if isinstance(texts, str) else _require_texts(texts):
        words.update(_utf8(w) for w in split_words(text))
    pieces = [list(w) for w in words]  # each word's current token ids
    freq = list(words.values())
    pair_count: Counter = Counter()
    where: dict[tuple[int, int], set[int]] = {}  # pair -> the words it occurs in
    for w, ids in enumerate(pieces):
        _count_pairs(ids, freq[w], w, pair_count, where)
    heap = [(-c, pair) for pair, c in pair_count.items()]
    heapq.heapify(heap)
    merges: list[tuple[int, int]] = []
    while len(merges) < num_merges:
        best = _pop_best(heap, pair_count)
        if best is None:
            break
        new_id = 256 + len(merges)
        merges.append(best)
        changed = set()
        for w in sorted(where.pop(best)):
            changed |= _count_pairs(pieces[w], -freq[w], w, pair_count, where)
            pieces[w] = _merge(pieces[w], best, new_id)
            changed |= _count_pairs(pieces[w], freq[w], w, pair_count, where)
        for pair in changed:  # counts went up or down: the heap learns the new ones
            if pair_count[pair] > 0:
                heapq.heappush(heap, (-pair_count[pair], pair))
    return BPETokenizer(merges)


def token_spans(tokenizer: BPETokenizer, text: str) -> list[tuple[int, int]]:
    """Where each token of ``text`` lies in its UTF-8 bytes: (start, end) offsets."""
    spans, start = [], 0
    for token in tokenizer.encode(text):
        end = start + len(tokenizer.token_bytes(token))
        spans.append((start, end))
        start = end
    return spans


def pair_counts(word_counts: dict) -> Counter:
    """How often each adjacent pair of ids occurs: word_counts maps a word (a tuple of
    token ids) to how often it occurs, and a pair counts once per place in each word."""
    counts: Counter = Counter()
    for word, count in word_counts.items():
        for pair in pairwise(word):
            counts[pair] += count
    return counts


def most_frequent_pair(word_counts: dict) -> tuple[int, int] | None:
    """The pair BPE merges next: the most frequent adjacent pair (ties: the smallest), or
    None when no pair occurs at least twice. word_counts as for ``pair_counts``."""
    counts = pair_counts(word_counts)
    if not counts or max(counts.values()) < 2:
        return None
    return min(counts, key=lambda pair: (-counts[pair], pair))


@functools.cache
def book_tokenizer(num_merges: int, chinese: bool = False) -> BPETokenizer:
    """q31's tokenizer: the first num_merges merges learned from the book's own English
    (``attention_qa.corpus.ENGLISH``), or from its English and Chinese together.

    Training is greedy, so the first k merges of a longer run are the merges of a run that
    stops at k: one training of 2,000 merges serves every smaller vocabulary.
    """
    require_nonnegative_int("num_merges", num_merges)
    full = _book_merges(chinese)
    if num_merges > len(full):
        raise ValueError(f"the book's text gives {len(full)} merges, not {num_merges}")
    return BPETokenizer(full[:num_merges])


@functools.cache
def _book_merges(chinese: bool) -> tuple:
    from attention_qa.corpus import CHINESE, ENGLISH

    return tuple(train_bpe(ENGLISH + CHINESE if chinese else ENGLISH, BOOK_MERGES).merges)


BOOK_MERGES = 2000


def wordpiece_tokenize(text: str, vocab, unk_token: str = "[UNK]",
                       max_chars_per_word: int = 100) -> list[str]:
    """WordPiece's pieces of ``text``: split on whitespace, then longest match first.

    vocab: the pieces, continuation pieces written ``##…`` (a set, dict or list). A word
    that cannot be covered, or has more than ``max_chars_per_word`` characters, becomes
    ``unk_token``.
    """
    _require_str("text", text)
    _require_str("unk_token", unk_token)
    require_positive_int("max_chars_per_word", max_chars_per_word)
    if isinstance(vocab, str) or not hasattr(vocab, "__contains__"):
        raise TypeError(f"vocab must be a set, dict or list of pieces, got {type(vocab).__name__}")
    pieces: list[str] = []
    for word in text.split():
        pieces.extend(_wordpiece_word(word, vocab, unk_token, max_chars_per_word))
    return pieces


def _wordpiece_word(word: str, vocab, unk_token: str, max_chars: int) -> list[str]:
    if len(word) > max_chars:
        return [unk_token]
    pieces, start = [], 0
    while start < len(word):
        for end in range(len(word), start, -1):
            piece = word[start:end] if start == 0 else "##" + word[start:end]
            if piece in vocab:
                break
        else:
            return [unk_token]
        pieces.append(piece)
        start = end
    return pieces


def _merge(ids: list[int], pair: tuple[int, int], new_id: int) -> list[int]:
    """ids with every occurrence of pair, read left to right, replaced by new_id."""
    out, i = [], 0
    while i < len(ids):
        if i + 1 < len(ids) and (ids[i], ids[i + 1]) == pair:
            out.append(new_id)
            i += 2
        else:
            out.append(ids[i])
            i += 1
    return out


def _count_pairs(ids, weight, w, pair_count, where) -> set:
    """Add weight to the count of every adjacent pair of word w; returns the pairs."""
    pairs = set()
    for pair in pairwise(ids):
        pair_count[pair] += weight
        pairs.add(pair)
    for pair in pairs:
        if weight > 0:
            where.setdefault(pair, set()).add(w)
        elif pair in where:
            where[pair].discard(w)
    return pairs


def _pop_best(heap, pair_count):
    """The most frequent pair (ties: the smallest), if it occurs at least twice; else None."""
    while heap:
        neg_count, pair = heap[0]
        if pair_count.get(pair, 0) != -neg_count:
            heapq.heappop(heap)  # a stale entry: the count has changed since
            continue
        return pair if -neg_count >= 2 else None
    return None


def _utf8(text: str) -> bytes:
    # surrogatepass: a lone surrogate, which Python strings may hold, still round-trips.
    return text.encode("utf-8", errors="surrogatepass")


def _require_str(name: str, value) -> None:
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, got {type(value).__name__}")


def _require_texts(texts) -> list[str]:
    if not isinstance(texts, Iterable):
        raise TypeError(f"texts must be a string or an iterable of strings, "
                        f"got {type(texts).__name__}")
    texts = list(texts)
    for i, text in enumerate(texts):
        if not isinstance(text, str):
            raise TypeError(f"texts[{i}] must be a str, got {type(text).__name__}")
    return texts


def _require_pair(pair, known: int) -> tuple[int, int]:
    if not (isinstance(pair, tuple | list) and len(pair) == 2):
        raise ValueError(f"a merge must be a (left id, right id) pair, got {pair!r}")
    for token in pair:
        require_nonnegative_int("a merge's token id", token)
        if token >= known:
            raise ValueError(f"merge {tuple(pair)} uses id {token}, which does not exist "
                             f"before it (ids 0 to {known - 1} do)")
    return int(pair[0]), int(pair[1])


def _require_ids(ids) -> list[int]:
    if isinstance(ids, str | bytes) or not isinstance(ids, Iterable):
        raise TypeError(f"ids must be a list of token ids, got {type(ids).__name__}")
    return list(ids)
