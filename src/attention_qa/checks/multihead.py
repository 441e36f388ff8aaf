"""Kept so that older imports (``attention_qa.checks.multihead``) still work: its checkers now
live in one module per chapter (see ``attention_qa.checks``)."""

from attention_qa.checks.q10 import (
    _MHA_LAYERS,
    MASK_LAYOUTS,
    MHA_SLIPS,
    _learner_layers,
    _multihead_cases,
    check_multihead,
    mha_variant,
)
from attention_qa.checks.q11 import FLOPS_SLIPS, check_attention_flops, flops_variant
from attention_qa.checks.q13 import (
    CROSS_SLIPS,
    _cross_output_variant,
    check_cross_attention,
    cross_variant,
)
from attention_qa.checks.q14 import REPEAT_KV_SLIPS, check_repeat_kv, repeat_kv_variant

__all__ = [
    "_MHA_LAYERS",
    "MHA_SLIPS",
    "mha_variant",
    "_multihead_cases",
    "MASK_LAYOUTS",
    "_learner_layers",
    "check_multihead",
    "flops_variant",
    "FLOPS_SLIPS",
    "check_attention_flops",
    "CROSS_SLIPS",
    "cross_variant",
    "_cross_output_variant",
    "check_cross_attention",
    "REPEAT_KV_SLIPS",
    "repeat_kv_variant",
    "check_repeat_kv",
]
