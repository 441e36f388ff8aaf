"""A paged K/V cache: one pool of fixed-size blocks shared by every sequence.

Follows Kwon et al. (2023), "Efficient Memory Management for Large Language Model Serving
with PagedAttention" (vLLM), section 4.1: a sequence's keys and values are stored in blocks
of ``block_size`` positions that need not be contiguous, and a per-sequence *block table*
maps its logical blocks to physical ones, as an operating system's page table maps virtual
pages to memory. A sequence takes a new block only when its last one is full, so at most
``block_size − 1`` slots per sequence are wasted, and the blocks of a finished sequence go
straight back to the pool.

One cache holds one layer's keys and values, as each layer of a model has its own.
"""

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
    ceil(length / block_size) of them), ``free(seq_id)`` (its blocks return to the pool) and
    the property ``num_free_blocks``.
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
        self._tables: dict = {}  # seq_id -> list of physical block ids, in logical order
        self._lengths: dict = {}  # seq_id -> number of positions stored

    def append(self, seq_id, k: torch.Tensor, v: torch.Tensor) -> None:
        self._check_kv(k, v)
        t = k.shape[1]
        length = self._lengths.get(seq_id, 0)
        table = self._tables.get(seq_id, [])
        needed = -(-(length + t) // self.block_size) - len(table)  # new blocks to take
        if needed > len(self._free):
            raise MemoryError(
                f"sequence {seq_id!r} needs {needed} more blocks of {self.block_size} "
                f"positions for {t} new tokens but only {len(self._free)} blocks are free"
            )
        self._free.sort()
        table = table + self._free[:needed]
        del self._free[:needed]
        positions = torch.arange(length, length + t)  # (t,): logical positions
        blocks = torch.tensor(table, dtype=torch.long)[positions // self.block_size]  # (t,)
        offsets = positions % self.block_size  # (t,): slot inside each block
        self.k_pool[blocks, offsets] = k.transpose(0, 1)  # (t, h, d_head) into their slots
        self.v_pool[blocks, offsets] = v.transpose(0, 1)  # (t, h, d_head)
        self._tables[seq_id] = table
        self._lengths[seq_id] = length + t

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
        self._free.extend(self._tables.pop(seq_id))
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
