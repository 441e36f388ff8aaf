"""Kept so that older imports (``attention_qa.checks.decoding``) still work: its checkers now
live in one module per chapter (see ``attention_qa.checks``)."""

from attention_qa.checks.q28 import NUCLEUS_SLIPS, check_nucleus_probs, nucleus_variant
from attention_qa.checks.q34 import (
    ACCEPTANCE_SLIPS,
    EDGE_CASE,
    EDGE_ROWS,
    ZERO_HINT,
    acceptance_variant,
    check_acceptance_rate,
)

__all__ = [
    "NUCLEUS_SLIPS",
    "nucleus_variant",
    "check_nucleus_probs",
    "ACCEPTANCE_SLIPS",
    "acceptance_variant",
    "EDGE_ROWS",
    "EDGE_CASE",
    "ZERO_HINT",
    "check_acceptance_rate",
]
