"""Kept for older imports: the static panel now lives in ``attention_qa.panel.static``."""

from attention_qa.panel.core import escape, figures_html
from attention_qa.panel.static import data_url, frames_payload, static_panel

__all__ = ["data_url", "escape", "figures_html", "frames_payload", "static_panel"]
