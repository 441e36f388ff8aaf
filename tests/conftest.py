"""Fixtures shared by the unit tests."""

import pytest
import torch


@pytest.fixture(scope="module")
def one_thread():
    """Run a module's tests on one thread: its tensors are tiny, and extra threads only
    contend for the shared CPU cores."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
