"""q28's explorer: what temperature, top-k and top-p do to one next-token distribution.

The logits are a fixed, made-up next-token distribution after "The cat sat on the". The
panel shows ``next_token_probs(logits, temperature, top_k, top_p)``, the distribution
``sample_next`` draws from (temperature as in Ackley, Hinton and Sejnowski, 1985; top-k as
in Fan, Lewis and Dauphin, 2018; top-p as in Holtzman et al., 2020), over the outline of
the plain softmax, and prints how many tokens survive and the entropy left.
"""

import torch

from attention_qa.decoding import LOGITS, TOKENS, entropy_bits, next_token_probs
from attention_qa.panel import Control, Explorer, Frame, View
from attention_qa.panel.palette import BLUE, INK_LIGHT

TEMPERATURES = (0, 0.5, 1, 1.5, 2)
TOP_KS = (0, 1, 2, 5, 10)  # 0: no top-k filter
TOP_PS = (1.0, 0.95, 0.9, 0.75, 0.5)  # 1: no top-p filter


def decoding_frame(temperature: float, top_k: int, top_p: float) -> Frame:
    probs = next_token_probs(LOGITS, temperature, top_k or None, top_p)  # (V,)
    kept = probs > 0
    figures = {
        "tokens kept": f"{int(kept.sum())} of {len(TOKENS)}",
        "entropy": f"{entropy_bits(probs).item():.2f} bits",
        "p(mat)": f"{probs[0].item():.2f}",
        "kept": ", ".join(t for t, k in zip(TOKENS, kept.tolist(), strict=True) if k),
    }
    return Frame(data=probs, figures=figures)


class DistributionView(View):
    figsize = (6.4, 3.0)

    def setup(self, fig):
        ax = fig.subplots()
        positions = range(len(TOKENS))
        plain = torch.softmax(LOGITS, dim=-1)
        self.bars = ax.bar(positions, [0.0] * len(TOKENS), color=BLUE, animated=True,
                           label="sampled from")
        ax.bar(positions, plain.tolist(), fill=False, edgecolor=INK_LIGHT, linestyle="--",
               label="softmax, T = 1")
        ax.set(xticks=positions, ylim=(0, 1), ylabel="probability",
               title='next token after "The cat sat on the"')
        ax.set_xticklabels(TOKENS, rotation=60, ha="right", rotation_mode="anchor")
        ax.legend(loc="upper right", frameon=False)

    def update(self, data):
        for bar, p in zip(self.bars, data.tolist(), strict=True):
            bar.set_height(p)


def decoding_explorer() -> Explorer:
    """temperature × top-k × top-p → the distribution sampled from, tokens kept, entropy."""
    return Explorer(
        "Temperature, top-k and top-p on one next-token distribution",
        [
            Control("temperature", "temperature T", TEMPERATURES, default=1),
            Control("top_k", "top-k", TOP_KS, default=0,
                    labels=("off", "1", "2", "5", "10")),
            Control("top_p", "top-p", TOP_PS, default=1.0,
                    labels=("off (1)", "0.95", "0.9", "0.75", "0.5")),
        ],
        decoding_frame,
        DistributionView(),
        caption=(
            "Dashed: the plain softmax of the logits. Blue: after dividing by T, keeping the "
            "top k, then the smallest set reaching probability p, and renormalising. "
            "T = 0 is greedy: all the mass on the most likely token."
        ),
    )
