"""The checker of q38's exercise: ``check_llama_parameters``."""

from __future__ import annotations

from typing import Callable

from attention_qa.checks.common import _number, call_learner, first_slip

# q_width_d_model comes first: on the Gemma-shaped case (MHA, num_heads · d_head ≠ d_model)
# it gives the same number as kv_full, which the GQA cases catch first.
LLAMA_PARAMETER_SLIPS = {
    "q_width_d_model": (
        "Q and the output projection are counted as d_model × d_model: their width is "
        "num_heads · d_head, which need not equal d_model (Gemma-7B: 16 × 256 = 4096 vs 3072)"
    ),
    "kv_full": (
        "K and V are counted as d_model × d_model like Q: with GQA or MQA each is only "
        "d_model × (num_kv_heads · d_head)"
    ),
    "two_matrices": (
        "the feed-forward network has two matrices here: SwiGLU has three (gate, up and "
        "down), 3 · d_model · d_ff"
    ),
    "no_norms": (
        "the RMSNorm weights are missing: two of d_model per block, and one final norm"
    ),
    "no_final_norm": "the final norm before the output head (d_model weights) is missing",
    "head_when_tied": (
        "the output head is counted although it is tied: it is the embedding matrix itself, "
        "so it adds nothing"
    ),
    "no_head": (
        "the output head is missing: an untied head is its own vocab × d_model matrix"
    ),
}


def llama_parameters_variant(num_layers, d_model, num_heads, num_kv_heads, d_head, d_ff,
                             vocab, tied, bug: str | None = None) -> int:
    """The weights of a LLaMA-style model (RMSNorm, SwiGLU, no biases), or one slip's."""
    d, q = d_model, num_heads * d_head
    kv = d * d if bug == "kv_full" else d * num_kv_heads * d_head
    q_and_o = 2 * d * d if bug == "q_width_d_model" else 2 * d * q
    ffn = (2 if bug == "two_matrices" else 3) * d * d_ff
    norms = 0 if bug == "no_norms" else 2 * d
    block = q_and_o + 2 * kv + ffn + norms
    final = 0 if bug in ("no_norms", "no_final_norm") else d
    has_head = (not tied or bug == "head_when_tied") and bug != "no_head"
    return vocab * d + num_layers * block + final + (vocab * d if has_head else 0)


def check_llama_parameters(fn: Callable) -> None:
    """Check ``fn(num_layers, d_model, num_heads, num_kv_heads, d_head, d_ff, vocab, tied)``:
    every weight of a LLaMA-style decoder (token embedding; per block Q, K, V, O, a SwiGLU
    feed-forward network and two RMSNorms; a final RMSNorm; an output head unless tied).
    Any one real number is accepted (Python, numpy, a one-element tensor); a string is not."""
    cases = [
        ("a toy: 2 layers, d_model=8, 2 heads and 1 K/V head of 4, d_ff=16, vocab=10, untied",
         (2, 8, 2, 1, 4, 16, 10, False)),
        ("a toy, tied: 3 layers, d_model=6, 3 heads and 3 K/V heads of 2, d_ff=12, vocab=7",
         (3, 6, 3, 3, 2, 12, 7, True)),
        ("Llama-2-7B: 32 layers, d_model=4096, 32 heads of 128, 32 K/V heads, d_ff=11008, "
         "vocab=32000, untied", (32, 4096, 32, 32, 128, 11008, 32000, False)),
        ("Llama-3-8B: 32 layers, d_model=4096, 32 heads of 128, 8 K/V heads, d_ff=14336, "
         "vocab=128256, untied", (32, 4096, 32, 8, 128, 14336, 128256, False)),
        ("a Gemma-7B-shaped block with SwiGLU: 28 layers, d_model=3072, 16 heads of 256, "
         "16 K/V heads, d_ff=24576, vocab=256000, tied",
         (28, 3072, 16, 16, 256, 24576, 256000, True)),
    ]
    for case, args in cases:
        expected = llama_parameters_variant(*args)
        got = _number(call_learner(fn, case, *args), case)
        if got == expected:
            continue
        first_slip(got, case, LLAMA_PARAMETER_SLIPS,
                    lambda bug, args=args: llama_parameters_variant(*args, bug=bug), expected)
        raise AssertionError(
            f"on {case}, got {got:,} weights but the model has {expected:,}: embedding + "
            f"layers · (Q, K, V, O + 3 · d_model · d_ff + 2 · d_model) + d_model + the head "
            f"unless tied"
        )
