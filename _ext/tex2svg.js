// TeX to SVG for the book's build, with MathJax (mathjax-full, pinned in package.json).
//
// One long-lived process: the Sphinx extension (_ext/aqa_math.py) writes one JSON request
// per line on stdin and reads one JSON answer per line from stdout.
//   {"tex": "...", "display": false}  ->  {"html": "<mjx-container …>", "glyphs": {id: d}}
//                                          or {"error": "what TeX said"}
//   {"stylesheet": true}               ->  {"css": "…"}   (the CSS the containers need)
// Glyph outlines are not in the SVG: each <use> points at an id from "glyphs", and the page
// carries every outline it uses once, in one hidden <svg> (see _ext/aqa_math.py).
// Every <mjx-container> holds MathJax's assistive MathML, for screen readers; the SVG
// itself is drawn in currentColor, so it follows the text colour (dark mode included).

"use strict";

const readline = require("readline");
const { mathjax } = require("mathjax-full/js/mathjax.js");
const { TeX } = require("mathjax-full/js/input/tex.js");
const { SVG } = require("mathjax-full/js/output/svg.js");
const { liteAdaptor } = require("mathjax-full/js/adaptors/liteAdaptor.js");
const { RegisterHTMLHandler } = require("mathjax-full/js/handlers/html.js");
const { AssistiveMmlHandler } = require("mathjax-full/js/a11y/assistive-mml.js");
const { AllPackages } = require("mathjax-full/js/input/tex/AllPackages.js");

const adaptor = liteAdaptor();
AssistiveMmlHandler(RegisterHTMLHandler(adaptor));

// TeX errors become answers (Sphinx reports them), not red boxes on the page.
const tex = new TeX({
  packages: AllPackages.filter((name) => name !== "bussproofs"),
  formatError: (jax, err) => { throw err; },
});
const svg = new SVG({ fontCache: "global" });
const doc = mathjax.document("", { InputJax: tex, OutputJax: svg });

// What the page does not need, per formula: namespaces (inline SVG is HTML), MathJax's
// menu data, and the colour and position its stylesheet sets for every formula (math.css
// sets them once). Groups left with no attribute are unwrapped.
const KEEP_NODE_NAMES = new Set(["mtable", "merror"]);  // math.css styles these
const DROPPED = ["xmlns", "xmlns:xlink", "focusable", "role", "data-c", "unselectable",
  "data-mjx-texclass"];

function slim(node) {
  for (const child of [...adaptor.childNodes(node)]) {
    if (adaptor.kind(child) !== "#text") slim(child);
  }
  for (const { name, value } of adaptor.allAttributes(node)) {
    if (DROPPED.includes(name)
        || (name === "data-mml-node" && !KEEP_NODE_NAMES.has(value))
        || (["stroke", "fill"].includes(name) && value === "currentColor")
        || (name === "stroke-width" && value === "0")) {
      adaptor.removeAttribute(node, name);
    } else if (name === "xlink:href") {
      adaptor.removeAttribute(node, name);
      adaptor.setAttribute(node, "href", value);
    } else if (name === "style" && value === "position: relative;") {
      adaptor.removeAttribute(node, name);
    }
  }
  if (adaptor.kind(node) === "g" && adaptor.allAttributes(node).length === 0) {
    for (const child of [...adaptor.childNodes(node)]) adaptor.insert(child, node);
    adaptor.remove(node);
  }
}

function render(request) {
  svg.fontCache.clearCache();  // the glyphs this formula uses, and only those
  tex.parseOptions.tags.reset();
  const node = doc.convert(request.tex, {
    display: Boolean(request.display),
    em: 16,
    ex: 8,
    containerWidth: 80 * 16,
  });
  const glyphs = {};
  for (const [id, d] of svg.fontCache.cache) glyphs[id] = d;
  slim(node);
  return { html: adaptor.outerHTML(node), glyphs };
}

function stylesheet() {
  const own = "\nmjx-container[jax=\"SVG\"] { position: relative; }\n"
    + "mjx-container[jax=\"SVG\"] > svg { fill: currentColor; stroke: currentColor;"
    + " stroke-width: 0; }\n";
  return { css: adaptor.textContent(svg.styleSheet(doc)) + own };
}

const lines = readline.createInterface({ input: process.stdin, terminal: false });
lines.on("line", (line) => {
  let answer;
  try {
    const request = JSON.parse(line);
    answer = request.stylesheet ? stylesheet() : render(request);
  } catch (err) {
    answer = { error: String(err && err.message ? err.message : err) };
  }
  process.stdout.write(JSON.stringify(answer) + "\n");
});
