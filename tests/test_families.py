"""families: the masks of each family against hand-built ones, ViT's patches against a
convolution, CLIP's logits against cosine similarities one pair at a time."""

import pytest
import torch
import torch.nn.functional as F

from attention_qa.families import (
    FAMILIES,
    VISUAL_TOKENS_PER_IMAGE,
    DualEncoder,
    clip_logits,
    clip_loss,
    cross_modal_entries,
    family_layers,
    patchify,
    vit_num_tokens,
)


def test_vit_b16_at_224_has_196_patches_and_197_tokens():
    assert vit_num_tokens(224, 16) == 197
    assert vit_num_tokens(224, 16, cls_token=False) == 196
    assert vit_num_tokens(384, 16) == 577
    assert vit_num_tokens(224, 14) == 257


def test_vit_num_tokens_refuses_a_patch_that_does_not_divide():
    with pytest.raises(ValueError, match="patch_size=15 must divide image_size=224"):
        vit_num_tokens(224, 15)


def test_patchify_then_linear_equals_the_strided_convolution():
    torch.manual_seed(0)
    images = torch.randn(2, 3, 12, 8, dtype=torch.float64)
    conv = torch.nn.Conv2d(3, 5, kernel_size=4, stride=4, dtype=torch.float64)
    expected = conv(images).flatten(2).transpose(1, 2)  # (B, N, d)
    got = patchify(images, 4) @ conv.weight.flatten(1).T + conv.bias
    assert got.shape == (2, 6, 5)
    assert torch.allclose(got, expected, atol=1e-12)


def test_patchify_matches_unfold():
    torch.manual_seed(1)
    images = torch.randn(1, 2, 6, 6)
    unfolded = F.unfold(images, kernel_size=3, stride=3).transpose(1, 2)  # (B, N, C·p·p)
    assert torch.equal(patchify(images, 3), unfolded)


@pytest.mark.parametrize("shape,message", [((3, 8, 8), "must be \\(B, C, H, W\\)"),
                                            ((1, 3, 8, 6), "must divide H=8 and W=6")])
def test_patchify_names_the_bad_shape(shape, message):
    with pytest.raises(ValueError, match=message):
        patchify(torch.zeros(shape), 4)


def test_clip_logits_are_scaled_cosines_pair_by_pair():
    torch.manual_seed(2)
    img, txt = torch.randn(3, 8, dtype=torch.float64), torch.randn(5, 8, dtype=torch.float64)
    got = clip_logits(img, txt, logit_scale=20.0)
    assert got.shape == (3, 5)
    for i in range(3):
        for j in range(5):
            cosine = F.cosine_similarity(img[i], txt[j], dim=0)
            assert torch.isclose(got[i, j], 20 * cosine, atol=1e-12)


def test_clip_logits_names_a_width_mismatch():
    with pytest.raises(ValueError, match="text_features has shape \\(2, 4\\) but image"):
        clip_logits(torch.zeros(3, 8), torch.zeros(2, 4))


def test_clip_loss_is_the_mean_of_both_cross_entropies():
    torch.manual_seed(3)
    logits = torch.randn(4, 4, dtype=torch.float64)
    by_rows = -torch.log_softmax(logits, dim=1).diagonal().mean()
    by_cols = -torch.log_softmax(logits, dim=0).diagonal().mean()
    assert torch.isclose(clip_loss(logits), (by_rows + by_cols) / 2, atol=1e-12)


def test_bert_gpt_and_t5_masks():
    n, pad = 5, 2
    real = torch.arange(n) < n - pad
    (bert,) = family_layers("BERT", n, pad)
    assert torch.equal(bert.mask, real.expand(n, n))
    (gpt,) = family_layers("GPT", n, pad)
    assert torch.equal(gpt.mask, torch.ones(n, n).tril().bool() & real)
    enc, dec, cross = family_layers("T5", n, pad)
    assert (enc.kind, dec.kind, cross.kind) == ("self", "self", "cross")
    assert torch.equal(dec.mask, torch.ones(n, n).tril().bool())
    assert torch.equal(cross.mask, real.expand(n, n))  # no causal part: only padding keys


def test_vit_sees_every_patch_and_the_cls_token():
    (vit,) = family_layers("ViT", grid=3)
    assert vit.mask.shape == (10, 10) and vit.mask.all()
    assert vit.query_tokens[0] == "cls"


def test_only_clip_and_the_text_and_vision_only_families_keep_modalities_apart():
    for family in FAMILIES:
        across = sum(cross_modal_entries(layer) for layer in family_layers(family, 5, 1, 2))
        if family in ("BLIP", "Flamingo", "LLaVA"):
            assert across > 0, family
        else:
            assert across == 0, family


def test_clip_text_encoder_is_causal_and_blip_cross_attention_reads_every_image_token():
    image, text = family_layers("CLIP", 4, 0, 2)
    assert image.mask.all() and torch.equal(text.mask, torch.ones(4, 4).tril().bool())
    cross = family_layers("BLIP", 4, 1, 2)[2]
    assert cross.mask.shape == (4, 5) and cross.mask.all() and cross_modal_entries(cross) == 20


def test_flamingo_text_reads_the_visual_tokens_of_the_last_image_before_it():
    r = VISUAL_TOKENS_PER_IMAGE
    cross = family_layers("Flamingo", 6, 0, 2)[2]
    assert cross.mask.shape == (6, 2 * r)
    assert (cross.mask.sum(-1) == r).all()
    assert cross.mask[:3, :r].all() and cross.mask[3:, r:].all()
    assert not cross.mask[:3, r:].any() and not cross.mask[3:, :r].any()


def test_llava_text_reads_the_image_tokens_through_causal_self_attention():
    _, lm = family_layers("LLaVA", 3, 0, 2)
    assert torch.equal(lm.mask, torch.ones(7, 7).tril().bool())
    assert cross_modal_entries(lm) == 3 * 4  # every text token reads the 4 image tokens


@pytest.mark.parametrize("kwargs,message", [
    (dict(family="PaLM"), "family must be one of"),
    (dict(family="BERT", text_len=3, padding=3), "padding must be .* = 2"),
    (dict(family="BERT", grid=0), "grid must be a positive integer"),
])
def test_family_layers_names_the_bad_argument(kwargs, message):
    with pytest.raises(ValueError, match=message):
        family_layers(**kwargs)


def test_dual_encoder_text_never_depends_on_the_image():
    torch.manual_seed(4)
    model = DualEncoder().double()
    images = torch.randn(3, 3, 8, 8, dtype=torch.float64, requires_grad=True)
    tokens, lengths = torch.randint(32, (4, 6)), [6, 3, 2, 5]
    logits = model(images, tokens, lengths)
    text = model.encode_text(tokens, lengths)
    (grad,) = torch.autograd.grad(text.sum(), images, allow_unused=True)
    assert grad is None
    singles = torch.stack([
        torch.cat([clip_logits(model.encode_image(images[i:i + 1]),
                               model.encode_text(tokens[j:j + 1], lengths[j:j + 1]))
                   for j in range(4)], dim=1)[0]
        for i in range(3)
    ])
    assert torch.allclose(singles, logits, atol=1e-10)
