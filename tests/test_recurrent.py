"""attention_qa.recurrent against references written differently: the package's masked
(parallel) linear attention and a loop over every (query, key) pair; the selective scan
against a closed form from cumulative sums of Δ A and against state-spaces/mamba's layout;
the delta rule against its matrix form (I − β k kᵀ) S + β k vᵀ."""

import math
import re

import pytest
import torch
import torch.nn.functional as F

from attention_qa.efficient import linear_attention
from attention_qa.recurrent import (
    RECALL_KINDS,
    decode_memory_elements,
    delta_rule_recurrent,
    linear_attention_recurrent,
    mamba_state_elements,
    mean_recall_accuracy,
    recall_accuracy,
    recall_pairs,
    selective_scan,
    selective_scan_chunked,
    selective_scan_parallel,
)


def qkv(batch=2, n=9, d_k=4, d_v=3, seed=0, dtype=torch.float64):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(batch, n, d_k, generator=g, dtype=dtype),
            torch.randn(batch, n, d_k, generator=g, dtype=dtype),
            torch.randn(batch, n, d_v, generator=g, dtype=dtype))


def causal_linear_by_pairs(q, k, v, feature_map):
    """out_i = Σ_{j≤i} w_ij v_j with w_ij = φ(q_i)·φ(k_j), normalised over j ≤ i for elu."""
    phi = (lambda x: F.elu(x) + 1) if feature_map == "elu" else (lambda x: x)
    out = torch.zeros(q.shape[0], q.shape[1], v.shape[-1], dtype=q.dtype)
    for b in range(q.shape[0]):
        for i in range(q.shape[1]):
            weights = [float(phi(q[b, i]) @ phi(k[b, j])) for j in range(i + 1)]
            total = sum(weights) if feature_map == "elu" else 1.0
            out[b, i] = sum(w * v[b, j] for j, w in enumerate(weights)) / total
    return out


@pytest.mark.parametrize("feature_map", ["elu", "identity"])
@pytest.mark.parametrize("shape", [(1, 1, 2, 2), (2, 9, 4, 3), (3, 16, 8, 5)])
def test_recurrent_linear_attention_equals_the_parallel_form_and_a_pair_loop(feature_map, shape):
    q, k, v = qkv(*shape)
    out, (S, z) = linear_attention_recurrent(q, k, v, feature_map)
    parallel = linear_attention(q, k, v, feature_map=feature_map, causal=True)
    assert out.shape == parallel.shape
    torch.testing.assert_close(out, parallel, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(out, causal_linear_by_pairs(q, k, v, feature_map))


def test_the_final_state_is_the_sum_of_outer_products():
    q, k, v = qkv()
    _, (S, z) = linear_attention_recurrent(q, k, v)
    phi_k = F.elu(k) + 1
    torch.testing.assert_close(S, torch.einsum("bnk,bnv->bkv", phi_k, v))
    torch.testing.assert_close(z, phi_k.sum(dim=1))
    assert S.shape == (2, 4, 3) and z.shape == (2, 4)


def test_the_state_carries_on_across_a_split_sequence():
    """Decoding continues from (S, z): the second half read from the first half's state."""
    q, k, v = qkv(n=10)
    full, _ = linear_attention_recurrent(q, k, v)
    _, (S, z) = linear_attention_recurrent(q[:, :6], k[:, :6], v[:, :6])
    phi_q, phi_k = F.elu(q) + 1, F.elu(k) + 1
    for t in range(6, 10):
        S = S + phi_k[:, t, :, None] * v[:, t, None, :]
        z = z + phi_k[:, t]
        step = torch.einsum("bk,bkv->bv", phi_q[:, t], S) / (phi_q[:, t] * z).sum(-1, True)
        torch.testing.assert_close(step, full[:, t])


@pytest.mark.parametrize("bad, words", [
    (dict(q=torch.zeros(2, 3)), "(B, n, d)"),
    (dict(k=torch.zeros(2, 5, 6)), "k has shape (2, 5, 6)"),
    (dict(v=torch.zeros(2, 4, 3)), "v has shape (2, 4, 3)"),
    (dict(feature_map="relu"), "feature_map"),
])
def test_bad_linear_attention_input_is_refused_in_words(bad, words):
    q, k, v = qkv(n=5)
    args = {"q": q, "k": k, "v": v, "feature_map": "elu", **bad}
    with pytest.raises(ValueError, match=re.escape(words)):
        linear_attention_recurrent(**args)


def scan_inputs(batch=2, L=13, d=3, N=4, seed=1, dtype=torch.float64, big_delta=False):
    g = torch.Generator().manual_seed(seed)

    def randn(*shape):
        return torch.randn(*shape, generator=g, dtype=dtype)

    x = randn(batch, L, d)
    delta = F.softplus(randn(batch, L, d) + (3 if big_delta else 0))
    A = -torch.exp(randn(d, N))
    return x, delta, A, randn(batch, L, N), randn(batch, L, N), randn(d)


def scan_closed_form(x, delta, A, B, C, D):
    """h_t = Σ_{s≤t} exp(Σ_{s<r≤t} Δ_r A) Δ_s B_s x_s, every (t, s) pair by a Python loop over
    channels, from cumulative sums of Δ A (no recurrence)."""
    batch, L, d = x.shape
    y = torch.zeros_like(x)
    for b in range(batch):
        for c in range(d):
            cum = torch.cumsum(delta[b, :, c, None] * A[c], dim=0)  # (L, N)
            for t in range(L):
                h = sum(torch.exp(cum[t] - cum[s]) * delta[b, s, c] * B[b, s] * x[b, s, c]
                        for s in range(t + 1))  # (N,)
                y[b, t, c] = h @ C[b, t] + D[c] * x[b, t, c]
    return y


def mamba_reference_layout(x, delta, A, B, C, D):
    """state-spaces/mamba's selective_scan_ref takes u, delta (B, D, L) and B, C (B, N, L);
    this is its loop, transcribed, on our (batch, L, d) tensors transposed to that layout."""
    u, dt = x.transpose(1, 2), delta.transpose(1, 2)  # (b, d, L)
    Bm, Cm = B.transpose(1, 2), C.transpose(1, 2)  # (b, N, L)
    deltaA = torch.exp(torch.einsum("bdl,dn->bdln", dt, A))
    deltaB_u = torch.einsum("bdl,bnl,bdl->bdln", dt, Bm, u)
    state = A.new_zeros(u.shape[0], A.shape[0], A.shape[1])
    ys = []
    for i in range(u.shape[2]):
        state = deltaA[:, :, i] * state + deltaB_u[:, :, i]
        ys.append(torch.einsum("bdn,bn->bd", state, Cm[:, :, i]))
    out = torch.stack(ys, dim=2) + u * D[:, None]  # (b, d, L)
    return out.transpose(1, 2)


@pytest.mark.parametrize("sizes", [(1, 1, 1, 1), (2, 13, 3, 4), (1, 32, 2, 8)])
def test_selective_scan_equals_its_closed_form_and_the_mamba_reference(sizes):
    x, delta, A, B, C, D = scan_inputs(*sizes)
    y = selective_scan(x, delta, A, B, C, D)
    torch.testing.assert_close(y, scan_closed_form(x, delta, A, B, C, D))
    torch.testing.assert_close(y, mamba_reference_layout(x, delta, A, B, C, D))


@pytest.mark.parametrize("L", [1, 2, 7, 16, 33])
@pytest.mark.parametrize("chunk_size", [1, 4, 16, 64])
def test_parallel_and_chunked_scans_equal_the_loop(L, chunk_size):
    x, delta, A, B, C, D = scan_inputs(L=L)
    y = selective_scan(x, delta, A, B, C, D)
    torch.testing.assert_close(selective_scan_parallel(x, delta, A, B, C, D), y)
    torch.testing.assert_close(selective_scan_chunked(x, delta, A, B, C, D, chunk_size), y)
    torch.testing.assert_close(selective_scan_chunked(x, delta, A, B, C, None, chunk_size),
                               selective_scan(x, delta, A, B, C))


def test_chunks_stay_finite_where_one_long_cumulative_sum_would_overflow():
    """With large steps, exp(−Σ Δ A) over the whole sequence overflows float64; the chunked
    form only takes differences inside a chunk."""
    x, delta, A, B, C, D = scan_inputs(L=200, big_delta=True)
    total = -(delta.unsqueeze(-1) * A).sum(dim=1)  # (batch, d, N)
    assert total.max() > 710  # exp overflows float64 past about 709.8
    y = selective_scan(x, delta, A, B, C, D)
    chunked = selective_scan_chunked(x, delta, A, B, C, D, chunk_size=8)
    assert torch.isfinite(chunked).all()
    torch.testing.assert_close(chunked, y)


def test_a_large_step_forgets_and_a_small_one_remembers():
    """Δ → large: exp(Δ A) → 0 and h_t ≈ Δ B_t x_t (reset); Δ → 0: h_t ≈ h_{t−1} (kept)."""
    x, delta, A, B, C, _ = scan_inputs(batch=1, L=2, d=1, N=1)
    x = torch.ones_like(x)
    keep = selective_scan(x, torch.tensor([[[1.0], [1e-9]]], dtype=torch.float64), A, B, C)
    # The second step adds nothing and decays nothing: h_2 = h_1.
    assert abs(keep[0, 1, 0] / C[0, 1, 0] - keep[0, 0, 0] / C[0, 0, 0]) < 1e-6
    reset = selective_scan(x, torch.tensor([[[1.0], [50.0]]], dtype=torch.float64), A, B, C)
    h_2 = reset[0, 1, 0] / C[0, 1, 0]
    assert abs(h_2 - 50.0 * B[0, 1, 0]) < 1e-6 * abs(50.0 * B[0, 1, 0])  # only the new input


@pytest.mark.parametrize("bad, words", [
    (dict(x=torch.zeros(2, 5)), "x has shape (2, 5)"),
    (dict(delta=torch.zeros(2, 5, 4)), "delta has shape (2, 5, 4)"),
    (dict(A=torch.zeros(4, 2)), "A has shape (4, 2)"),
    (dict(B=torch.zeros(2, 5, 3)), "B has shape (2, 5, 3)"),
    (dict(C=torch.zeros(2, 4, 2)), "C has shape (2, 4, 2)"),
    (dict(D=torch.zeros(4)), "D has shape (4,)"),
])
def test_bad_scan_input_is_refused_in_words(bad, words):
    args = dict(x=torch.zeros(2, 5, 3), delta=torch.ones(2, 5, 3), A=-torch.ones(3, 2),
                B=torch.zeros(2, 5, 2), C=torch.zeros(2, 5, 2), D=None)
    args.update(bad)
    for scan in (selective_scan, selective_scan_parallel, selective_scan_chunked):
        with pytest.raises(ValueError, match=re.escape(words)):
            scan(**args)
    with pytest.raises(ValueError, match="chunk_size"):
        selective_scan_chunked(torch.zeros(1, 2, 1), torch.ones(1, 2, 1), -torch.ones(1, 1),
                               torch.zeros(1, 2, 1), torch.zeros(1, 2, 1), chunk_size=0)


def test_delta_rule_is_the_matrix_update():
    q, k, v = qkv(n=7, d_k=5, d_v=3)
    k = k / k.norm(dim=-1, keepdim=True)
    g = torch.Generator().manual_seed(3)
    beta = torch.rand(2, 7, generator=g, dtype=torch.float64)
    alpha = torch.rand(2, 7, generator=g, dtype=torch.float64)
    for gate in (None, alpha):
        out, S = delta_rule_recurrent(q, k, v, beta, gate)
        ref = torch.zeros(2, 5, 3, dtype=torch.float64)
        for t in range(7):
            a = 1.0 if gate is None else gate[:, t, None, None]
            kk = k[:, t, :, None] @ k[:, t, None, :]  # (B, d_k, d_k)
            ref = a * (torch.eye(5, dtype=torch.float64) - beta[:, t, None, None] * kk) @ ref \
                + beta[:, t, None, None] * k[:, t, :, None] @ v[:, t, None, :]
            torch.testing.assert_close(out[:, t], (q[:, t, None, :] @ ref)[:, 0])
        torch.testing.assert_close(S, ref)


def test_delta_rule_overwrites_where_the_sum_adds():
    """The same unit key written twice: the delta rule (β = 1) returns the new value, the
    sum returns old + new."""
    key = torch.tensor([[[0.6, 0.8], [0.6, 0.8]]], dtype=torch.float64)  # (1, 2, 2)
    values = torch.tensor([[[1.0, 0.0], [0.0, 1.0]]], dtype=torch.float64)
    out, _ = delta_rule_recurrent(key, key, values, torch.ones(1, 2, dtype=torch.float64))
    torch.testing.assert_close(out[0, 1], values[0, 1])
    summed, _ = linear_attention_recurrent(key, key, values, feature_map="identity")
    torch.testing.assert_close(summed[0, 1], values[0, 0] + values[0, 1])


def test_with_beta_zero_nothing_is_written_and_alpha_decays():
    q, k, v = qkv(n=4)
    out, S = delta_rule_recurrent(q, k, v, torch.zeros(2, 4, dtype=torch.float64))
    assert out.abs().max() == 0 and S.abs().max() == 0
    with pytest.raises(ValueError, match=re.escape("beta has shape (2, 3)")):
        delta_rule_recurrent(q, k, v, torch.zeros(2, 3))


def test_recall_toy():
    keys, values = recall_pairs(20, 8, seed=2)
    torch.testing.assert_close(keys.norm(dim=-1), torch.ones(20, dtype=torch.float64))
    assert recall_accuracy("softmax attention", 128, 8) == 1.0
    assert recall_accuracy("linear attention (sum)", 4, 64) == 1.0
    assert recall_accuracy("linear attention (sum)", 128, 8) < 0.2
    assert recall_accuracy("delta rule", 128, 8) < 0.2
    for kind in RECALL_KINDS:  # more room, more recall, in this toy
        assert recall_accuracy(kind, 64, 64) >= recall_accuracy(kind, 64, 8)
    with pytest.raises(ValueError, match="kind"):
        recall_accuracy("mamba", 4, 4)


def test_orthogonal_keys_are_recalled_exactly_by_the_sum_up_to_d_pairs():
    """With d orthonormal keys there is no crosstalk: qᵀ Σ k_i v_iᵀ = v_j exactly."""
    d = 6
    keys = torch.eye(d, dtype=torch.float64)
    values = torch.randn(d, 3, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    S = keys.T @ values
    torch.testing.assert_close(keys @ S, values)


def test_decode_memory():
    assert decode_memory_elements("softmax attention", 4096, 128) == 2 * 4096 * 128
    assert decode_memory_elements("linear attention (sum)", 4096, 128) == 128 * 128 + 128
    assert decode_memory_elements("delta rule", 10, 128) == 128 * 128
    with pytest.raises(ValueError, match="n must be"):
        decode_memory_elements("delta rule", 0, 4)
    # Mamba-2.8B: 64 layers, d_model 2560, d_state 16, d_conv 4, expand 2.
    assert mamba_state_elements(64, 2560) == 64 * 5120 * 20
    assert math.isclose(mamba_state_elements(64, 2560) * 2 / 1e6, 13.1072)


def test_mean_recall_averages_the_seeds_and_softmax_needs_sharp_logits():
    one = [recall_accuracy("linear attention (sum)", 16, 16, seed) for seed in range(3)]
    assert mean_recall_accuracy("linear attention (sum)", 16, 16, num_seeds=3) == sum(one) / 3
    assert mean_recall_accuracy("softmax attention", 64, 16) == 1.0
    blunt = mean_recall_accuracy("softmax attention", 64, 16, sharpness=16 ** -0.5)
    assert blunt < 0.1  # at 1/√d on unit keys the weights are nearly uniform
    with pytest.raises(ValueError, match="num_seeds"):
        mean_recall_accuracy("delta rule", 4, 4, num_seeds=0)
