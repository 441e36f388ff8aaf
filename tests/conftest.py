"""Fixtures shared by the unit tests."""

import pytest

from attention_qa.training import single_thread


@pytest.fixture(scope="module")
def one_thread():
    """Run a module's tests on one thread: its tensors are tiny, and extra threads only
    contend for the shared CPU cores."""
    with single_thread():
        yield
