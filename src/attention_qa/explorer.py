"""Kept for older imports: the panel engine now lives in ``attention_qa.panel``."""

from attention_qa.panel import *  # noqa: F403
from attention_qa.panel import __all__  # noqa: F401
