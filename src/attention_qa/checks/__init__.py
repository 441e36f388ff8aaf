"""Automatic checkers for the book's exercises, one module per part of the book.

A checker runs a learner's function on several cases against the package's reference.
It returns None when every case agrees; otherwise it raises ``AssertionError`` whose
message names the likely bug, so the feedback reads like a teacher's, not a diff. A
function that raises ``NotImplementedError`` (a student scaffold) is let through as is.

Every numeric checker compares with ``close``, at the precision of the learner's dtype, and
gives its feedback through ``diagnose``: the right answer, then each known slip (the public
``*_variant`` slip models and their ``*_SLIPS`` messages in each module), then NaN, then by
how much the answer is off.
"""

from attention_qa.checks.anatomy import check_llama_parameters
from attention_qa.checks.attention import (
    check_additive_scores,
    check_attend_one,
    check_attention,
    check_output_shape,
    check_pooling_weights,
    check_softmax_jacobian,
)
from attention_qa.checks.blocks import (
    check_embedding,
    check_feed_forward,
    check_layer_flops,
    check_layer_norm,
    check_rms_norm,
    check_sinusoidal_encoding,
)
from attention_qa.checks.caches import (
    check_blocks_needed,
    check_decode_intensity,
    check_mla_cache_bytes,
)
from attention_qa.checks.common import call_learner, close, diagnose, require_shape, tolerance
from attention_qa.checks.decoding import check_acceptance_rate, check_nucleus_probs
from attention_qa.checks.efficient import (
    check_linear_attention,
    check_online_softmax,
    check_previous_token_score,
)
from attention_qa.checks.families import check_clip_logits
from attention_qa.checks.masks import (
    check_attention_mask,
    check_greedy_decode,
    check_prefix_lm_mask,
    check_shift_right,
    check_sink_window_mask,
)
from attention_qa.checks.moe import check_top_k_gates
from attention_qa.checks.multihead import (
    check_attention_flops,
    check_cross_attention,
    check_multihead,
    check_repeat_kv,
)
from attention_qa.checks.parallel import check_merge_partials
from attention_qa.checks.positional import check_rope
from attention_qa.checks.recurrent import check_selective_scan
from attention_qa.checks.tokens import check_most_frequent_pair
from attention_qa.checks.vision import check_window_attention

__all__ = [
    "call_learner",
    "close",
    "diagnose",
    "require_shape",
    "tolerance",
    "check_softmax_jacobian",
    "check_pooling_weights",
    "check_output_shape",
    "check_attend_one",
    "check_additive_scores",
    "check_attention",
    "check_attention_mask",
    "check_shift_right",
    "check_greedy_decode",
    "check_nucleus_probs",
    "check_most_frequent_pair",
    "check_acceptance_rate",
    "check_prefix_lm_mask",
    "check_decode_intensity",
    "check_multihead",
    "check_attention_flops",
    "check_cross_attention",
    "check_repeat_kv",
    "check_sinusoidal_encoding",
    "check_embedding",
    "check_layer_norm",
    "check_feed_forward",
    "check_layer_flops",
    "check_rms_norm",
    "check_linear_attention",
    "check_online_softmax",
    "check_previous_token_score",
    "check_top_k_gates",
    "check_rope",
    "check_mla_cache_bytes",
    "check_blocks_needed",
    "check_clip_logits",
    "check_sink_window_mask",
    "check_selective_scan",
    "check_merge_partials",
    "check_window_attention",
    "check_llama_parameters",
]
