"""Kept for older imports: the panel engine now lives in ``attention_qa.panel``."""

from attention_qa.panel import BUILD_ENV, Control, Explorer, Frame, InvalidSetting, View
from attention_qa.panel.core import DEFAULT_FRAME_BUDGET

__all__ = [
    "BUILD_ENV",
    "DEFAULT_FRAME_BUDGET",
    "Control",
    "Explorer",
    "Frame",
    "InvalidSetting",
    "View",
]
