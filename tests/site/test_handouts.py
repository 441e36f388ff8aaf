"""Printable handouts: every English chapter prints with its question on the first page
(checked on each chapter's one load in ``test_every_page.py``, printing that page), and
`make handouts` prints whole chapters of each edition. The Chinese edition is printed by the
same code from its twin pages: three chapters of it are printed whole here (printing a page
with Chinese fonts costs about a second, so not every one)."""

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

CHAPTER = re.compile(r"^book/(q\d\d_\w+)\.html$")  # an English chapter


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


def _cjk(char: str) -> bool:
    """A Chinese character or radical (not Chinese punctuation, U+3000–U+303F)."""
    return ("\u2e80" <= char <= "\u2fdf" or "\u3400" <= char <= "\u9fff"
            or "\uf900" <= char <= "\ufaff")


def printed_with(wanted: str, printed: str, slack: int = 2) -> bool:
    """Whether ``printed`` (a PDF's text, spaces removed) carries ``wanted``. Reading a
    Chinese PDF back maps each glyph to one code point, and a glyph that several code points
    share can come back as another (长 as the radical ⻓, 户 as 戶): so up to ``slack``
    Chinese characters may come back as other Chinese characters; everything else, and the
    length, must be the same."""
    n = len(wanted)
    for start in range(len(printed) - n + 1):
        window = printed[start : start + n]
        differ = [(a, b) for a, b in zip(wanted, window, strict=True) if a != b]
        if len(differ) <= slack and all(_cjk(a) and _cjk(b) for a, b in differ):
            return True
    return False


def check_printed_question(page, path: str, out_dir: Path) -> None:
    """An English chapter's page, printed, carries its question on the first sheet."""
    found = CHAPTER.match(path)
    if not found:
        return
    pdf = out_dir / f"{found.group(1)}.pdf"
    print_page(page, pdf, pages="1")
    wanted, printed = question(found.group(1), chinese=False), first_page_text(pdf)
    assert wanted in printed, f"{path}: {wanted!r} not on its printed first page: {printed[:200]!r}"


def test_the_page_tests_print_every_english_chapter():
    from tests.site.test_every_page import PAGES

    printed = sorted(m.group(1) for p in PAGES if (m := CHAPTER.match(p)))
    assert printed == [p.stem for p in chapter_pages()] != []


def test_handouts_print_whole_chapters(browser, site_url, tmp_path):
    stems = [p.stem for p in chapter_pages()][:2]
    pdfs = print_pages(browser, site_url, tmp_path, only=stems)
    assert [pdf.stem for pdf in pdfs] == stems
    for pdf in pdfs:
        assert len(PdfReader(pdf).pages) > 1
        assert question(pdf.stem, chinese=False) in first_page_text(pdf)


def test_zh_handouts_print_whole_chapters(browser, site_url, tmp_path):
    chapters = [p.stem for p in chapter_pages()]
    stems = [chapters[0], chapters[len(chapters) // 2], chapters[-1]]  # from across the book
    pdfs = print_pages(browser, site_url, tmp_path, edition="zh", only=stems)
    assert [pdf.stem for pdf in pdfs] == stems
    for pdf in pdfs:
        assert len(PdfReader(pdf).pages) > 1
        wanted = question(pdf.stem, chinese=True).replace(" ", "")
        assert printed_with(wanted, first_page_text(pdf).replace(" ", ""))


def test_a_chinese_question_is_found_despite_shared_glyphs_and_only_then():
    wanted = "同时服务许多用户:连续批处理、前缀缓存"
    assert printed_with(wanted, "q44·同时服务许多用戶:连续批处理、前缀缓存目录")
    assert printed_with(wanted, "q44·" + wanted)
    assert not printed_with(wanted, "q44·同时服务许多用户:连续批处理、前缀缓")  # cut short
    assert not printed_with(wanted, "q44·异时服务许多用戶:断续批处理、前缀缓存")  # three differ
    assert not printed_with(wanted, "q44·同时服务许多用户;连续批处理、前缀缓存")  # punctuation
    assert not printed_with(wanted, "q44·同时服务许多用户:连续批处理。前缀缓存")  # Chinese too
