"""Kept so that older imports (``attention_qa.checks.anatomy``) still work: its checkers now
live in one module per chapter (see ``attention_qa.checks``)."""

from attention_qa.checks.q38 import (
    LLAMA_PARAMETER_SLIPS,
    check_llama_parameters,
    llama_parameters_variant,
)

__all__ = ["LLAMA_PARAMETER_SLIPS", "llama_parameters_variant", "check_llama_parameters"]
