"""The book's explorers, one module per chapter's panel; each builder returns an Explorer."""

from attention_qa.explorers.saturation import saturation_explorer

__all__ = ["saturation_explorer"]
