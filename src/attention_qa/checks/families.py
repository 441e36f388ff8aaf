"""Kept so that older imports (``attention_qa.checks.families``) still work: its checkers now
live in one module per chapter (see ``attention_qa.checks``)."""

from attention_qa.checks.q23 import CLIP_SLIPS, check_clip_logits, clip_variant

__all__ = ["CLIP_SLIPS", "clip_variant", "check_clip_logits"]
