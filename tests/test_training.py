"""attention_qa.training: the pointer task, and an initialisation that is the same on every CPU."""

import json
import os
import subprocess
import sys

import torch
from torch import nn

from attention_qa import training
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


def test_trained_once_trains_once_per_setting_and_loads_the_same_bits(tmp_path, monkeypatch):
    calls = []

    def train():
        calls.append(1)
        g = torch.Generator().manual_seed(len(calls))
        return {"w": torch.randn(3, generator=g), "losses": [0.5, 0.25]}

    monkeypatch.delenv(training.TRAINED_FOLDER, raising=False)
    training.trained_once("toy", train), training.trained_once("toy", train)
    assert len(calls) == 2, "with no folder set, every call trains"
    calls.clear()
    monkeypatch.setenv(training.TRAINED_FOLDER, str(tmp_path))
    first = training.trained_once("toy", train)
    again = training.trained_once("toy", train)
    assert len(calls) == 1 and torch.equal(first["w"], again["w"])
    assert again["losses"] == [0.5, 0.25]
    monkeypatch.setenv("MKL_ENABLE_INSTRUCTIONS", "SSE4_2")  # another machine setting
    other = training.trained_once("toy", train)
    assert len(calls) == 2 and not torch.equal(other["w"], first["w"])
    assert not list(tmp_path.glob("*.partial"))


def test_a_kept_sum_model_is_the_trained_one_and_leaves_the_random_state_alone(
    tmp_path, monkeypatch
):
    from attention_qa import heads

    monkeypatch.setattr(heads, "_TRAINED", {})  # this process's own models stay as they were

    def fresh(steps):
        heads._TRAINED.clear()
        torch.manual_seed(123)
        model, losses = heads.train_sum_model(steps=steps, seed=5)
        return model.state_dict(), losses, torch.rand(1)  # what the global generator gives next

    monkeypatch.delenv(training.TRAINED_FOLDER, raising=False)
    trained = fresh(3)
    monkeypatch.setenv(training.TRAINED_FOLDER, str(tmp_path))
    saved, loaded = fresh(3), fresh(3)
    assert len(list(tmp_path.glob("sum-model-3-5-*.pt"))) == 1
    for state, losses, after in (saved, loaded):
        assert state.keys() == trained[0].keys()
        assert all(torch.equal(state[k], trained[0][k]) for k in state)
        assert losses == trained[1] and torch.equal(after, trained[2])
