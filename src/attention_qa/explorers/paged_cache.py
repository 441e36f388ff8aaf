"""q29's explorer: one pool of K/V slots, filled by a queue of requests, contiguously or
in pages.

A contiguous cache reserves the maximum length (here 2048 positions) for every request,
whatever it will use; a paged cache (Kwon et al., 2023, "Efficient Memory Management for
Large Language Model Serving with PagedAttention") hands out blocks of ``block_size``
positions as a sequence grows, so only the tail of each sequence's last block is wasted
(``attention_qa.kv_cache.blocks_needed``, ``wasted_slots``, ``requests_that_fit``).
Requests are admitted in order until the next one does not fit. The request lengths are
drawn once, from fixed seeds, for four workloads.
"""

import numpy as np
from matplotlib.colors import ListedColormap, to_rgba_array

from attention_qa.kv_cache import (
    MAX_LEN,
    WORKLOADS,
    blocks_needed,
    request_lengths,
    requests_that_fit,
    wasted_slots,
)
from attention_qa.panel import Control, Explorer, Frame, View
from attention_qa.panel.palette import BLUE, CYAN, GREEN, GREY, PURPLE, RED, WHITE, YELLOW

POOL_SLOTS = 8192  # positions the pool holds (one layer; every layer has the same layout)
ROWS, COLS = 32, POOL_SLOTS // 32  # the pool drawn as a grid, row after row
BLOCK_SIZES = (1, 4, 16, 64, 256, 2048)
FREE, WASTE = 0, 1  # colour indices; requests cycle through the six after them
COLOURS = ListedColormap([WHITE, GREY, BLUE, RED, GREEN,
                          YELLOW, CYAN, PURPLE])
# The same colours as RGBA bytes, indexed by colour index: an image of bytes is drawn about
# four times as fast as one of indices through a colour map, to the same pixels.
RGBA = (to_rgba_array(COLOURS.colors) * 255).round().astype(np.uint8)  # (colours, 4)


def pool_picture(lengths: list[int], block_size: int) -> np.ndarray:
    """(ROWS, COLS) colour indices: each admitted request's slots, then its unused tail."""
    slots = np.full(POOL_SLOTS, FREE, dtype=np.int64)
    fitted = requests_that_fit(lengths, POOL_SLOTS // block_size, block_size)
    start = 0
    for i, n in enumerate(lengths[:fitted]):
        taken = blocks_needed([n], block_size) * block_size
        slots[start : start + n] = 2 + i % 6
        slots[start + n : start + taken] = WASTE
        start += taken
    return slots.reshape(ROWS, COLS)


def paged_cache_frame(workload: str, block_size: int) -> Frame:
    lengths = request_lengths(workload)
    paged_fit = requests_that_fit(lengths, POOL_SLOTS // block_size, block_size)
    flat_fit = requests_that_fit(lengths, POOL_SLOTS // MAX_LEN, MAX_LEN)
    paged_waste = wasted_slots(lengths[:paged_fit], block_size)
    flat_waste = wasted_slots(lengths[:flat_fit], MAX_LEN)
    figures = {
        "contiguous (2,048 reserved each): requests that fit": f"{flat_fit}",
        "contiguous: slots reserved but unused": f"{flat_waste:,} of {POOL_SLOTS:,}",
        "paged: requests that fit": f"{paged_fit}",
        "paged: blocks used": (f"{blocks_needed(lengths[:paged_fit], block_size):,} of "
                               f"{POOL_SLOTS // block_size:,}"),
        "paged: slots wasted": f"{paged_waste:,} of {POOL_SLOTS:,}",
        "paged: waste per request": f"{paged_waste / paged_fit:.1f} (< {block_size})",
    }
    data = {"contiguous": pool_picture(lengths, MAX_LEN),
            "paged": pool_picture(lengths, block_size),
            "titles": (f"contiguous, {MAX_LEN:,} reserved per request: {flat_fit} fit",
                       f"paged, blocks of {block_size:,}: {paged_fit} fit")}
    return Frame(data=data, figures=figures)


class PagedCacheView(View):
    """The contiguous pool above, the paged pool below.

    The contiguous pool depends on the workload alone (every request reserves the same), so
    it belongs to the still part, drawn once per workload (``update`` returns a key naming
    it); a new block size redraws only the paged pool and its title.
    """

    figsize = (6.4, 3.4)

    def setup(self, fig):
        ax_flat, ax_paged = fig.subplots(2, 1)
        self.flat = self._pool(ax_flat, animated=False)
        self.paged = self._pool(ax_paged, animated=True)
        ax_paged.set_xlabel(f"the pool: {POOL_SLOTS:,} slots, {COLS} per row; grey: unused")

    @staticmethod
    def _pool(ax, animated: bool):
        """One pool's image and title, for ``update`` to fill."""
        # zorder 3: over the axes' frame (2.5), as an animated image is, drawn after it
        image = ax.imshow(np.zeros((ROWS, COLS, 4), dtype=np.uint8), aspect="auto",
                          interpolation="nearest", animated=animated, zorder=3)
        ax.set(xticks=[], yticks=[])
        return image, ax.set_title("pool", fontsize=12, animated=animated)

    def update(self, data):
        for (image, title), key, text in zip((self.flat, self.paged), ("contiguous", "paged"),
                                             data["titles"], strict=True):
            image.set_data(RGBA[data[key]])
            title.set_text(text)
        flat_title, _ = data["titles"]
        return flat_title, data["contiguous"].tobytes()  # the still part: the contiguous pool


def paged_cache_explorer() -> Explorer:
    """Workload × block size: what fits in one pool, contiguous against paged."""
    return Explorer(
        "Contiguous vs paged K/V cache",
        [
            Control("workload", "requests", WORKLOADS, default="short chats"),
            Control("block_size", "block size", BLOCK_SIZES, default=16),
        ],
        paged_cache_frame,
        PagedCacheView(),
        caption=(
            "One pool of 8,192 K/V slots; 400 requests wait in order. Each colour is one "
            "request's tokens, grey is memory taken but unused, white is free. Contiguous: "
            "each request reserves 2,048 slots; paged: blocks as it grows."
        ),
    )
