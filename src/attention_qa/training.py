"""A tiny attention model to train on the CPU in seconds: learn which key a query points to.

Each example holds m distinct key tokens and one query token; the query's partner under a
fixed random pairing is among the keys, and the model must put its attention there. Only
the projections W_q and W_k learn, so the one thing that differs between runs is how the
scores q·k are scaled — the setting of q04 (Vaswani et al., 2017, section 3.2.1).
"""

import hashlib
import math
import os
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path

import torch
from torch import nn

from attention_qa import hash_source

# A folder where a training run's result is kept between processes (`make` sets it to
# _build/.trained); unset, every process trains again.
TRAINED_FOLDER = "ATTENTION_QA_TRAINED"


@contextmanager
def single_thread():
    """Run the block on one CPU thread, then restore the thread count.

    The book's models are tiny: their operations are too small to split between threads,
    and on a busy machine extra threads only wait for each other, which can make a short
    training run many times slower.
    """
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


def _setting() -> str:
    """What a training run's bits depend on: the package's source, PyTorch's version, the CPU
    kernels PyTorch and MKL chose (runs are on one thread, so not the thread count)."""
    digest = hashlib.sha256()
    hash_source(digest)
    for part in (
        torch.__version__,
        torch.backends.cpu.get_cpu_capability(),
        os.environ.get("MKL_ENABLE_INSTRUCTIONS", ""),
    ):
        digest.update(part.encode() + b"\0")
    return digest.hexdigest()[:16]


def trained_once(name: str, train: Callable[[], dict]) -> dict:
    """``train()``'s result (a dict of tensors, numbers and lists), computed once per setting.

    With the environment variable ATTENTION_QA_TRAINED naming a folder, the result is kept
    there under ``name`` and the setting (``_setting``), and a later process under the same
    setting loads it instead of training again: the same bits, since training is
    deterministic on one setting. Each setting trains for itself, so a check run under
    another CPU's kernels still trains under them. Call it inside ``torch.random.fork_rng``
    (as the book's models do), so the global random state after it does not depend on
    whether it trained.
    """
    folder = os.environ.get(TRAINED_FOLDER)
    if not folder:
        return train()
    path = Path(folder) / f"{name}-{_setting()}.pt"
    if path.exists():
        return torch.load(path, weights_only=True)
    result = train()
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(f".{os.getpid()}.partial")
    torch.save(result, partial)
    partial.replace(path)  # a run stopped half-way leaves no half-written file
    return result


def pointer_batch(vocab: int, m: int, batch: int, pairing: torch.Tensor, g: torch.Generator):
    """Key tokens (batch, m), query tokens (batch,) and the index of the right key (batch,)."""
    keys = torch.rand(batch, vocab, generator=g).argsort(dim=-1)[:, :m]  # (B, m)
    target = torch.randint(m, (batch,), generator=g)  # (B,)
    query = pairing[keys[torch.arange(batch), target]]  # (B,)
    return keys, query, target


def train_pointer(
    scale: float,
    d_k: int = 256,
    m: int = 16,
    vocab: int = 64,
    d_embed: int = 32,
    steps: int = 100,
    batch: int = 32,
    lr: float = 1e-2,
    seed: int = 0,
    dtype: torch.dtype = torch.float64,
) -> list[float]:
    """Train W_q, W_k with Adam; scores are (q·k) × ``scale``. Returns the loss per step.

    The run is in float64 by default: the unscaled run sits on saturated softmaxes, where
    float32 rounding (which differs between CPUs and thread counts) would change the curve.
    """
    torch.manual_seed(seed)
    embed = torch.randn(vocab, d_embed, dtype=dtype)  # fixed, unit-variance components
    pairing = torch.randperm(vocab)
    values = nn.functional.normalize(torch.randn(vocab, d_embed, dtype=dtype), dim=-1)
    w_q = nn.Linear(d_embed, d_k, bias=False, dtype=dtype)
    w_k = nn.Linear(d_embed, d_k, bias=False, dtype=dtype)
    for w in (w_q, w_k):  # unit-variance q and k components at the start
        nn.init.normal_(w.weight, std=1 / math.sqrt(d_embed))
    opt = torch.optim.Adam([w_q.weight, w_k.weight], lr=lr)
    g = torch.Generator().manual_seed(seed + 1)
    losses = []
    with single_thread():
        for _ in range(steps):
            keys, query, target = pointer_batch(vocab, m, batch, pairing, g)
            q = w_q(embed[query])  # (B, d_k)
            k = w_k(embed[keys])  # (B, m, d_k)
            scores = (k @ q.unsqueeze(-1)).squeeze(-1) * scale  # (B, m)
            weights = torch.softmax(scores, dim=-1)  # (B, m)
            output = (weights.unsqueeze(-1) * values[keys]).sum(dim=1)  # (B, d_v)
            # The loss sits downstream of the softmax, as in a real network: its gradient
            # reaches the scores only through the softmax Jacobian.
            loss = (output - values[keys[torch.arange(batch), target]]).pow(2).sum(-1).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
    return losses


def portable_uniform(shape, bound: float, g: torch.Generator) -> torch.Tensor:
    """Uniform float64 samples on [−bound, bound) that are bit-identical on every CPU.

    ``torch.rand`` and ``nn.init`` compute their samples with vector instructions that
    differ between CPUs (fused multiply-add or not), so the same seed gives values that
    differ in the last bit. Here the random part is an integer, and each step after it is
    one correctly rounded operation.
    """
    u = torch.randint(0, 2**24, tuple(shape), generator=g).double() / 2**24  # exact
    return (2 * u - 1) * bound


@torch.no_grad()
def portable_init_(model: nn.Module, seed: int) -> nn.Module:
    """Re-initialise ``model`` in float64, the same on every machine, and return it.

    Every matrix (linear weights, embeddings) is uniform on ±1/√fan_in, the bound of
    PyTorch's default for linear layers; biases start at 0 and norm scales at 1.
    """
    model.double()
    g = torch.Generator().manual_seed(seed)
    for name, p in model.named_parameters():
        if p.ndim >= 2:
            p.copy_(portable_uniform(p.shape, 1 / math.sqrt(p.shape[-1]), g))
        elif name.endswith("bias"):
            p.zero_()
        else:
            p.fill_(1.0)
    return model
