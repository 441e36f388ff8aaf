"""Maths typeset at build time (_ext/book_math.py): SVG that follows the text colour, with
MathML for screen readers, and a plain reading for search snippets."""

import html as html_text
import json
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "_ext"))

import book_math  # noqa: E402

needs_mathjax = pytest.mark.skipif(
    not (ROOT / "node_modules" / "mathjax-full").exists(),
    reason="node_modules/mathjax-full is missing: run `npm ci` (make does it)",
)


def book_formulas() -> set[str]:
    """Every $…$ and $$…$$ in the chapters' and pages' prose."""
    formulas = set()
    for path in sorted((ROOT / "book").glob("*.ipynb")) + sorted((ROOT / "book").glob("*.md")):
        text = path.read_text()
        if path.suffix == ".ipynb":
            cells = json.loads(text)["cells"]
            text = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
        for found in re.finditer(r"\$\$(.+?)\$\$|(?<![\\$])\$([^$\n]+?)\$", text, re.S):
            formulas.add((found.group(1) or found.group(2)).strip())
    return formulas


@pytest.mark.parametrize(
    "tex, text",
    [
        (r"\sqrt{d_k}", "√d_k"),
        (r"d_\text{model}", "d_model"),
        (r"\operatorname{softmax}(QK^\top/\sqrt{d_k})\,V", "softmax(QK^⊤/√d_k) V"),
        (r"\frac{q \cdot k}{\sqrt{d_k}}", "(q · k)/√d_k"),
        (r"\max_{j \in B} s_j", "max_(j ∈ B) s_j"),
        (r"x \in \mathbb{R}^{n \times d}", "x ∈ ℝ^(n × d)"),
        (r"\begin{pmatrix} a \\ b \end{pmatrix}", "( a ; b )"),
    ],
)
def test_plain_reading(tex, text):
    assert book_math.tex_to_text(tex) == text


def test_no_formula_of_the_book_reads_as_tex():
    formulas = book_formulas()
    assert len(formulas) > 100
    leftovers = {tex: book_math.tex_to_text(tex) for tex in formulas}
    assert not {t: r for t, r in leftovers.items() if "\\" in r}


@needs_mathjax
def test_svg_follows_the_text_colour_and_carries_mathml():
    renderer = book_math.TexRenderer()
    try:
        inline = renderer.render(r"\sqrt{d_k}", display=False)
        block = renderer.render(r"\begin{align} a &= b \\ c &= d \end{align}", display=True)
        with pytest.raises(book_math.TexError):
            renderer.render(r"\frac{a}{", display=False)
        css = renderer.stylesheet()
    finally:
        renderer.close()
    assert "fill: currentColor" in css and "stroke: currentColor" in css
    for html in (inline, block):
        assert "fill=" not in html and "stroke=" not in html  # the stylesheet colours them
        assert "<mjx-assistive-mml" in html and "<math" in html and 'aria-hidden="true"' in html
    assert 'display="true"' in block and 'display="true"' not in inline
    used = set(book_math.GLYPH_USE.findall(inline + block))
    assert used and used <= set(renderer.outlines)


def test_display_blocks_are_wrapped_as_sphinx_does():
    from docutils import nodes

    def block(tex, nowrap=False):
        return nodes.math_block(tex, tex, nowrap=nowrap, number=None)

    assert book_math.display_tex(block("a = b")) == "a = b"
    assert book_math.display_tex(block(r"a \\ b")) == r"\begin{split}a \\ b\end{split}"
    two = book_math.display_tex(block("a = b\n\nc = d"))
    assert two.startswith(r"\begin{align}\begin{aligned}") and r"a = b\\c = d" in two
    assert book_math.display_tex(block(r"\begin{align}x\end{align}", True)) == (
        r"\begin{align}x\end{align}"
    )


@needs_mathjax
def test_a_page_points_at_each_glyph_by_a_short_id_and_carries_its_outline_once():
    formulas = [book_math.RENDERER.render(tex, False) for tex in ("x + y", "y^2")]
    page = "<body>" + "".join(formulas) + "</body>"
    long_ids = set(book_math.GLYPH_USE.findall(page))
    assert long_ids, "MathJax's formulas point at glyph outlines by id"
    shared, defs = book_math.share_glyphs(page)
    assert "MJX-" not in shared + defs
    uses = re.findall(r'<use href="#(mj[0-9a-f]+)"/>', shared)
    paths = re.findall(r'<path id="(mj[0-9a-f]+)" d="[^"]+"/>', defs)
    assert sorted(set(uses)) == sorted(paths) and len(paths) == len(long_ids)
    assert len(uses) > len(paths)  # y is used twice, its outline written once
    # the same glyphs, id for id: each short id's outline is the long id's
    for long_id, short_id in zip(sorted(long_ids), sorted(paths, key=lambda p: int(p[2:], 16)),
                                 strict=True):
        outline = html_text.escape(book_math.RENDERER.outlines[long_id])
        assert f'<path id="{short_id}" d="{outline}"/>' in defs
