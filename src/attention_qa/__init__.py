"""Shared helpers for the Attention Q&A book.

Each module holds one idea; notebooks import what they need, for example
``from attention_qa.attention import scaled_dot_product_attention``.
"""

__version__ = "0.1.0"


def hash_source(digest) -> None:
    """Feed every module of the package and its stored data, by name and content, into
    ``digest`` (a hashlib object): what a model trained once and a frame the build keeps
    depend on."""
    from pathlib import Path

    root = Path(__file__).parent
    for path in sorted([*root.rglob("*.py"), *root.glob("data/*.json")]):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes())
