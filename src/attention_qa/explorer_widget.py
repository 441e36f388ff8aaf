"""Kept for older imports: the live panel now lives in ``attention_qa.panel.live``."""

from attention_qa.panel.live import build_widget

__all__ = ["build_widget"]
