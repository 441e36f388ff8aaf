"""The checker of q23's exercise: ``check_clip_logits``."""

from __future__ import annotations

from functools import partial
from typing import Callable

import torch
import torch.nn.functional as F

from attention_qa.checks.common import as_answer, call_learner, close, diagnose, require_shape
from attention_qa.families import clip_logits

CLIP_SLIPS = {
    "unnormalised": (
        "the features are not normalised: divide each image row and each text row by its "
        "length first, so that an entry is a cosine (F.normalize(x, dim=-1))"
    ),
    "normalised_over_batch": (
        "the features are normalised over the batch (dim=0): each *row* is one image or one "
        "text and must have length 1, so normalise along dim=-1"
    ),
    "only_images": "only the image features are normalised: normalise the text rows too",
    "only_texts": "only the text features are normalised: normalise the image rows too",
    "no_scale": "the cosines are not multiplied by logit_scale",
    "divided": (
        "the cosines are divided by logit_scale: it is the inverse temperature, so multiply"
    ),
    "softmax": (
        "a softmax was applied: the logits are the scaled cosines themselves; the loss "
        "applies the softmax, over the rows and over the columns"
    ),
}


def clip_variant(image_features, text_features, logit_scale, bug: str | None = None):
    """CLIP's logits (N_img, N_txt), with one known slip switched on."""
    img, txt = image_features, text_features
    if bug not in ("unnormalised", "only_texts", "normalised_over_batch"):
        img = F.normalize(img, dim=-1)
    if bug not in ("unnormalised", "only_images", "normalised_over_batch"):
        txt = F.normalize(txt, dim=-1)
    if bug == "normalised_over_batch":
        img, txt = F.normalize(img, dim=0), F.normalize(txt, dim=0)
    cosines = img @ txt.T  # (N_img, N_txt)
    if bug == "no_scale":
        return cosines
    if bug == "divided":
        return cosines / logit_scale
    logits = logit_scale * cosines
    return torch.softmax(logits, dim=-1) if bug == "softmax" else logits


def check_clip_logits(fn: Callable) -> None:
    """Check ``fn(image_features, text_features, logit_scale) -> (N_img, N_txt)`` logits."""
    g = torch.Generator().manual_seed(23)

    def features(n, d, spread=1.0):
        return torch.randn(n, d, generator=g, dtype=torch.float64) * spread

    cases = [
        ("3 images and 5 texts of width 8, logit_scale 100", features(3, 8), features(5, 8), 100.0),
        ("4 images and 2 texts of width 6 with long rows, logit_scale 10",
         features(4, 6, 7.0), features(2, 6, 0.3), 10.0),
        ("1 image and 3 texts of width 4, logit_scale 2.5", features(1, 4), features(3, 4), 2.5),
    ]
    for case, img, txt, scale in cases:
        expected = clip_logits(img, txt, scale)  # (N_img, N_txt)
        got = as_answer(call_learner(fn, case, img.clone(), txt.clone(), scale), case, "the logits")
        if (isinstance(got, torch.Tensor) and got.shape == expected.T.shape != expected.shape
                and close(got, expected.T)):
            raise AssertionError(
                f"on {case}, the matrix is transposed: rows are images and columns texts, "
                f"so the shape is (N_img, N_txt) = {tuple(expected.shape)}"
            )
        got = require_shape(got, expected.shape, case, "the logits")
        diagnose(
            got, expected, case, "the logits", "logit_scale · cosine(image i, text j)",
            CLIP_SLIPS, partial(clip_variant, img, txt, scale),
        )
