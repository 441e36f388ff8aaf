"""Kept so that older imports (``attention_qa.checks.vision``) still work: its checkers now
live in one module per chapter (see ``attention_qa.checks``)."""

from attention_qa.checks.q37 import (
    WINDOW_SLIPS,
    _by_hand,
    check_window_attention,
    window_attention_variant,
)

__all__ = ["WINDOW_SLIPS", "window_attention_variant", "_by_hand", "check_window_attention"]
