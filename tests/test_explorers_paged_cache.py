"""q29's explorer: the pictures and figures are the pool's real occupancy."""

import numpy as np

from attention_qa.explorers.paged_cache import (
    BLOCK_SIZES,
    POOL_SLOTS,
    WASTE,
    paged_cache_explorer,
    pool_picture,
)
from attention_qa.kv_cache import MAX_LEN, WORKLOADS, request_lengths, requests_that_fit


def test_lengths_are_fixed_and_within_the_maximum():
    for workload in WORKLOADS:
        lengths = request_lengths(workload)
        assert lengths == request_lengths(workload)
        assert all(1 <= n <= MAX_LEN for n in lengths)
    assert set(request_lengths("all 100 tokens")) == {100}


def test_picture_counts_tokens_and_waste_of_the_admitted_requests():
    lengths = request_lengths("mixed")
    for block_size in BLOCK_SIZES:
        picture = pool_picture(lengths, block_size)
        fitted = requests_that_fit(lengths, POOL_SLOTS // block_size, block_size)
        tokens = int((picture >= 2).sum())
        assert tokens == sum(lengths[:fitted])
        assert int((picture == WASTE).sum()) < fitted * block_size  # < one block each


def test_paging_fits_more_and_wastes_less_than_reserving():
    explorer = paged_cache_explorer()
    for workload in WORKLOADS:
        frame = explorer.frame(workload=workload, block_size=16)
        paged = int(frame.figures["paged: requests that fit"])
        flat = int(frame.figures["contiguous (2,048 reserved each): requests that fit"])
        assert flat == POOL_SLOTS // MAX_LEN and paged > flat
    same = explorer.frame(workload="mixed", block_size=MAX_LEN)  # one block = the reservation
    assert np.array_equal(same.data["paged"], same.data["contiguous"])


def test_the_contiguous_pool_is_kept_per_workload_and_looks_as_drawn_afresh():
    """The contiguous pool is drawn with the still part, once per workload."""
    import io

    from PIL import Image

    def pixels(explorer, settings):
        return np.asarray(Image.open(io.BytesIO(explorer.render(explorer.frame(**settings)))))

    used = paged_cache_explorer()
    for block_size in BLOCK_SIZES[:2]:
        for workload in WORKLOADS:
            used.render(used.frame(workload=workload, block_size=block_size))
    assert len(used._stills) == len(WORKLOADS)
    for workload in WORKLOADS:
        settings = dict(workload=workload, block_size=BLOCK_SIZES[-1])
        assert np.array_equal(pixels(used, settings), pixels(paged_cache_explorer(), settings))
