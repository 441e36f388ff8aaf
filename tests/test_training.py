"""attention_qa.training: the pointer task, and an initialisation that is the same on every CPU."""

import json
import os
import subprocess
import sys

import torch
from torch import nn

from attention_qa.training import portable_init_, portable_uniform, train_pointer


def test_portable_uniform_is_float64_bounded_and_seeded():
    a = portable_uniform((1000,), 0.25, torch.Generator().manual_seed(3))
    b = portable_uniform((1000,), 0.25, torch.Generator().manual_seed(3))
    assert a.dtype == torch.float64 and torch.equal(a, b)
    assert a.min() >= -0.25 and a.max() < 0.25 and a.std() > 0.1


def test_portable_init_sets_every_parameter_in_float64():
    model = portable_init_(nn.Sequential(nn.Linear(8, 4), nn.LayerNorm(4), nn.Embedding(5, 4)), 0)
    linear, norm, embedding = model
    assert all(p.dtype == torch.float64 for p in model.parameters())
    assert torch.equal(linear.bias, torch.zeros(4, dtype=torch.float64))
    assert torch.equal(norm.weight, torch.ones(4, dtype=torch.float64))
    assert linear.weight.abs().max() <= 8**-0.5 and embedding.weight.abs().max() <= 4**-0.5
    again = portable_init_(
        nn.Sequential(nn.Linear(8, 4), nn.LayerNorm(4), nn.Embedding(5, 4)), seed=0
    )
    pairs = zip(model.parameters(), again.parameters(), strict=True)
    assert all(torch.equal(p, q) for p, q in pairs)


CODE = """
import json, torch
from torch import nn
from attention_qa.training import portable_init_
model = portable_init_(nn.Sequential(nn.Linear(32, 64), nn.Linear(64, 8)), 0)
print(json.dumps([p.flatten().tolist() for p in model.parameters()]))
"""


def test_portable_init_is_bit_identical_whatever_kernels_pytorch_picks():
    """torch.rand and nn.init differ in the last bit between CPU paths; this must not."""
    runs = []
    for capability in ("default", "avx2"):
        env = dict(os.environ, ATEN_CPU_CAPABILITY=capability, OMP_NUM_THREADS="1")
        out = subprocess.run([sys.executable, "-c", CODE], env=env, capture_output=True,
                             text=True, check=True).stdout
        runs.append(json.loads(out))
    assert runs[0] == runs[1]


def test_the_scaled_pointer_run_learns_and_the_unscaled_one_stalls():
    scaled = train_pointer(1 / 16, d_k=256, steps=40)
    unscaled = train_pointer(1.0, d_k=256, steps=40)
    assert all(isinstance(loss, float) for loss in scaled)
    assert sum(scaled[-10:]) / 10 < 0.5 * scaled[0]
    assert sum(unscaled[-10:]) / 10 > 0.8 * unscaled[0]
