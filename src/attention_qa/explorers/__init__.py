"""The book's explorers, one module per panel; each builder returns an Explorer.

``BY_CHAPTER`` maps each page to the builders it shows, in book order; tests and
benchmarks walk it, so a new explorer is covered once it is listed here.

Nothing is imported until it is asked for: a chapter that imports its one explorer
(``from attention_qa.explorers.saturation import saturation_explorer``, or
``from attention_qa.explorers import saturation_explorer``) loads that module alone, not
the other forty-odd and their lesson modules, so each notebook's kernel starts faster;
``BY_CHAPTER`` imports them all.
"""

import importlib

# builder → the module that defines it
BUILDERS = {
    "activation_explorer": "activations",
    "anatomy_explorer": "anatomy",
    "attention_bug_explorer": "attention_bugs",
    "bert_bart_explorer": "bert_bart",
    "budget_explorer": "inference_budget",
    "causal_leak_explorer": "causal_leak",
    "chinese_models_explorer": "chinese_models",
    "context_budget_explorer": "context_budget",
    "context_parallel_explorer": "context_parallel",
    "cross_attention_explorer": "cross_attention",
    "decode_step_explorer": "decode_steps",
    "decoding_explorer": "decoding_filters",
    "ffn_share_explorer": "ffn_share",
    "head_explorer": "heads",
    "head_layout_explorer": "head_layout",
    "head_maps_explorer": "head_maps",
    "head_split_explorer": "head_split",
    "image_fusion_explorer": "image_fusion",
    "induction_explorer": "induction_heads",
    "kv_cache_explorer": "kv_cache",
    "latent_cache_explorer": "latent_cache",
    "layer_costs_explorer": "layer_costs",
    "mask_explorer": "masks",
    "model_family_explorer": "model_families",
    "modern_block_explorer": "modern_block",
    "moe_routing_explorer": "moe_routing",
    "norm_concentration_explorer": "norm_concentration",
    "objective_explorer": "objectives",
    "online_softmax_explorer": "online_softmax",
    "paged_cache_explorer": "paged_cache",
    "playground_explorer": "playground",
    "pooling_explorer": "pooling",
    "position_schemes_explorer": "position_schemes",
    "positional_explorer": "positional",
    "quantisation_explorer": "quantisation",
    "recurrence_explorer": "recurrence",
    "rope_explorer": "rope",
    "saturation_explorer": "saturation",
    "score_function_explorer": "score_functions",
    "serving_explorer": "serving",
    "shapes_explorer": "shapes",
    "sparse_pattern_explorer": "sparse_patterns",
    "speculative_explorer": "speculative",
    "step_explorer": "step_by_step",
    "streaming_explorer": "long_context",
    "token_explorer": "tokens",
    "training_memory_explorer": "training_recipe",
    "warmup_explorer": "training_recipe",
    "weight_tying_explorer": "weight_tying",
    "window_explorer": "windows",
}

# page → the builders it shows, in book order
CHAPTERS = {
    "playground": ["playground_explorer"],
    "q01": ["pooling_explorer"],
    "q02": ["shapes_explorer"],
    "q03": ["step_explorer"],
    "q04": ["saturation_explorer"],
    "q05": ["score_function_explorer"],
    "q06": ["attention_bug_explorer"],
    "q07": ["mask_explorer"],
    "q08": ["causal_leak_explorer"],
    "q09": ["decode_step_explorer"],
    "q10": ["head_maps_explorer"],
    "q11": ["head_split_explorer"],
    "q12": ["head_layout_explorer"],
    "q13": ["cross_attention_explorer"],
    "q14": ["kv_cache_explorer"],
    "q15": ["positional_explorer"],
    "q16": ["weight_tying_explorer"],
    "q17": ["norm_concentration_explorer"],
    "q18": ["ffn_share_explorer"],
    "q19": ["layer_costs_explorer"],
    "q20": ["sparse_pattern_explorer"],
    "q21": ["online_softmax_explorer"],
    "q22": ["head_explorer", "induction_explorer"],
    "q23": ["model_family_explorer"],
    "q24": ["moe_routing_explorer"],
    "q25": ["rope_explorer", "position_schemes_explorer"],
    "q26": ["modern_block_explorer"],
    "q27": ["latent_cache_explorer"],
    "q28": ["decoding_explorer"],
    "q29": ["paged_cache_explorer"],
    "q30": ["streaming_explorer"],
    "q31": ["token_explorer"],
    "q32": ["objective_explorer"],
    "q33": ["budget_explorer"],
    "q34": ["speculative_explorer"],
    "q35": ["recurrence_explorer"],
    "q36": ["context_parallel_explorer"],
    "q37": ["window_explorer"],
    "q38": ["anatomy_explorer"],
    "q39": ["activation_explorer"],
    "q40": ["warmup_explorer", "training_memory_explorer"],
    "q41": ["bert_bart_explorer"],
    "q42": ["context_budget_explorer"],
    "q43": ["quantisation_explorer"],
    "q44": ["serving_explorer"],
    "q45": ["image_fusion_explorer"],
    "q46": ["chinese_models_explorer"],
}

__all__ = ["BY_CHAPTER", *sorted(BUILDERS)]


def __getattr__(name: str):
    if name == "BY_CHAPTER":
        value = {page: [__getattr__(b) for b in builders] for page, builders in CHAPTERS.items()}
    elif name in BUILDERS:
        value = getattr(importlib.import_module(f"{__name__}.{BUILDERS[name]}"), name)
    elif name in BUILDERS.values():  # a panel's module itself, as attention_qa.explorers.<name>
        value = importlib.import_module(f"{__name__}.{name}")
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value  # asked for once
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
