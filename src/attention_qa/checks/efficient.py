"""Kept so that older imports (``attention_qa.checks.efficient``) still work: its checkers now
live in one module per chapter (see ``attention_qa.checks``)."""

from attention_qa.checks.q20 import LINEAR_SLIPS, check_linear_attention, linear_attention_variant
from attention_qa.checks.q21 import (
    ONLINE_SLIPS,
    check_online_softmax,
    online_softmax_trace_variant,
    online_softmax_variant,
)
from attention_qa.checks.q22 import (
    PREVIOUS_TOKEN_SLIPS,
    check_previous_token_score,
    previous_token_variant,
)

__all__ = [
    "linear_attention_variant",
    "LINEAR_SLIPS",
    "check_linear_attention",
    "online_softmax_trace_variant",
    "online_softmax_variant",
    "ONLINE_SLIPS",
    "check_online_softmax",
    "PREVIOUS_TOKEN_SLIPS",
    "previous_token_variant",
    "check_previous_token_score",
]
