"""The theme's icons, without the 1.5 MB script that draws every Font Awesome icon there is.

pydata-sphinx-theme loads ``fontawesome.js``, which turns each ``<i class="fa-…">`` into
an SVG from its table of some two thousand icons. Its stylesheet already draws the same
``<i>`` icons, and the icons its own rules add (admonitions, external links, the
breadcrumbs), from the Font Awesome font, so the book keeps the stylesheet and:

* ``drop_icon_script`` (called by ``book_pages`` on every page) removes the script tag;
* ``cut_icon_font`` (``build-finished``) replaces the site's copy of the solid icon font with
  one holding only the icons the built pages, the theme's scripts and its stylesheet's own
  rules use, drops the stylesheet's rules for every other icon, and deletes the script.

Every button the theme draws (search, menu, colour mode, full screen, download, sidebar
toggles) keeps its icon; ``tests/site/test_weight.py`` checks that each one is drawn.
"""

from __future__ import annotations

import re
from pathlib import Path

from sphinx.util import logging

logger = logging.getLogger(__name__)

SCRIPT_TAG = re.compile(
    r"[ \t]*(?:<!-- So that users can add custom icons -->\s*)?"
    r'<script\b[^>]*src="[^"]*scripts/fontawesome\.js[^"]*"[^>]*></script>\n?'
)
ICON_CLASS = re.compile(r"\bfa-[a-z0-9]+(?:-[a-z0-9]+)*")
# An icon rule of Font Awesome's stylesheet: .fa-bars:before,.fa-navicon:before{content:"\f0c9"}
ICON_RULE = re.compile(r'((?:\.fa-[a-z0-9-]+:before,?)+)\{content:"([^"]*)"\}')
# The theme's own icons, as custom properties: --pst-icon-bell:"<private-use character>";
THEME_ICON = re.compile(r'--pst-[a-z-]+:\s*"([^"]*)"')

SOLID_FONT = "vendor/fontawesome/webfonts/fa-solid-900"
THEME_CSS = "styles/pydata-sphinx-theme.css"
DELETED = ["scripts/fontawesome.js", "scripts/fontawesome.js.map"]


def drop_icon_script(page_html: str) -> str:
    return SCRIPT_TAG.sub("", page_html, count=1)


def _theme_static() -> Path:
    import pydata_sphinx_theme

    return Path(pydata_sphinx_theme.__file__).parent / "theme" / "pydata_sphinx_theme" / "static"


def _css_codepoints(value: str) -> set[int]:
    """The characters a CSS string stands for: "\\f0c9" or the character itself."""
    value = re.sub(r"\\([0-9a-fA-F]{1,6})\s?", lambda m: chr(int(m.group(1), 16)), value)
    return {ord(ch) for ch in value}


def icon_names_used(outdir: Path) -> set[str]:
    """fa-… names in the built pages (class attributes) and in the theme's own scripts."""
    names: set[str] = set()
    for page in outdir.rglob("*.html"):
        for classes in re.findall(r'class="([^"]*\bfa-[^"]*)"', page.read_text(encoding="utf-8")):
            names |= set(ICON_CLASS.findall(classes))
    for script in (outdir / "_static").rglob("*.js"):
        if script.name != "fontawesome.js":
            names |= set(ICON_CLASS.findall(script.read_text(encoding="utf-8", errors="ignore")))
    return names


def codepoints_used(theme_css: str, names: set[str], other_css: list[str]) -> set[int]:
    points: set[int] = set()
    for selectors, content in ICON_RULE.findall(theme_css):
        if names & set(re.findall(r"\.(fa-[a-z0-9-]+):before", selectors)):
            points |= _css_codepoints(content)
    for css in [theme_css, *other_css]:
        for value in THEME_ICON.findall(css):
            points |= _css_codepoints(value)
    return {p for p in points if 0xE000 <= p <= 0xF8FF or p >= 0xF0000}  # the icon range


def trim_icon_rules(theme_css: str, names: set[str]) -> str:
    """The stylesheet without the rules of icons no page uses (and no stale source map)."""

    def keep(match: re.Match) -> str:
        used = names & set(re.findall(r"\.(fa-[a-z0-9-]+):before", match.group(1)))
        return match.group(0) if used else ""

    trimmed = ICON_RULE.sub(keep, theme_css)
    return re.sub(r"/\*# sourceMappingURL=[^*]*\*/", "", trimmed)


def subset_font(source: Path, codepoints: set[int], out: Path) -> None:
    from fontTools import subset
    from fontTools.ttLib import TTFont

    options = subset.Options()
    options.flavor = "woff2"
    options.name_IDs = ["*"]  # keep the copyright and licence records
    font = TTFont(source)
    subsetter = subset.Subsetter(options)
    subsetter.populate(unicodes=sorted(codepoints))
    subsetter.subset(font)
    font.flavor = "woff2"
    font.recalcTimestamp = False  # the same input makes the same file
    font.save(out)


def cut_icon_font(app, exception) -> None:
    if exception or app.builder.format != "html":
        return
    outdir = Path(app.outdir)
    static = outdir / "_static"
    theme_css = (_theme_static() / THEME_CSS).read_text(encoding="utf-8")
    other_css = [
        p.read_text(encoding="utf-8")
        for p in static.rglob("*.css")
        if p.name != Path(THEME_CSS).name
    ]
    names = icon_names_used(outdir)
    points = codepoints_used(theme_css, names, other_css)
    subset_font(_theme_static() / f"{SOLID_FONT}.ttf", points, static / f"{SOLID_FONT}.woff2")
    (static / THEME_CSS).write_text(trim_icon_rules(theme_css, names), encoding="utf-8")
    for name in DELETED:
        (static / name).unlink(missing_ok=True)
    logger.info("icon font: %d glyphs, for %s", len(points), ", ".join(sorted(names)))


def setup(app):
    app.connect("build-finished", cut_icon_font)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
