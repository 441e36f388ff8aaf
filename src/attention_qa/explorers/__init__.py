"""The book's explorers, one module per panel; each builder returns an Explorer.

``BY_CHAPTER`` maps each page to the builders it shows, in book order; tests and
benchmarks walk it, so a new explorer is covered once it is listed here.
"""

from attention_qa.explorers.activations import activation_explorer
from attention_qa.explorers.anatomy import anatomy_explorer
from attention_qa.explorers.attention_bugs import attention_bug_explorer
from attention_qa.explorers.bert_bart import bert_bart_explorer
from attention_qa.explorers.causal_leak import causal_leak_explorer
from attention_qa.explorers.chinese_models import chinese_models_explorer
from attention_qa.explorers.context_budget import context_budget_explorer
from attention_qa.explorers.context_parallel import context_parallel_explorer
from attention_qa.explorers.cross_attention import cross_attention_explorer
from attention_qa.explorers.decode_steps import decode_step_explorer
from attention_qa.explorers.decoding_filters import decoding_explorer
from attention_qa.explorers.ffn_share import ffn_share_explorer
from attention_qa.explorers.head_layout import head_layout_explorer
from attention_qa.explorers.head_maps import head_maps_explorer
from attention_qa.explorers.head_split import head_split_explorer
from attention_qa.explorers.heads import head_explorer
from attention_qa.explorers.image_fusion import image_fusion_explorer
from attention_qa.explorers.induction_heads import induction_explorer
from attention_qa.explorers.inference_budget import budget_explorer
from attention_qa.explorers.kv_cache import kv_cache_explorer
from attention_qa.explorers.latent_cache import latent_cache_explorer
from attention_qa.explorers.layer_costs import layer_costs_explorer
from attention_qa.explorers.long_context import streaming_explorer
from attention_qa.explorers.masks import mask_explorer
from attention_qa.explorers.model_families import model_family_explorer
from attention_qa.explorers.modern_block import modern_block_explorer
from attention_qa.explorers.moe_routing import moe_routing_explorer
from attention_qa.explorers.norm_concentration import norm_concentration_explorer
from attention_qa.explorers.objectives import objective_explorer
from attention_qa.explorers.online_softmax import online_softmax_explorer
from attention_qa.explorers.paged_cache import paged_cache_explorer
from attention_qa.explorers.playground import playground_explorer
from attention_qa.explorers.pooling import pooling_explorer
from attention_qa.explorers.position_schemes import position_schemes_explorer
from attention_qa.explorers.positional import positional_explorer
from attention_qa.explorers.quantisation import quantisation_explorer
from attention_qa.explorers.recurrence import recurrence_explorer
from attention_qa.explorers.rope import rope_explorer
from attention_qa.explorers.saturation import saturation_explorer
from attention_qa.explorers.score_functions import score_function_explorer
from attention_qa.explorers.serving import serving_explorer
from attention_qa.explorers.shapes import shapes_explorer
from attention_qa.explorers.sparse_patterns import sparse_pattern_explorer
from attention_qa.explorers.speculative import speculative_explorer
from attention_qa.explorers.step_by_step import step_explorer
from attention_qa.explorers.tokens import token_explorer
from attention_qa.explorers.training_recipe import training_memory_explorer, warmup_explorer
from attention_qa.explorers.weight_tying import weight_tying_explorer
from attention_qa.explorers.windows import window_explorer

BY_CHAPTER = {
    "playground": [playground_explorer],
    "q01": [pooling_explorer],
    "q02": [shapes_explorer],
    "q03": [step_explorer],
    "q04": [saturation_explorer],
    "q05": [score_function_explorer],
    "q06": [attention_bug_explorer],
    "q07": [mask_explorer],
    "q08": [causal_leak_explorer],
    "q09": [decode_step_explorer],
    "q10": [head_maps_explorer],
    "q11": [head_split_explorer],
    "q12": [head_layout_explorer],
    "q13": [cross_attention_explorer],
    "q14": [kv_cache_explorer],
    "q15": [positional_explorer],
    "q16": [weight_tying_explorer],
    "q17": [norm_concentration_explorer],
    "q18": [ffn_share_explorer],
    "q19": [layer_costs_explorer],
    "q20": [sparse_pattern_explorer],
    "q21": [online_softmax_explorer],
    "q22": [head_explorer, induction_explorer],
    "q23": [model_family_explorer],
    "q24": [moe_routing_explorer],
    "q25": [rope_explorer, position_schemes_explorer],
    "q26": [modern_block_explorer],
    "q27": [latent_cache_explorer],
    "q28": [decoding_explorer],
    "q29": [paged_cache_explorer],
    "q30": [streaming_explorer],
    "q31": [token_explorer],
    "q32": [objective_explorer],
    "q33": [budget_explorer],
    "q34": [speculative_explorer],
    "q35": [recurrence_explorer],
    "q36": [context_parallel_explorer],
    "q37": [window_explorer],
    "q38": [anatomy_explorer],
    "q39": [activation_explorer],
    "q40": [warmup_explorer, training_memory_explorer],
    "q41": [bert_bart_explorer],
    "q42": [context_budget_explorer],
    "q43": [quantisation_explorer],
    "q44": [serving_explorer],
    "q45": [image_fusion_explorer],
    "q46": [chinese_models_explorer],
}

__all__ = ["BY_CHAPTER"] + sorted(b.__name__ for builders in BY_CHAPTER.values() for b in builders)
