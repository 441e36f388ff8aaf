"""Kept so that older imports (``attention_qa.checks.tokens``) still work: its checkers now
live in one module per chapter (see ``attention_qa.checks``)."""

from attention_qa.checks.q31 import (
    PAIR_SLIPS,
    _as_pair,
    _cases,
    _the_slip,
    check_most_frequent_pair,
    pair_variant,
)

__all__ = [
    "PAIR_SLIPS",
    "pair_variant",
    "_cases",
    "check_most_frequent_pair",
    "_the_slip",
    "_as_pair",
]
