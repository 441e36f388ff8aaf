"""q34's explorer: acceptance rate α and draft cost → what speculative decoding gains.

For each draft length γ the panel draws the expected tokens per target pass,
(1 − α^(γ+1)) / (1 − α), and the speed-up once the γ draft passes are paid for, each
costing ``cost`` of a target pass (Leviathan et al., 2023, Theorem 3.8). Like that theorem
it assumes a target pass over γ + 1 tokens takes as long as one over a single token (§3.3),
true only while the pass stays memory-bound (the chapter computes when). The lengths drawn,
0 to 20, hold the best γ of every setting of the panel (tested). Below, ten sampled steps with
γ = 4 on a toy target and draft that agree on mass α (``speculative.toy_pair``): kept
drafts, the token resampled at a rejection, and the bonus token when all four were kept.
"""

from attention_qa.panel import Control, Explorer, Frame, View
from attention_qa.panel.palette import BLUE, GREEN, GREY, PURPLE, RED, WHITE, YELLOW
from attention_qa.speculative import expected_tokens_per_step, sampled_steps, speedup

ALPHAS = (0.5, 0.6, 0.7, 0.8, 0.9)
COSTS = (0.02, 0.05, 0.1, 0.2, 0.5)
GAMMAS = tuple(range(0, 21))
SAMPLED_GAMMA, SAMPLED_STEPS = 4, 10
COLOURS = {"accepted": BLUE, "resampled": RED, "bonus": YELLOW}


def speculative_frame(alpha: float, cost: float) -> Frame:
    tokens = [expected_tokens_per_step(alpha, g) for g in GAMMAS]
    gains = [speedup(alpha, g, cost) for g in GAMMAS]
    best = max(GAMMAS, key=lambda g: gains[g])
    steps = sampled_steps(alpha, SAMPLED_GAMMA, SAMPLED_STEPS, seed=34)
    emitted = sum(len(s) for s in steps)
    figures = {
        "best draft length γ": str(best),
        "speed-up at the best γ": f"{gains[best]:.2f}×",
        f"expected tokens per target pass at γ = {SAMPLED_GAMMA}":
            f"{tokens[SAMPLED_GAMMA]:.2f}",
        f"sampled: tokens in {SAMPLED_STEPS} target passes": str(emitted),
    }
    return Frame(data={"tokens": tokens, "gains": gains, "best": best, "steps": steps},
                 figures=figures)


class GainView(View):
    figsize = (6.4, 4.2)

    def setup(self, fig):
        ax, strip = fig.subplots(2, 1, height_ratios=(2.2, 1))
        (self.tokens,) = ax.plot(GAMMAS, [1] * len(GAMMAS), marker="o", ms=4, color=BLUE,
                                 animated=True, label="tokens per target pass")
        (self.gains,) = ax.plot(GAMMAS, [1] * len(GAMMAS), marker="s", ms=4, color=GREEN,
                                animated=True, label="speed-up after the draft's cost")
        (self.best,) = ax.plot([0], [1], marker="*", ms=14, color=PURPLE, linestyle="",
                               animated=True)
        ax.axhline(1, color=GREY, lw=1)
        ax.set(xlabel="draft length γ", ylim=(0, 11), xticks=GAMMAS[::2])
        ax.legend(loc="upper left", frameon=False)
        width = SAMPLED_GAMMA + 1
        self.cells = [[strip.bar(step, 0.9, bottom=slot, width=0.9, color=WHITE,
                                 animated=True)[0] for slot in range(width)]
                      for step in range(SAMPLED_STEPS)]
        strip.set(xlim=(-0.6, SAMPLED_STEPS - 0.4), ylim=(0, width), yticks=[],
                  xticks=range(SAMPLED_STEPS), xlabel=f"target pass (γ = {SAMPLED_GAMMA}): "
                  "blue kept, red resampled, yellow bonus")

    def update(self, data):
        self.tokens.set_ydata(data["tokens"])
        self.gains.set_ydata(data["gains"])
        self.best.set_data([data["best"]], [data["gains"][data["best"]]])
        for step, outcome in zip(self.cells, data["steps"], strict=True):
            for slot, cell in enumerate(step):
                cell.set_color(COLOURS[outcome[slot]] if slot < len(outcome) else WHITE)


def speculative_explorer() -> Explorer:
    """α × draft cost → tokens per target pass and speed-up over γ, and a sampled run."""
    return Explorer(
        "Speculative decoding: acceptance rate, draft cost and draft length",
        [
            Control("alpha", "acceptance rate α", ALPHAS, default=0.8),
            Control("cost", "draft pass / target pass", COSTS, default=0.05),
        ],
        speculative_frame,
        GainView(),
        caption=(
            "Blue: tokens each target pass yields, (1 − α^(γ+1)) / (1 − α). Green: the "
            "speed-up after paying γ draft passes, if a target pass over γ + 1 tokens costs "
            "what one over a single token does (memory-bound decoding); the star marks the "
            "best γ. Below, ten sampled target passes with γ = 4: each column is what one "
            "pass emitted."
        ),
    )
