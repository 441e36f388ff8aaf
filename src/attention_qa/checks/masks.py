"""Kept so that older imports (``attention_qa.checks.masks``) still work: its checkers now
live in one module per chapter (see ``attention_qa.checks``)."""

from attention_qa.checks.common import _compare_masks  # noqa: F401
from attention_qa.checks.q07 import MASK_SLIPS, check_attention_mask, mask_variant
from attention_qa.checks.q08 import check_shift_right
from attention_qa.checks.q09 import check_greedy_decode
from attention_qa.checks.q30 import SINK_WINDOW_SLIPS, check_sink_window_mask, sink_window_variant
from attention_qa.checks.q32 import PREFIX_SLIPS, check_prefix_lm_mask, prefix_mask_variant

__all__ = [
    "mask_variant",
    "MASK_SLIPS",
    "_compare_masks",
    "check_attention_mask",
    "check_shift_right",
    "check_greedy_decode",
    "sink_window_variant",
    "SINK_WINDOW_SLIPS",
    "check_sink_window_mask",
    "PREFIX_SLIPS",
    "prefix_mask_variant",
    "check_prefix_lm_mask",
]
