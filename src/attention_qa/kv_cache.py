"""A paged K/V cache: one pool of fixed-size blocks shared by every sequence.

Follows Kwon et al. (2023), "Efficient Memory Management for Large Language Model Serving
with PagedAttention" (vLLM), section 4.1: a sequence's keys and values are stored in blocks
of ``block_size`` positions that need not be contiguous, and a per-sequence *block table*
maps its logical blocks to physical ones, as an operating system's page table maps virtual
pages to memory. A sequence takes a new block only when its last one is full, so at most
``block_size − 1`` slots per sequence are wasted, and the blocks of a finished sequence go
straight back to the pool. Sequences that share a prefix share its blocks (section 4.4):
every block has a reference count, and a sequence about to write into a shared, partly
filled block first copies it (copy-on-write).

One cache holds one layer's keys and values, as each layer of a model has its own.

Beside the cache: ``paged_attention`` (attention that reads K and V block by block through
the block table, as vLLM's kernel does), and the block arithmetic of a serving engine,
``blocks_needed``, ``wasted_slots`` and ``requests_that_fit``. A contiguous cache that
reserves ``max_len`` positions per request is the special case ``block_size = max_len``.
"""

import math

import torch

from attention_qa.validation import require_positive_int, require_tensor, shape_str


class PagedKVCache:
    """``num_blocks`` blocks of ``block_size`` positions, each holding (num_heads, d_head)
    keys and values per position.

    ``append(seq_id, k, v)``: k and v (num_heads, t, d_head) are the next t positions of
    sequence ``seq_id`` (any hashable; a new one starts empty). When the free blocks do not
    suffice it raises ``MemoryError`` naming the blocks needed and free, and changes nothing.
    ``get(seq_id) -> (k, v)``, each (num_heads, length, d_head): everything appended, in
    order. ``length(seq_id)``, ``block_table(seq_id)`` (the physical blocks, in order,
    ceil(length / block_size) of them), ``free(seq_id)`` (its blocks return to the pool once
    no other sequence holds them) and the property ``num_free_blocks``.

    ``fork(parent, child)`` starts ``child`` as a copy of ``parent`` that takes no memory:
    its block table points at the parent's blocks, whose reference counts
    (``ref_count(block)``) go up by one. An append that would write into a shared, partly
    filled last block first copies that block for the writer, so neither sequence ever sees
    the other's later tokens.
    """

    def __init__(self, num_blocks: int, block_size: int, num_heads: int, d_head: int,
                 dtype: torch.dtype = torch.float32):
        self.num_blocks = require_positive_int("num_blocks", num_blocks)
        self.block_size = require_positive_int("block_size", block_size)
        self.num_heads = require_positive_int("num_heads", num_heads)
        self.d_head = require_positive_int("d_head", d_head)
        if not isinstance(dtype, torch.dtype) or not dtype.is_floating_point:
            raise TypeError(f"dtype must be a floating-point torch.dtype, got {dtype!r}")
        self.dtype = dtype
        shape = (num_blocks, block_size, num_heads, d_head)
        self.k_pool = torch.zeros(shape, dtype=dtype)  # (blocks, block_size, h, d_head)
        self.v_pool = torch.zeros(shape, dtype=dtype)  # (blocks, block_size, h, d_head)
        self._free = list(range(num_blocks))  # physical block ids, lowest handed out first
        self._refs = [0] * num_blocks  # how many block tables hold each physical block
        self._tables: dict = {}  # seq_id -> list of physical block ids, in logical order
        self._lengths: dict = {}  # seq_id -> number of positions stored

    def append(self, seq_id, k: torch.Tensor, v: torch.Tensor) -> None:
        self._check_kv(k, v)
        t = k.shape[1]
        length = self._lengths.get(seq_id, 0)
        table = list(self._tables.get(seq_id, []))
        # Writing into a shared, partly filled last block needs a copy of it first.
        copy_last = t > 0 and length % self.block_size != 0 and self._refs[table[-1]] > 1
        grow = -(-(length + t) // self.block_size) - len(table)  # new blocks at the end
        if grow + copy_last > len(self._free):
            raise MemoryError(
                f"sequence {seq_id!r} needs {grow + copy_last} more blocks of "
                f"{self.block_size} positions for {t} new tokens but only "
                f"{len(self._free)} blocks are free"
            )
        if copy_last:
            (block,) = self._take(1)
            self.k_pool[block] = self.k_pool[table[-1]]  # (block_size, h, d_head)
            self.v_pool[block] = self.v_pool[table[-1]]
            self._refs[table[-1]] -= 1
            table[-1] = block
        table += self._take(grow)
        positions = torch.arange(length, length + t)  # (t,): logical positions
        blocks = torch.tensor(table, dtype=torch.long)[positions // self.block_size]  # (t,)
        offsets = positions % self.block_size  # (t,): slot inside each block
        self.k_pool[blocks, offsets] = k.transpose(0, 1)  # (t, h, d_head) into their slots
        self.v_pool[blocks, offsets] = v.transpose(0, 1)  # (t, h, d_head)
        self._tables[seq_id] = table
        self._lengths[seq_id] = length + t

    def fork(self, parent, child) -> None:
        self._require_known(parent)
        if child in self._lengths:
            raise ValueError(f"sequence {child!r} is already in the cache; fork into a new id")
        self._tables[child] = list(self._tables[parent])
        self._lengths[child] = self._lengths[parent]
        for block in self._tables[child]:
            self._refs[block] += 1

    def ref_count(self, block: int) -> int:
        """How many sequences' block tables hold physical block ``block`` (0: it is free)."""
        if isinstance(block, bool) or not isinstance(block, int) or not (
            0 <= block < self.num_blocks
        ):
            raise ValueError(
                f"block must be an integer in 0 … {self.num_blocks - 1}, got {block!r}"
            )
        return self._refs[block]

    def _take(self, count: int) -> list[int]:
        """``count`` free blocks, lowest ids first, each now held once."""
        self._free.sort()
        taken, self._free = self._free[:count], self._free[count:]
        for block in taken:
            self._refs[block] = 1
        return taken

    def get(self, seq_id) -> tuple[torch.Tensor, torch.Tensor]:
        length = self.length(seq_id)
        positions = torch.arange(length)  # (length,)
        blocks = torch.tensor(self._tables[seq_id], dtype=torch.long)
        blocks = blocks[positions // self.block_size]  # (length,): physical block of each
        offsets = positions % self.block_size  # (length,)
        # Gathering copies: the caller gets tensors of its own, not views into the pool.
        k = self.k_pool[blocks, offsets].transpose(0, 1)  # (h, length, d_head)
        v = self.v_pool[blocks, offsets].transpose(0, 1)  # (h, length, d_head)
        return k, v

    def length(self, seq_id) -> int:
        self._require_known(seq_id)
        return self._lengths[seq_id]

    def block_table(self, seq_id) -> list[int]:
        self._require_known(seq_id)
        return list(self._tables[seq_id])

    def free(self, seq_id) -> None:
        self._require_known(seq_id)
        for block in self._tables.pop(seq_id):
            self._refs[block] -= 1
            if self._refs[block] == 0:
                self._free.append(block)
        del self._lengths[seq_id]

    @property
    def num_free_blocks(self) -> int:
        return len(self._free)

    def _require_known(self, seq_id) -> None:
        if seq_id not in self._lengths:
            raise KeyError(f"no sequence {seq_id!r} in the cache; known: {list(self._lengths)}")

    def _check_kv(self, k, v) -> None:
        want = f"({self.num_heads}, t, {self.d_head})"
        for name, x in (("k", k), ("v", v)):
            require_tensor(name, x, floating=True)
            if x.ndim != 3 or x.shape[0] != self.num_heads or x.shape[2] != self.d_head:
                raise ValueError(
                    f"{name} has shape {shape_str(x.shape)} but must be {want}: "
                    f"num_heads={self.num_heads}, d_head={self.d_head}"
                )
            if x.dtype != self.dtype:
                raise TypeError(
                    f"{name} has dtype {x.dtype} but the cache holds {self.dtype}; "
                    f"convert it (e.g. {name}.to({self.dtype}))"
                )
        if k.shape != v.shape:
            raise ValueError(
                f"v has shape {shape_str(v.shape)} but k has shape {shape_str(k.shape)}; "
                f"they must match"
            )


def _check_paged_query(q, cache: "PagedKVCache") -> None:
    """q must be (num_heads, n, d_head) of the cache's dtype."""
    require_tensor("q", q, floating=True)
    want = f"({cache.num_heads}, n, {cache.d_head})"
    if q.ndim != 3 or q.shape[0] != cache.num_heads or q.shape[2] != cache.d_head:
        raise ValueError(f"q has shape {shape_str(q.shape)} but must be {want}")
    if q.dtype != cache.dtype:
        raise TypeError(f"q has dtype {q.dtype} but the cache holds {cache.dtype}")


def paged_attention(q: torch.Tensor, cache: "PagedKVCache", seq_id) -> torch.Tensor:
    """Attention of queries q (num_heads, n, d_head) over every position of ``seq_id``.

    K and V are read from the pool one block at a time through the block table, never
    copied into one contiguous tensor first; the result (num_heads, n, d_head) equals
    softmax(q Kᵀ / √d_head) V over the contiguous K and V of ``cache.get(seq_id)``.
    """
    _check_paged_query(q, cache)
    length = cache.length(seq_id)
    scores, values = [], []
    for i, block in enumerate(cache.block_table(seq_id)):
        used = min(cache.block_size, length - i * cache.block_size)  # slots filled
        k = cache.k_pool[block, :used].transpose(0, 1)  # (h, used, d_head)
        values.append(cache.v_pool[block, :used].transpose(0, 1))  # (h, used, d_head)
        scores.append(q @ k.transpose(-2, -1))  # (h, n, used)
    weights = torch.softmax(torch.cat(scores, dim=-1) / math.sqrt(cache.d_head), dim=-1)
    out = torch.zeros_like(q)  # (h, n, d_head)
    start = 0
    for v in values:  # the weighted sum, block by block
        out = out + weights[..., start : start + v.shape[1]] @ v  # (h, n, d_head)
        start += v.shape[1]
    return out


def blocks_needed(lengths, block_size: int) -> int:
    """Blocks a paged cache takes for sequences of these lengths: Σ ceil(length / block_size).

    A block belongs to one sequence, so each rounds up on its own.
    """
    lengths = _check_lengths(lengths)
    require_positive_int("block_size", block_size)
    return sum(-(-n // block_size) for n in lengths)


def wasted_slots(lengths, block_size: int) -> int:
    """Slots taken but unused: the empty tail of each sequence's last block.

    At most ``block_size − 1`` per sequence (Kwon et al., 2023, section 4.1).
    """
    return blocks_needed(lengths, block_size) * block_size - sum(_check_lengths(lengths))


def requests_that_fit(lengths, num_blocks: int, block_size: int) -> int:
    """How many requests, admitted in order, fit in a pool of ``num_blocks`` blocks.

    Each takes ceil(length / block_size) blocks; admission stops at the first that does not
    fit (first come, first served, as vLLM's scheduler admits). With ``block_size`` equal
    to a reserved maximum length, this is a contiguous cache: one region per request.
    """
    lengths = _check_lengths(lengths)
    require_positive_int("num_blocks", num_blocks)
    require_positive_int("block_size", block_size)
    taken = 0
    for admitted, n in enumerate(lengths):
        taken += -(-n // block_size)
        if taken > num_blocks:
            return admitted
    return len(lengths)


def _check_lengths(lengths) -> list[int]:
    lengths = list(lengths)
    if not lengths or any(isinstance(n, bool) or not isinstance(n, int) or n < 1
                          for n in lengths):
        raise ValueError(f"lengths must be a non-empty list of positive integers, got {lengths}")
    return lengths


# q29's request queues: NUM_REQUESTS lengths for each workload, at most MAX_LEN positions.
MAX_LEN = 2048
NUM_REQUESTS = 400
WORKLOADS = ("short chats", "mixed", "long documents", "all 100 tokens")


def request_lengths(workload: str) -> list[int]:
    """NUM_REQUESTS lengths in [1, MAX_LEN], the same on every machine (integer draws)."""
    if workload not in WORKLOADS:
        raise ValueError(f"workload must be one of {WORKLOADS}, got {workload!r}")
    g = torch.Generator().manual_seed(WORKLOADS.index(workload))
    low, high = {"short chats": (16, 257), "mixed": (16, MAX_LEN + 1),
                 "long documents": (512, MAX_LEN + 1), "all 100 tokens": (100, 101)}[workload]
    return torch.randint(low, high, (NUM_REQUESTS,), generator=g).tolist()
