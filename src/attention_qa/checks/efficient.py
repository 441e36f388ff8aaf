"""Kept so that older imports (``attention_qa.checks.efficient``) still work: its checkers now
live in one module per chapter (see ``attention_qa.checks``)."""

from attention_qa.checks.q20 import (
    LINEAR_SLIPS,
    _NoScoreMatrix,
    check_linear_attention,
    linear_attention_variant,
)
from attention_qa.checks.q21 import (
    _COVER,
    _DIM_AT_1,
    _DIM_AT_2,
    _FORBIDDEN,
    _LAST_BY_DEFAULT,
    _PRODUCTS,
    ONLINE_SLIPS,
    _as_stat,
    _BlockReads,
    _reduces_last_dim,
    check_online_softmax,
    online_softmax_trace_variant,
    online_softmax_variant,
)
from attention_qa.checks.q22 import (
    PREVIOUS_TOKEN_SLIPS,
    check_previous_token_score,
    previous_token_variant,
)
from attention_qa.checks.watch import _tensors

__all__ = [
    "linear_attention_variant",
    "LINEAR_SLIPS",
    "_tensors",
    "_NoScoreMatrix",
    "check_linear_attention",
    "online_softmax_trace_variant",
    "online_softmax_variant",
    "ONLINE_SLIPS",
    "_FORBIDDEN",
    "_DIM_AT_1",
    "_DIM_AT_2",
    "_LAST_BY_DEFAULT",
    "_PRODUCTS",
    "_COVER",
    "_reduces_last_dim",
    "_BlockReads",
    "_as_stat",
    "check_online_softmax",
    "PREVIOUS_TOKEN_SLIPS",
    "previous_token_variant",
    "check_previous_token_score",
]
