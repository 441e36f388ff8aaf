"""Kept so that older imports (``attention_qa.checks.blocks``) still work: its checkers now
live in one module per chapter (see ``attention_qa.checks``)."""

from attention_qa.checks.q15 import SINUSOIDAL_SLIPS, check_sinusoidal_encoding, sinusoidal_variant
from attention_qa.checks.q16 import EMBEDDING_SLIPS, check_embedding, embedding_variant
from attention_qa.checks.q17 import LAYER_NORM_SLIPS, check_layer_norm, layer_norm_variant
from attention_qa.checks.q18 import FEED_FORWARD_SLIPS, check_feed_forward, feed_forward_variant
from attention_qa.checks.q19 import LAYER_FLOPS_SLIPS, check_layer_flops, layer_flops_variant
from attention_qa.checks.q26 import RMS_NORM_SLIPS, check_rms_norm, rms_norm_variant

__all__ = [
    "SINUSOIDAL_SLIPS",
    "sinusoidal_variant",
    "check_sinusoidal_encoding",
    "EMBEDDING_SLIPS",
    "embedding_variant",
    "check_embedding",
    "LAYER_NORM_SLIPS",
    "layer_norm_variant",
    "check_layer_norm",
    "FEED_FORWARD_SLIPS",
    "feed_forward_variant",
    "check_feed_forward",
    "LAYER_FLOPS_SLIPS",
    "layer_flops_variant",
    "check_layer_flops",
    "RMS_NORM_SLIPS",
    "rms_norm_variant",
    "check_rms_norm",
]
