"""Kept so that older imports (``attention_qa.checks.parallel``) still work: its checkers now
live in one module per chapter (see ``attention_qa.checks``)."""

from attention_qa.checks.q36 import (
    LSE_SLIPS,
    MERGE_SLIPS,
    OVERFLOW_HINT,
    check_merge_partials,
    lse_variant,
    merge_cases,
    merge_variant,
)

__all__ = [
    "MERGE_SLIPS",
    "LSE_SLIPS",
    "OVERFLOW_HINT",
    "merge_variant",
    "lse_variant",
    "merge_cases",
    "check_merge_partials",
]
