"""Kept so that older imports (``attention_qa.checks.moe``) still work: its checkers now
live in one module per chapter (see ``attention_qa.checks``)."""

from attention_qa.checks.q24 import (
    TOP_K_GATES_SLIPS,
    _spaced_logits,
    check_top_k_gates,
    top_k_gates_variant,
)

__all__ = ["TOP_K_GATES_SLIPS", "top_k_gates_variant", "_spaced_logits", "check_top_k_gates"]
