"""Kept for older imports: the static panel now lives in ``attention_qa.panel.static``."""

from attention_qa.panel.core import escape, figures_html
from attention_qa.panel.static import b64, frames_payload, static_panel

__all__ = ["b64", "escape", "figures_html", "frames_payload", "static_panel"]
