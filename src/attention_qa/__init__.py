"""Shared helpers for the Attention Q&A book.

Each module holds one idea; notebooks import what they need, for example
``from attention_qa.attention import scaled_dot_product_attention``.
"""

__version__ = "0.1.0"
