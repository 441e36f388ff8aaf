"""check_repeat_kv: passes the GQA head expansion and names each classic slip."""

import pytest
import torch

from attention_qa.checks.multihead import REPEAT_KV_SLIPS, check_repeat_kv


def right(kv, num_heads):
    return kv.repeat_interleave(num_heads // kv.shape[1], dim=1)


def test_passes_a_right_answer():
    check_repeat_kv(right)


def test_passes_the_expand_reshape_answer():
    def by_expand(kv, num_heads):
        B, h_kv, m, d_k = kv.shape
        group = num_heads // h_kv
        return kv[:, :, None].expand(B, h_kv, group, m, d_k).reshape(B, num_heads, m, d_k)

    check_repeat_kv(by_expand)


def test_passes_pytorchs_enable_gqa_grouping():
    # Attention with the learner's expansion must match PyTorch's own grouping.
    torch.manual_seed(0)
    q = torch.randn(1, 4, 3, 8)
    k, v = torch.randn(1, 2, 5, 8), torch.randn(1, 2, 5, 8)
    fused = torch.nn.functional.scaled_dot_product_attention(q, k, v, enable_gqa=True)
    manual = torch.nn.functional.scaled_dot_product_attention(q, right(k, 4), right(v, 4))
    assert torch.allclose(fused, manual, atol=1e-6)


def test_names_tiling():
    with pytest.raises(AssertionError) as err:
        check_repeat_kv(lambda kv, h: kv.repeat(1, h // kv.shape[1], 1, 1))
    assert REPEAT_KV_SLIPS["tiled"] in str(err.value)


def test_names_the_wrong_axis_and_no_repeat():
    with pytest.raises(AssertionError, match="token axis"):
        check_repeat_kv(lambda kv, h: kv.repeat_interleave(h // kv.shape[1], dim=2))
    with pytest.raises(AssertionError, match="input's shape"):
        check_repeat_kv(lambda kv, h: kv)
