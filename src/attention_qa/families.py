"""Where each kind of attention lives in today's model families (q23).

``family_layers`` lists the attention layers of one family: who asks (the queries), who is
read (the keys and values) and the boolean mask, True = may attend. The families follow
their papers:

* BERT (Devlin et al., 2019): an encoder; bidirectional self-attention, padding keys hidden.
* GPT (Radford et al., 2018): a decoder only; causal self-attention.
* T5 (Raffel et al., 2020): encoder self-attention (bidirectional), decoder self-attention
  (causal) and cross-attention from the decoder to the encoder's output.
* ViT (Dosovitskiy et al., 2021): 16 × 16 patches as tokens after a [CLS] token, attended
  bidirectionally.
* CLIP (Radford et al., 2021): a *dual encoder*. A ViT encodes the image, a causal text
  Transformer the caption; each is pooled to one vector and the two meet only in a matrix
  of cosine similarities trained with a contrastive loss. No layer attends across.
* BLIP (Li et al., 2022): its image-grounded text encoder adds cross-attention from the
  text to the ViT's output in every block.
* Flamingo (Alayrac et al., 2022): a Perceiver Resampler turns each image into a few visual
  tokens (its latents attend to the patch features and to themselves); gated
  cross-attention layers let each text token read the visual tokens of the last image
  before it; the frozen language model keeps its causal self-attention.
* LLaVA (Liu et al., 2023): projected patch features are placed before the text in a
  decoder-only language model, so one causal self-attention reads both.

``clip_logits`` and :class:`DualEncoder` are CLIP's similarity matrix and a tiny dual
encoder; ``patchify`` and ``vit_num_tokens`` are ViT's tokenisation.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from attention_qa.masks import causal_mask, padding_mask
from attention_qa.multihead import MultiHeadAttention
from attention_qa.validation import require_positive_int, require_tensor, shape_str

FAMILIES = ("BERT", "GPT", "T5", "ViT", "CLIP", "BLIP", "Flamingo", "LLaVA")
# Token kinds and the modality each belongs to. Flamingo's latents and visual tokens are
# computed from the image only, so they count as image.
MODALITY = {"cls": "image", "patch": "image", "latent": "image", "visual": "image",
            "text": "text", "pad": "text"}
VISUAL_TOKENS_PER_IMAGE = 2  # Flamingo's resampler gives 64; two keep the map readable


@dataclass(frozen=True)
class AttentionLayer:
    """One attention layer: ``mask`` (n, m) bool, True = query i may read key j.

    ``queries`` and ``keys`` say where Q and K, V come from; ``query_tokens`` (n) and
    ``key_tokens`` (m) name each position's kind (a key of :data:`MODALITY`).
    """

    name: str
    queries: str
    keys: str
    mask: torch.Tensor
    query_tokens: tuple[str, ...]
    key_tokens: tuple[str, ...]

    @property
    def kind(self) -> str:
        """"self" when Q and K, V come from the same sequence, "cross" otherwise."""
        return "self" if self.queries == self.keys else "cross"


def family_layers(family: str, text_len: int = 5, padding: int = 1,
                  grid: int = 2) -> list[AttentionLayer]:
    """The attention layers of ``family`` on one text of ``text_len`` tokens, the last
    ``padding`` of them padding, and one image of ``grid × grid`` patches.

    T5's target has ``text_len`` tokens too, without padding. Flamingo's text has two images:
    one before the first token and one before the middle of the real tokens.
    """
    if family not in FAMILIES:
        raise ValueError(f"family must be one of {FAMILIES}, got {family!r}")
    n = require_positive_int("text_len", text_len)
    require_positive_int("grid", grid)
    if isinstance(padding, bool) or not isinstance(padding, int) or not 0 <= padding < n:
        raise ValueError(
            f"padding must be an integer in 0..text_len - 1 = {n - 1}, so that one real "
            f"token remains; got {padding!r}"
        )
    real = n - padding
    text = ("text",) * real + ("pad",) * padding
    keys_real = padding_mask([real], n)[0]  # (n,) True on the real text tokens
    bidirectional = keys_real.expand(n, n)  # (n, n): every query hides the padded keys
    causal = causal_mask(n) & keys_real  # (n, n)
    patches = ("patch",) * grid**2
    vit = ("cls",) + patches
    full_image = torch.ones(len(vit), len(vit), dtype=torch.bool)  # (1 + g², 1 + g²)

    def layer(name, queries, keys, mask, q_tokens, k_tokens):
        return AttentionLayer(name, queries, keys, mask.clone(), q_tokens, k_tokens)

    if family == "BERT":
        return [layer("encoder self-attention", "text", "text", bidirectional, text, text)]
    if family == "GPT":
        return [layer("decoder self-attention", "text", "text", causal, text, text)]
    if family == "T5":
        target = ("text",) * n
        return [
            layer("encoder self-attention", "source", "source", bidirectional, text, text),
            layer("decoder self-attention", "target", "target", causal_mask(n), target, target),
            layer("cross-attention", "target", "encoder output",
                  keys_real.expand(n, n), target, text),
        ]
    if family == "ViT":
        return [layer("encoder self-attention", "image", "image", full_image, vit, vit)]
    if family == "CLIP":
        return [
            layer("image encoder self-attention", "image", "image", full_image, vit, vit),
            layer("text encoder self-attention", "text", "text", causal, text, text),
        ]
    if family == "BLIP":
        return [
            layer("image encoder self-attention", "image", "image", full_image, vit, vit),
            layer("text self-attention", "text", "text", bidirectional, text, text),
            layer("cross-attention", "text", "image",
                  torch.ones(n, len(vit), dtype=torch.bool), text, vit),
        ]
    if family == "Flamingo":
        r = VISUAL_TOKENS_PER_IMAGE
        latents = ("latent",) * r
        visual = ("visual",) * (2 * r)
        second = (real + 1) // 2  # text position the second image comes before
        image_of = (torch.arange(n) >= second).long()  # (n,) the last image before token i
        mask = image_of[:, None] == torch.arange(2 * r)[None, :] // r  # (n, 2r)
        return [
            layer("resampler attention", "latents", "patches + latents",
                  torch.ones(r, grid**2 + r, dtype=torch.bool), latents, patches + latents),
            layer("language model self-attention", "text", "text", causal, text, text),
            layer("gated cross-attention", "text", "visual tokens", mask, text, visual),
        ]
    # LLaVA: the image's tokens come first in the language model's one sequence.
    both = patches + text
    keys_both = torch.cat([torch.ones(grid**2, dtype=torch.bool), keys_real])  # (g² + n,)
    return [
        layer("image encoder self-attention", "image", "image", full_image, vit, vit),
        layer("language model self-attention", "image + text", "image + text",
              causal_mask(len(both)) & keys_both, both, both),
    ]


def cross_modal_entries(layer: AttentionLayer) -> int:
    """How many (query, key) pairs the layer allows between a text and an image token."""
    q = torch.tensor([MODALITY[t] == "text" for t in layer.query_tokens])  # (n,)
    k = torch.tensor([MODALITY[t] == "text" for t in layer.key_tokens])  # (m,)
    across = q[:, None] != k[None, :]  # (n, m)
    return int((layer.mask & across).sum())


def vit_num_tokens(image_size: int, patch_size: int, cls_token: bool = True) -> int:
    """ViT's sequence length: (image_size / patch_size)² patches, plus one [CLS] token."""
    require_positive_int("image_size", image_size)
    require_positive_int("patch_size", patch_size)
    if image_size % patch_size:
        raise ValueError(
            f"patch_size={patch_size} must divide image_size={image_size}; ViT crops or "
            f"resizes the image first"
        )
    return (image_size // patch_size) ** 2 + int(cls_token)


def patchify(images: torch.Tensor, patch_size: int) -> torch.Tensor:
    """(B, C, H, W) images → (B, N, C·p·p) patches, row by row, each flattened as (C, p, p).

    This order makes ``patchify(x) @ conv.weight.flatten(1).T + conv.bias`` equal a
    ``Conv2d(C, d_model, p, stride=p)``: ViT's patch embedding is that convolution.
    """
    require_tensor("images", images)
    require_positive_int("patch_size", patch_size)
    if images.ndim != 4:
        raise ValueError(f"images has shape {shape_str(images.shape)} but must be (B, C, H, W)")
    B, C, H, W = images.shape
    p = patch_size
    if H % p or W % p:
        raise ValueError(
            f"images has shape {shape_str(images.shape)}: patch_size={p} must divide "
            f"H={H} and W={W}"
        )
    x = images.reshape(B, C, H // p, p, W // p, p)  # (B, C, rows, p, cols, p)
    x = x.permute(0, 2, 4, 1, 3, 5)  # (B, rows, cols, C, p, p)
    return x.reshape(B, (H // p) * (W // p), C * p * p)  # (B, N, C·p·p)


def clip_logits(image_features: torch.Tensor, text_features: torch.Tensor,
                logit_scale: float = 100.0) -> torch.Tensor:
    """CLIP's similarity matrix: (N_img, d), (N_txt, d) → (N_img, N_txt).

    Both batches are L2-normalised, so entry [i, j] is ``logit_scale`` times the cosine of
    image i and text j (CLIP learns the scale; it ends at 100, its cap).
    """
    for name, x in (("image_features", image_features), ("text_features", text_features)):
        require_tensor(name, x, floating=True)
        if x.ndim != 2:
            raise ValueError(f"{name} has shape {shape_str(x.shape)} but must be (N, d)")
    if image_features.shape[1] != text_features.shape[1]:
        raise ValueError(
            f"text_features has shape {shape_str(text_features.shape)} but image_features "
            f"has d={image_features.shape[1]}; both must be embedded to the same width"
        )
    img = F.normalize(image_features, dim=-1)  # (N_img, d), unit rows
    txt = F.normalize(text_features, dim=-1)  # (N_txt, d), unit rows
    return logit_scale * img @ txt.T  # (N_img, N_txt)


def clip_loss(logits: torch.Tensor) -> torch.Tensor:
    """CLIP's symmetric contrastive loss on a square (N, N) matrix whose diagonal pairs match."""
    require_tensor("logits", logits, floating=True)
    if logits.ndim != 2 or logits.shape[0] != logits.shape[1]:
        raise ValueError(f"logits has shape {shape_str(logits.shape)} but must be (N, N)")
    labels = torch.arange(logits.shape[0])  # (N,) image i goes with text i
    return (F.cross_entropy(logits, labels) + F.cross_entropy(logits.T, labels)) / 2


class DualEncoder(nn.Module):
    """A tiny CLIP: an image tower and a text tower that never see each other.

    Image: patches → linear → [CLS] + positions → one bidirectional self-attention layer
    → the [CLS] state. Text: embeddings + positions → one causal self-attention layer
    → the state of the last real token. Each is projected to ``d_embed``.
    """

    def __init__(self, vocab: int = 32, d_model: int = 32, d_embed: int = 16,
                 image_size: int = 8, patch_size: int = 4, channels: int = 3,
                 max_len: int = 8, num_heads: int = 2):
        super().__init__()
        self.patch_size = patch_size
        num_patches = vit_num_tokens(image_size, patch_size, cls_token=False)
        self.patch_embed = nn.Linear(channels * patch_size**2, d_model)
        self.cls = nn.Parameter(torch.randn(1, 1, d_model))
        self.image_pos = nn.Parameter(torch.randn(1, num_patches + 1, d_model))
        self.image_attn = MultiHeadAttention(d_model, num_heads)
        self.image_proj = nn.Linear(d_model, d_embed, bias=False)
        self.token_embed = nn.Embedding(vocab, d_model)
        self.text_pos = nn.Parameter(torch.randn(1, max_len, d_model))
        self.text_attn = MultiHeadAttention(d_model, num_heads)
        self.text_proj = nn.Linear(d_model, d_embed, bias=False)

    def encode_image(self, images: torch.Tensor) -> torch.Tensor:
        """(B, C, H, W) → (B, d_embed)."""
        x = self.patch_embed(patchify(images, self.patch_size))  # (B, N, d_model)
        x = torch.cat([self.cls.expand(len(x), -1, -1), x], dim=1) + self.image_pos
        x = x + self.image_attn(x, x, x)[0]  # (B, 1 + N, d_model), no mask: bidirectional
        return self.image_proj(x[:, 0])  # (B, d_embed): the [CLS] state

    def encode_text(self, tokens: torch.Tensor, lengths) -> torch.Tensor:
        """(B, n) token ids, real lengths (B,) → (B, d_embed)."""
        n = tokens.shape[1]
        keys = padding_mask(lengths, n)[:, None, None, :]  # (B, 1, 1, n)
        x = self.token_embed(tokens) + self.text_pos[:, :n]  # (B, n, d_model)
        x = x + self.text_attn(x, x, x, causal_mask(n) & keys)[0]  # (B, n, d_model)
        last = torch.as_tensor(lengths) - 1  # (B,) the last real token, CLIP's [EOS]
        return self.text_proj(x[torch.arange(len(x)), last])  # (B, d_embed)

    def forward(self, images, tokens, lengths, logit_scale: float = 100.0) -> torch.Tensor:
        """(N_img, N_txt) logits: one product of the two separately encoded batches."""
        return clip_logits(self.encode_image(images), self.encode_text(tokens, lengths),
                           logit_scale)
