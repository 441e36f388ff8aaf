"""Kept so that older imports (``attention_qa.checks.positional``) still work: its checkers now
live in one module per chapter (see ``attention_qa.checks``)."""

from attention_qa.checks.q25 import ROPE_SLIPS, check_rope, rope_variant

__all__ = ["ROPE_SLIPS", "rope_variant", "check_rope"]
