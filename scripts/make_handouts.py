"""Print every chapter of the built site to PDF with headless Chromium: `make handouts`.

Usage: python scripts/make_handouts.py [OUT_DIR]   (default: handouts/)

The English chapters go to OUT_DIR, the Chinese edition's to OUT_DIR/zh. The site is served
on 127.0.0.1 while printing; each explorer prints its default frame and figures. Needs the
built site (`make book`) and Chromium.
"""

import sys
from pathlib import Path

from built_site import ROOT, SITE, chromium, serve

EDITIONS = {"": "English", "zh": "Chinese"}  # each edition's folder in the site


def chapter_pages() -> list[Path]:
    return sorted((SITE / "book").glob("q*.html"))


def print_pages(browser, url: str, out_dir: Path, edition: str = "", only=None) -> list[Path]:
    """Print each chapter (or those named in ``only``) of the site at ``url`` to ``out_dir``
    with a running browser, from the edition in folder ``edition`` ("" English, "zh")."""
    out_dir.mkdir(parents=True, exist_ok=True)
    page = browser.new_page()
    written = []
    base = f"{url}/{edition}" if edition else url
    for html in chapter_pages():
        if only is not None and html.stem not in only:
            continue
        page.goto(f"{base}/book/{html.name}", wait_until="load")  # images and styles
        pdf = out_dir / html.with_suffix(".pdf").name
        print_page(page, pdf)
        written.append(pdf)
        print(f"wrote {pdf.relative_to(ROOT) if pdf.is_relative_to(ROOT) else pdf}")
    page.close()
    return written


def print_page(page, pdf: Path, pages: str = "") -> None:
    """Print the loaded page to ``pdf`` once its fonts and maths are ready (``pages``: the
    page range to write, e.g. "1"; every page by default)."""
    page.evaluate("() => document.fonts.ready.then(() => true)")
    page.wait_for_function("() => !document.querySelector('.math:not(:has(mjx-container))')")
    page.pdf(path=str(pdf), format="A4", print_background=True, page_ranges=pages)


def print_handouts(out_dir: Path) -> list[Path]:
    if not (SITE / "index.html").exists():
        raise SystemExit("no built site: run `make book` first")
    with serve(SITE) as url, chromium() as browser:
        return [
            pdf
            for edition in EDITIONS
            for pdf in print_pages(browser, url, out_dir / edition, edition)
        ]


if __name__ == "__main__":
    print_handouts(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "handouts")
