"""The checker of q23: CLIP's logits."""

import re

import pytest
import torch.nn.functional as F

from attention_qa.checks.families import CLIP_SLIPS, check_clip_logits, clip_variant
from attention_qa.families import clip_logits


def test_clip_checker_passes_the_package_and_a_learner():
    check_clip_logits(clip_logits)

    def learner(img, txt, scale):
        img = img / img.norm(dim=1, keepdim=True)
        txt = txt / txt.norm(dim=1, keepdim=True)
        return scale * (img @ txt.T)

    check_clip_logits(learner)


@pytest.mark.parametrize("bug", list(CLIP_SLIPS))
def test_clip_checker_names_each_slip(bug):
    with pytest.raises(AssertionError, match=re.escape(CLIP_SLIPS[bug][:30])):
        check_clip_logits(lambda img, txt, scale: clip_variant(img, txt, scale, bug))


def test_clip_checker_names_a_transpose_a_wrong_shape_and_a_crash():
    with pytest.raises(AssertionError, match="the matrix is transposed"):
        check_clip_logits(lambda img, txt, scale: clip_logits(img, txt, scale).T)
    with pytest.raises(AssertionError, match="has shape"):
        check_clip_logits(lambda img, txt, scale: clip_logits(img, txt, scale)[:, :1])
    with pytest.raises(AssertionError, match="raised ZeroDivisionError"):
        check_clip_logits(lambda img, txt, scale: 1 / 0)


def test_clip_checker_says_how_far_off_an_unknown_slip_is():
    with pytest.raises(AssertionError, match="off by up to"):
        check_clip_logits(lambda img, txt, scale: F.normalize(img, dim=-1)
                          @ F.normalize(txt, dim=-1).T * scale + 1)
