"""Printable handouts: every chapter of both editions prints with its question on the first
page (checked on each chapter's one load in ``test_every_page.py``, printing that page), and
`make handouts` prints whole chapters of each edition."""

import re
import sys
import unicodedata
from pathlib import Path

import nbformat
from pypdf import PdfReader

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
from make_handouts import chapter_pages, print_page, print_pages  # noqa: E402
from translations import LOCALE, load, messages  # noqa: E402

CHAPTER = re.compile(r"^(zh/)?book/(q\d\d_\w+)\.html$")


def _words(text: str) -> str:
    """Collapse white space, undo hyphenation at line ends and ligatures such as 'ﬃ';
    the site sets apostrophes typographically (today’s), the notebook types them plainly."""
    text = unicodedata.normalize("NFKC", text).replace("’", "'")
    return re.sub(r"-\s+", "-", re.sub(r"\s+", " ", text)).strip()


def question(stem: str, chinese: bool) -> str:
    """The chapter's question, from its notebook's title or the title's translation."""
    if chinese:
        title = messages(load(LOCALE / "book" / f"{stem}.po"))[0].string
    else:
        title = nbformat.read(ROOT / "book" / f"{stem}.ipynb", as_version=4).cells[0].source
        title = title.splitlines()[0].lstrip("# ")
    return _words(title.split("·", 1)[1])


def first_page_text(pdf: Path) -> str:
    return _words(PdfReader(pdf).pages[0].extract_text())


def check_printed_question(page, path: str, out_dir: Path) -> None:
    """A chapter's page, printed, carries its question on the first sheet."""
    found = CHAPTER.match(path)
    if not found:
        return
    chinese, stem = bool(found.group(1)), found.group(2)
    pdf = out_dir / f"{stem}.pdf"
    print_page(page, pdf, pages="1")
    wanted, printed = question(stem, chinese), first_page_text(pdf)
    if chinese:  # the PDF's text has no spaces where Chinese runs into Latin
        wanted, printed = wanted.replace(" ", ""), printed.replace(" ", "")
    assert wanted in printed, f"{path}: {wanted!r} not on its printed first page"


def test_handouts_print_whole_chapters(browser, site_url, tmp_path):
    stems = [p.stem for p in chapter_pages()][:2]
    pdfs = print_pages(browser, site_url, tmp_path, only=stems)
    assert [pdf.stem for pdf in pdfs] == stems
    for pdf in pdfs:
        assert len(PdfReader(pdf).pages) > 1
        assert question(pdf.stem, chinese=False) in first_page_text(pdf)


def test_zh_handouts_print_whole_chapters(browser, site_url, tmp_path):
    stems = [p.stem for p in chapter_pages()][-2:]
    pdfs = print_pages(browser, site_url, tmp_path, edition="zh", only=stems)
    assert [pdf.stem for pdf in pdfs] == stems
    for pdf in pdfs:
        assert len(PdfReader(pdf).pages) > 1
        wanted = question(pdf.stem, chinese=True).replace(" ", "")
        assert wanted in first_page_text(pdf).replace(" ", "")
