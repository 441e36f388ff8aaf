"""Kept so that older imports (``attention_qa.checks.caches``) still work: its checkers now
live in one module per chapter (see ``attention_qa.checks``)."""

from attention_qa.checks.common import _first_slip, _number, as_number
from attention_qa.checks.q27 import MLA_CACHE_SLIPS, check_mla_cache_bytes, mla_cache_variant
from attention_qa.checks.q29 import BLOCKS_SLIPS, blocks_variant, check_blocks_needed
from attention_qa.checks.q33 import INTENSITY_SLIPS, check_decode_intensity, intensity_variant

__all__ = [
    "MLA_CACHE_SLIPS",
    "mla_cache_variant",
    "check_mla_cache_bytes",
    "BLOCKS_SLIPS",
    "blocks_variant",
    "check_blocks_needed",
    "INTENSITY_SLIPS",
    "intensity_variant",
    "check_decode_intensity",
    "as_number",
    "_number",
    "_first_slip",
]
