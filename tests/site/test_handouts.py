"""Printable handouts: every chapter prints to a PDF whose first page carries its question;
in the Chinese edition too (a sample of chapters: the printing is the same code)."""

import re
import sys
import unicodedata
from pathlib import Path

import nbformat
import pytest
from pypdf import PdfReader

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
from make_handouts import chapter_pages, print_pages  # noqa: E402
from translations import LOCALE, load, messages  # noqa: E402


def _words(text: str) -> str:
    """Collapse white space, undo hyphenation at line ends and ligatures such as 'ﬃ';
    the site sets apostrophes typographically (today’s), the notebook types them plainly."""
    text = unicodedata.normalize("NFKC", text).replace("’", "'")
    return re.sub(r"-\s+", "-", re.sub(r"\s+", " ", text)).strip()


@pytest.fixture(scope="module")
def handouts(browser, site_url, tmp_path_factory):
    pdfs = print_pages(browser, site_url, tmp_path_factory.mktemp("handouts"))
    return {pdf.stem: pdf for pdf in pdfs}


def test_every_chapter_prints_with_its_question_on_the_first_page(handouts):
    assert len(handouts) == len(chapter_pages()) > 0
    for stem, pdf in handouts.items():
        title = nbformat.read(ROOT / "book" / f"{stem}.ipynb", as_version=4).cells[0].source
        question = _words(title.splitlines()[0].lstrip("# ").split("·", 1)[1])
        first_page = _words(PdfReader(pdf).pages[0].extract_text())
        assert question in first_page, f"{stem}: {question!r} not on its PDF's first page"


ZH_SAMPLE = ["q04_why_scale_by_sqrt_dk", "q21_flash_attention", "q38_model_anatomy"]


def test_zh_handouts_print_with_the_chinese_question(browser, site_url, tmp_path):
    pdfs = print_pages(browser, site_url, tmp_path, edition="zh", only=ZH_SAMPLE)
    assert [pdf.stem for pdf in pdfs] == ZH_SAMPLE
    for pdf in pdfs:
        title = messages(load(LOCALE / "book" / f"{pdf.stem}.po"))[0].string
        question = _words(title.split("·", 1)[1])
        first_page = _words(PdfReader(pdf).pages[0].extract_text())
        assert question.replace(" ", "") in first_page.replace(" ", ""), (pdf.stem, question)
