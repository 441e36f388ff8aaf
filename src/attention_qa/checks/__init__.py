"""Automatic checkers for the book's exercises, one module per chapter: ``qNN.py`` holds the
checker of chapter NN's exercise (``check_*``), its reference cases, its slip model (the public
``*_variant`` function) and the messages of its slips (``*_SLIPS``). Chapter 12 reuses q10's
``check_multihead``. Every ``check_*`` is exported here, so a chapter imports
``from attention_qa.checks import check_x``.

What the checkers share lives in two modules:

- ``common.py``: the learner's way in and the comparison. ``call_learner`` runs the learner's
  function (saying which case it failed on) and notes the least precise floating dtype its
  torch calls computed what it returned from (a throwaway tensor beside it does not count);
  ``as_answer`` takes the answer as a tensor, a NumPy array or number, a list or tuple of
  numbers, a Python number, or an (output, weights) pair where only the output is asked
  for; ``require_shape`` and ``as_number`` / ``as_pair`` check its form; ``close`` compares
  in float64 at the precision of the less precise of the learner's inputs, the dtype it
  computed in and its answer (a float64 answer whose every value is a float32 number,
  float32 work in NumPy cast at the end, counts as float32); ``as_pair`` and
  ``whole_numbers`` refuse a count with a fractional part; ``diagnose`` names the first
  known slip an answer matches, and ``first_slip`` does the same for exact (whole-number)
  answers.
- ``watch.py``: watching the learner's torch calls (PyTorch's function and dispatch modes):
  ``Precision`` (the least precise dtype along what was returned, for every checker), and
  for the exercises about cost ``Work`` and ``NoScoreMatrix`` (q20's linear attention: the
  work at two sizes, an n × m tensor) and ``BlockReads`` (q21's online softmax: no
  reduction, einsum or norm over more than one block of scores feeds what is returned, the
  scores' columns followed through unsqueeze and transposes). They see only PyTorch's
  calls, so q20 and q21 refuse work done in NumPy or plain Python, naming it.

``tests/test_checks_forms.py`` tries every chapter's checker with its solution cell,
independent right answers in every form, and wrong ones.

A checker returns None when every case agrees; otherwise it raises ``AssertionError`` whose
message names the likely slip, so the feedback reads like a teacher's, not a diff. A function
that raises ``NotImplementedError`` (a student scaffold) is let through as is.

The modules named after parts of the book (``attention``, ``blocks``, ``masks`` …) only
re-export the chapter modules' names, for older imports.
"""

from attention_qa.checks.common import call_learner, close, diagnose, require_shape, tolerance
from attention_qa.checks.q01 import check_pooling_weights
from attention_qa.checks.q02 import check_output_shape
from attention_qa.checks.q03 import check_attend_one
from attention_qa.checks.q04 import check_softmax_jacobian
from attention_qa.checks.q05 import check_additive_scores
from attention_qa.checks.q06 import check_attention
from attention_qa.checks.q07 import check_attention_mask
from attention_qa.checks.q08 import check_shift_right
from attention_qa.checks.q09 import check_greedy_decode
from attention_qa.checks.q10 import check_multihead
from attention_qa.checks.q11 import check_attention_flops
from attention_qa.checks.q13 import check_cross_attention
from attention_qa.checks.q14 import check_repeat_kv
from attention_qa.checks.q15 import check_sinusoidal_encoding
from attention_qa.checks.q16 import check_embedding
from attention_qa.checks.q17 import check_layer_norm
from attention_qa.checks.q18 import check_feed_forward
from attention_qa.checks.q19 import check_layer_flops
from attention_qa.checks.q20 import check_linear_attention
from attention_qa.checks.q21 import check_online_softmax
from attention_qa.checks.q22 import check_previous_token_score
from attention_qa.checks.q23 import check_clip_logits
from attention_qa.checks.q24 import check_top_k_gates
from attention_qa.checks.q25 import check_rope
from attention_qa.checks.q26 import check_rms_norm
from attention_qa.checks.q27 import check_mla_cache_bytes
from attention_qa.checks.q28 import check_nucleus_probs
from attention_qa.checks.q29 import check_blocks_needed
from attention_qa.checks.q30 import check_sink_window_mask
from attention_qa.checks.q31 import check_most_frequent_pair
from attention_qa.checks.q32 import check_prefix_lm_mask
from attention_qa.checks.q33 import check_decode_intensity
from attention_qa.checks.q34 import check_acceptance_rate
from attention_qa.checks.q35 import check_selective_scan
from attention_qa.checks.q36 import check_merge_partials
from attention_qa.checks.q37 import check_window_attention
from attention_qa.checks.q38 import check_llama_parameters
from attention_qa.checks.q39 import check_swiglu
from attention_qa.checks.q40 import check_clip_by_global_norm
from attention_qa.checks.q41 import check_masked_lm_loss
from attention_qa.checks.q42 import check_xl_attention_mask
from attention_qa.checks.q43 import check_fake_quantize
from attention_qa.checks.q44 import check_continuous_schedule
from attention_qa.checks.q45 import check_gated_cross_attention
from attention_qa.checks.q46 import check_glm_positions

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
    "check_swiglu",
    "check_clip_by_global_norm",
    "check_xl_attention_mask",
    "check_masked_lm_loss",
    "check_fake_quantize",
    "check_continuous_schedule",
    "check_gated_cross_attention",
    "check_glm_positions",
]
