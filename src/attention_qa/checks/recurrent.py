"""Kept so that older imports (``attention_qa.checks.recurrent``) still work: its checkers now
live in one module per chapter (see ``attention_qa.checks``)."""

from attention_qa.checks.q35 import CASES, SCAN_SLIPS, check_selective_scan, scan_case, scan_variant

__all__ = ["SCAN_SLIPS", "scan_variant", "scan_case", "CASES", "check_selective_scan"]
