"""Kept for older imports: the PNG encoder now lives in ``attention_qa.panel.png``."""

from attention_qa.panel.png import encode_rgb

__all__ = ["encode_rgb"]
