"""Kept so that older imports (``attention_qa.checks.attention``) still work: its checkers now
live in one module per chapter (see ``attention_qa.checks``)."""

from attention_qa.checks.q01 import POOLING_SLIPS, check_pooling_weights, pooling_variant
from attention_qa.checks.q02 import _shape_cases, check_output_shape
from attention_qa.checks.q03 import ATTEND_ONE_SLIPS, attend_one_variant, check_attend_one
from attention_qa.checks.q04 import _softmax_jacobian_reference, check_softmax_jacobian
from attention_qa.checks.q05 import ADDITIVE_SLIPS, additive_variant, check_additive_scores
from attention_qa.checks.q06 import (
    ATTENTION_SLIPS,
    _attention_cases,
    _attention_output_variant,
    _axis_name,
    attention_variant,
    check_attention,
)

__all__ = [
    "_softmax_jacobian_reference",
    "check_softmax_jacobian",
    "pooling_variant",
    "POOLING_SLIPS",
    "check_pooling_weights",
    "_shape_cases",
    "check_output_shape",
    "attend_one_variant",
    "ATTEND_ONE_SLIPS",
    "check_attend_one",
    "ADDITIVE_SLIPS",
    "additive_variant",
    "check_additive_scores",
    "ATTENTION_SLIPS",
    "attention_variant",
    "_attention_cases",
    "_axis_name",
    "_attention_output_variant",
    "check_attention",
]
