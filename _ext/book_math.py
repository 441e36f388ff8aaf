"""Maths typeset when the book is built, so that no page loads MathJax.

* ``tex_svg`` is Sphinx's HTML maths renderer for the book (``html_math_renderer``): each
  formula goes to one long-lived Node process (``_ext/tex2svg.js``, MathJax from
  ``node_modules``), which answers with SVG drawn in ``currentColor`` (so dark mode
  recolours it) and MathJax's assistive MathML (read by screen readers). Inline and display
  maths, amsmath environments and numbered equations all go through it; a TeX error is a
  build warning, which ``-W`` turns into a failed build.
* Glyph outlines are shared within a page: a formula's SVG only points at them (``<use>``),
  and ``share_glyphs`` writes each outline the page uses once, under a short id, in a
  hidden ``<svg>`` (see ``book_pages``, which calls it as each page is finished).
* Each formula also carries a plain-text reading (``data-text``, from ``tex_to_text``),
  which the search page shows in its snippets instead of TeX or MathML run together.
* ``math.css``, the few rules the containers need, is written into ``_static`` from
  MathJax's own stylesheet when the build starts.
"""

from __future__ import annotations

import html
import json
import os
import re
import subprocess
import threading
from pathlib import Path

from docutils import nodes
from sphinx.errors import ExtensionError
from sphinx.locale import _
from sphinx.util import logging
from sphinx.util.math import get_node_equation_number

logger = logging.getLogger(__name__)

HERE = Path(__file__).resolve().parent
SCRIPT = HERE / "tex2svg.js"
STYLESHEET = "math.css"
NEEDS = "Maths needs Node and MathJax (`apt-get install nodejs npm`, then `npm ci`)"
GLYPH_USE = re.compile(r'<use\b[^>]*\bhref="#(MJX-[A-Za-z0-9-]+)"')


class TexError(Exception):
    pass


class TexRenderer:
    """One Node process for the whole build, started on first use, with a formula cache."""

    def __init__(self):
        self._process = None
        self._owner = None
        self._lock = threading.Lock()
        self._cache: dict[tuple[str, bool], str] = {}
        self.outlines: dict[str, str] = {}  # glyph id -> SVG path data, every glyph seen

    def _start(self) -> None:
        try:
            self._process = subprocess.Popen(
                ["node", str(SCRIPT)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
                encoding="utf-8",
                cwd=HERE.parent,
            )
        except FileNotFoundError as err:
            raise ExtensionError(f"{NEEDS}: no `node` on the PATH") from err
        self._owner = os.getpid()

    def _ask(self, request: dict) -> dict:
        with self._lock:
            if self._process is None or self._owner != os.getpid():  # a forked writer
                self._start()
            try:
                self._process.stdin.write(json.dumps(request) + "\n")
                self._process.stdin.flush()
                line = self._process.stdout.readline()
            except BrokenPipeError:
                line = ""
        if not line:  # Node printed why on stderr
            raise ExtensionError(f"{NEEDS}: node _ext/tex2svg.js stopped")
        return json.loads(line)

    def render(self, tex: str, display: bool) -> str:
        key = (tex, display)
        if key not in self._cache:
            answer = self._ask({"tex": tex, "display": display})
            if "error" in answer:
                raise TexError(answer["error"])
            self.outlines.update(answer["glyphs"])
            self._cache[key] = answer["html"]
        return self._cache[key]

    def stylesheet(self) -> str:
        return self._ask({"stylesheet": True})["css"]

    def close(self):
        if self._process is not None and self._owner == os.getpid():
            self._process.stdin.close()
            self._process.wait(timeout=10)
        self._process = None


RENDERER = TexRenderer()


# --- TeX as plain text, for search snippets -------------------------------------------

# fmt: off
_SYMBOLS = {
    "alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "epsilon": "ε", "varepsilon": "ε",
    "zeta": "ζ", "eta": "η", "theta": "θ", "iota": "ι", "kappa": "κ", "lambda": "λ", "mu": "μ",
    "nu": "ν", "xi": "ξ", "pi": "π", "rho": "ρ", "sigma": "σ", "tau": "τ", "phi": "φ",
    "varphi": "φ", "chi": "χ", "psi": "ψ", "omega": "ω", "Gamma": "Γ", "Delta": "Δ",
    "Theta": "Θ", "Lambda": "Λ", "Pi": "Π", "Sigma": "Σ", "Phi": "Φ", "Psi": "Ψ", "Omega": "Ω",
    "cdot": "·", "times": "×", "div": "÷", "pm": "±", "top": "⊤", "in": "∈", "notin": "∉",
    "le": "≤", "leq": "≤", "ge": "≥", "geq": "≥", "ne": "≠", "neq": "≠", "approx": "≈",
    "sim": "∼", "ll": "≪", "gg": "≫", "sum": "Σ", "prod": "Π", "infty": "∞", "partial": "∂",
    "to": "→", "rightarrow": "→", "leftarrow": "←", "mapsto": "↦", "Rightarrow": "⇒",
    "oplus": "⊕", "otimes": "⊗", "odot": "⊙", "circ": "∘", "nabla": "∇",
    "dots": "…", "ldots": "…", "cdots": "⋯", "vdots": "⋮", "ddots": "⋱",
    "lVert": "‖", "rVert": "‖", "Vert": "‖", "|": "‖", "lvert": "|", "rvert": "|",
    "langle": "⟨", "rangle": "⟩", "lfloor": "⌊", "rfloor": "⌋", "lceil": "⌈", "rceil": "⌉",
    "{": "{", "}": "}", "%": "%", "$": "$", "#": "#", "&": "&", "_": "_",
    "quad": " ", "qquad": " ", ",": " ", ";": " ", ":": " ", " ": " ", "!": "",
    "bmod": " mod ", "mod": " mod ", "colon": ":",
}
_DROPPED = {"left", "right", "big", "Big", "bigg", "Bigg", "bigl", "bigr", "Bigl", "Bigr",
            "displaystyle", "textstyle", "limits", "nolimits"}
_BLACKBOARD = {"R": "ℝ", "N": "ℕ", "Z": "ℤ", "Q": "ℚ", "C": "ℂ", "E": "𝔼"}
_ACCENTS = {"hat": "\u0302", "bar": "\u0304", "tilde": "\u0303", "vec": "\u20d7",
            "dot": "\u0307", "widehat": "\u0302", "overline": "\u0304"}
# fmt: on
_TOKEN = re.compile(r"\\([A-Za-z]+|.)|([{}^_&~])|(\s+)|([^\\{}^_&~\s]+)")


def _tokens(tex: str) -> list[tuple[str, str]]:
    out = []
    for command, special, space, text in _TOKEN.findall(tex):
        if command:
            out.append(("cmd", command))
        elif special:
            out.append(("sym", special))
        elif space:
            out.append(("space", " "))
        else:
            out.extend(("text", ch) for ch in text)
    return out


class _TextReader:
    """A small recursive reader that turns TeX into text a reader recognises (√d_k)."""

    def __init__(self, tex: str):
        self.tokens = _tokens(tex)
        self.i = 0

    def _next(self):
        token = self.tokens[self.i]
        self.i += 1
        return token

    def group(self) -> str:
        """One argument: a braced group or a single token."""
        while self.i < len(self.tokens) and self.tokens[self.i][0] == "space":
            self.i += 1
        if self.i >= len(self.tokens):
            return ""
        if self.tokens[self.i] == ("sym", "{"):
            self.i += 1
            return self.until("}")
        return self.item()

    def until(self, closing: str | None) -> str:
        parts = []
        while self.i < len(self.tokens):
            if closing and self.tokens[self.i] == ("sym", closing):
                self.i += 1
                break
            parts.append(self.item())
        return "".join(parts)

    def item(self) -> str:
        kind, value = self._next()
        if kind in ("text", "space"):
            return value
        if kind == "sym":
            if value == "{":
                return self.until("}")
            if value in "^_":
                arg = self.group().strip()
                simple = re.fullmatch(r"[\w′⊤*]+", arg) is not None
                return value + (arg if simple else f"({arg})")
            return " " if value == "~" else ""  # "&" aligns, "}" is stray
        return self.command(value)

    def command(self, name: str) -> str:
        if name in ("frac", "tfrac", "dfrac"):
            top, bottom = self.group().strip(), self.group().strip()
            return f"{_wrap(top)}/{_wrap(bottom)}"
        if name == "sqrt":
            return "√" + _wrap(self.group().strip())
        if name in (
            "text",
            "textrm",
            "textbf",
            "textit",
            "mathrm",
            "mathbf",
            "mathit",
            "mathsf",
            "mathtt",
            "boldsymbol",
            "operatorname",
            "mbox",
            "mathcal",
        ):
            return self.group()
        if name == "mathbb":
            arg = self.group()
            return "".join(_BLACKBOARD.get(ch, ch) for ch in arg)
        if name in _ACCENTS:
            return self.group() + _ACCENTS[name]
        if name in ("begin", "end"):
            environment = self.group()
            if environment.endswith("matrix"):
                return "(" if name == "begin" else ")"
            return ""
        if name == "\\":
            return "; "
        if name in _DROPPED:
            return ""
        if name in _SYMBOLS:
            return _SYMBOLS[name]
        # \log, \exp, \max, \sin …: the name is what a reader says, apart from what follows
        following = self.tokens[self.i] if self.i < len(self.tokens) else ("", "")
        spaced = following[0] == "cmd" or (following[0] == "text" and following[1].isalnum())
        return name + (" " if spaced else "")


def _wrap(text: str) -> str:
    return text if re.fullmatch(r"√?[\w′⊤.^]+", text) else f"({text})"


def tex_to_text(tex: str) -> str:
    """A one-line plain reading of a formula, with no TeX left: \\sqrt{d_k} -> √d_k."""
    text = _TextReader(tex).until(None)
    text = re.sub(r"\s*&\s*", " ", text)
    return re.sub(r"\s+", " ", text).strip().rstrip(";").strip()


# --- Sphinx's HTML visitors --------------------------------------------------------------


def _rendered(node, tex: str, display: bool) -> str | None:
    try:
        return RENDERER.render(tex, display)
    except TexError as err:
        logger.warning("TeX error in %r: %s", tex, err, location=node)
        return None


def html_visit_math(self, node: nodes.math) -> None:
    tex = node.astext()
    svg = _rendered(node, tex, display=False)
    self.body.append(
        self.starttag(
            node,
            "span",
            "",
            CLASS="math notranslate nohighlight",
            **{"data-text": tex_to_text(tex)},
        )
    )
    self.body.append(svg if svg is not None else self.encode(tex))
    self.body.append("</span>")
    raise nodes.SkipNode


def display_tex(node: nodes.math_block) -> str:
    """The TeX of a display block, as sphinx.ext.mathjax would hand it to MathJax."""
    if node["nowrap"]:
        return node.astext()
    parts = [part for part in node.astext().split("\n\n") if part.strip()]
    parts = [rf"\begin{{split}}{p}\end{{split}}" if r"\\" in p else p for p in parts]
    if len(parts) > 1:
        return r"\begin{align}\begin{aligned}" + r"\\".join(parts) + r"\end{aligned}\end{align}"
    return parts[0] if parts else ""


def html_visit_displaymath(self, node: nodes.math_block) -> None:
    tex = display_tex(node)
    svg = _rendered(node, tex, display=True)
    self.body.append(
        self.starttag(
            node, "div", CLASS="math notranslate nohighlight", **{"data-text": tex_to_text(tex)}
        )
    )
    if node["number"]:
        number = get_node_equation_number(self, node)
        self.body.append(f'<span class="eqno">({number})')
        self.add_permalink_ref(node, _("Link to this equation"))
        self.body.append("</span>")
    self.body.append(svg if svg is not None else self.encode(tex))
    self.body.append("</div>\n")
    raise nodes.SkipNode


# --- Pages and static files -------------------------------------------------------------


USE_ELEMENT = re.compile(r'<use\b([^>]*?)\bhref="#(MJX-[A-Za-z0-9-]+)"([^>]*)></use>')


def share_glyphs(page_html: str) -> tuple[str, str]:
    """The page with its formulas pointing at short glyph ids, and a hidden <svg> with the
    outline of every glyph they point at, once (MathJax's ids, ``MJX-TEX-I-1D45E``, written
    at each of a chapter's ~1,600 uses, weighed 30 kB on q35)."""
    used = sorted(set(GLYPH_USE.findall(page_html)))
    if not used:
        return page_html, ""
    missing = [g for g in used if g not in RENDERER.outlines]
    if missing:
        logger.warning("maths glyphs with no outline: %s", ", ".join(missing))
    short = {g: f"mj{i:x}" for i, g in enumerate(used)}
    page_html = USE_ELEMENT.sub(
        lambda m: f'<use{m[1]}href="#{short[m[2]]}"{m[3]}/>', page_html
    )
    paths = "".join(
        f'<path id="{short[g]}" d="{html.escape(RENDERER.outlines[g])}"/>'
        for g in used
        if g in RENDERER.outlines
    )
    return page_html, (
        '<svg id="aqa-math-glyphs" xmlns="http://www.w3.org/2000/svg" aria-hidden="true" '
        f'style="display:none"><defs>{paths}</defs></svg>'
    )


EXTRA_CSS = """
/* The book's additions: long display formulas shrink to the column, never scroll. */
mjx-container[jax="SVG"][display="true"] > svg { max-width: 100%; height: auto; }
"""


def write_stylesheet(app) -> None:
    if app.builder.format != "html":
        return
    static = Path(app.outdir) / "_static"
    static.mkdir(parents=True, exist_ok=True)
    css = "/* From MathJax's SVG output (mathjax-full), for the formulas typeset at build time. */"
    (static / STYLESHEET).write_text(css + RENDERER.stylesheet() + EXTRA_CSS)


def stop_renderer(app, exception) -> None:
    RENDERER.close()


def use_this_renderer(app, config) -> None:
    config.html_math_renderer = "tex_svg"


def setup(app):
    app.add_html_math_renderer("tex_svg", (html_visit_math, None), (html_visit_displaymath, None))
    app.connect("config-inited", use_this_renderer)
    app.add_css_file(STYLESHEET)
    app.connect("builder-inited", write_stylesheet)
    app.connect("build-finished", stop_renderer)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
