"""check_selective_scan (q35): independent right answers pass in float32 and float64, and
each slip is named."""

import re

import numpy as np
import pytest
import torch

from attention_qa.checks import check_selective_scan
from attention_qa.checks.recurrent import SCAN_SLIPS, scan_variant


def by_loop(x, delta, A, B, C, D):
    """The recurrence with einsum, one token at a time."""
    h = torch.zeros(x.shape[0], x.shape[2], A.shape[1], dtype=x.dtype)
    ys = []
    for t in range(x.shape[1]):
        h = torch.exp(torch.einsum("bd,dn->bdn", delta[:, t], A)) * h + torch.einsum(
            "bd,bn,bd->bdn", delta[:, t], B[:, t], x[:, t])
        ys.append(torch.einsum("bdn,bn->bd", h, C[:, t]))
    y = torch.stack(ys, 1)
    return y if D is None else y + x * D


def by_cumulative_sums(x, delta, A, B, C, D):
    """No recurrence: h_t = Σ_{s≤t} exp(cum_t − cum_s) Δ_s B_s x_s, with cum = cumsum(Δ A)."""
    cum = torch.cumsum(delta.unsqueeze(-1) * A, dim=1)  # (b, L, d, N)
    gaps = cum.unsqueeze(2) - cum.unsqueeze(1)  # (b, t, s, d, N)
    L = x.shape[1]
    keep = torch.tril(torch.ones(L, L, dtype=torch.bool))[None, :, :, None, None]
    weights = torch.where(keep, torch.exp(torch.where(keep, gaps, 0)), 0)
    drive = (delta * x).unsqueeze(-1) * B.unsqueeze(-2)  # (b, s, d, N)
    h = (weights * drive.unsqueeze(1)).sum(2)  # (b, t, d, N)
    y = (h * C.unsqueeze(-2)).sum(-1)
    return y if D is None else y + D * x


def by_numpy(x, delta, A, B, C, D):
    """Plain NumPy, channel by channel and state by state."""
    x, delta, A, B, C = (t.numpy() for t in (x, delta, A, B, C))
    y = np.zeros_like(x)
    for b in range(x.shape[0]):
        for c in range(x.shape[2]):
            h = np.zeros(A.shape[1])
            for t in range(x.shape[1]):
                h = np.exp(delta[b, t, c] * A[c]) * h + delta[b, t, c] * B[b, t] * x[b, t, c]
                y[b, t, c] = h @ C[b, t] + (0 if D is None else D[c].item() * x[b, t, c])
    return y


RIGHT = [by_loop, by_cumulative_sums, by_numpy]


@pytest.mark.parametrize("right", RIGHT)
def test_right_answers_pass(right):
    check_selective_scan(right)


@pytest.mark.parametrize("right", [by_loop, by_cumulative_sums])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_right_answers_pass_in_float32_and_float64(right, dtype):
    def cast(t):
        return None if t is None else t.to(dtype)
    check_selective_scan(lambda *args: right(*map(cast, args)))


@pytest.mark.parametrize("bug", list(SCAN_SLIPS))
def test_each_slip_is_named(bug):
    with pytest.raises(AssertionError, match=re.escape(SCAN_SLIPS[bug])):
        check_selective_scan(lambda *args: scan_variant(*args, bug=bug))


def test_other_wrong_answers_fail():
    with pytest.raises(AssertionError, match="shape"):
        check_selective_scan(lambda x, delta, A, B, C, D: by_loop(x, delta, A, B, C, D)[0])
    with pytest.raises(AssertionError, match="off by"):
        check_selective_scan(lambda *args: by_loop(*args) * 1.01)
    with pytest.raises(AssertionError, match="raised"):
        check_selective_scan(lambda *args: 1 / 0)
