"""Sphinx extension for the book's own build needs.

* Launch buttons only with a repository: ``launch_buttons`` in ``_config.yml`` names Binder
  and Colab, but without ``repository.url`` they could lead nowhere, so they are dropped.
* Explorer frames as files: an explorer's static panel carries its frames as data URLs
  (so a saved notebook is self-contained); in the site each becomes a PNG file under
  ``_frames/``, named by its content, that the browser fetches only when a control asks
  for it. The pages stay small, identical frames are shared across pages, and the site
  still works opened from a folder (relative links, no server).
* Keeps the pages offline: the book runs no code in the browser through thebe, so its
  scripts (which name a CDN, and come out twice on a page) are left out.

Light, readable pages (the modules beside this one, set up from here):

* ``book_frames``: every explorer's full panel, rendered from the explorers and cached (the
  notebooks are not executed again: the site shows their saved outputs);
* ``book_math``: maths typeset to SVG at build time (MathJax in Node), no MathJax script;
* ``book_icons``: the theme's icons from a font cut to the icons used, no Font Awesome script;
* ``book_cjk``: Chinese marked ``lang="zh-CN"`` and drawn with the site's own Chinese font;
* ``book_search``: Chinese search with jieba, snippets in plain text;
* ``book_languages``: the Chinese edition beside the English one, a switch on every page;
* ``book_pages``: the hook that finishes each page once the theme has rendered it.
"""

import base64
import hashlib
import re
from pathlib import Path

FRAMES_DIR = "_frames"
_PNG_DATA_URL = re.compile(r"data:image/png;base64,([A-Za-z0-9+/=]+)")


def _is_thebe(script) -> bool:
    body = script.attributes.get("body", "") if hasattr(script, "attributes") else ""
    return "thebe" in str(script) or "THEBE_JS_URL" in body


def drop_thebe(app, pagename, templatename, context, doctree):
    # In place: other handlers may add a file to the page through the builder's own lists.
    context["script_files"][:] = [s for s in context["script_files"] if not _is_thebe(s)]
    context["css_files"][:] = [c for c in context["css_files"] if "thebe" not in str(c)]


def frames_to_files(app, pagename, templatename, context, doctree):
    body = context.get("body", "")
    if "aqa-explorer" not in body:
        return
    folder = Path(app.outdir) / FRAMES_DIR
    folder.mkdir(exist_ok=True)

    def to_file(match: re.Match) -> str:
        png = base64.b64decode(match.group(1))
        name = hashlib.sha256(png).hexdigest()[:20] + ".png"
        path = folder / name
        if not path.exists():
            path.write_bytes(png)
        return context["pathto"](f"{FRAMES_DIR}/{name}", 1)

    context["body"] = _PNG_DATA_URL.sub(to_file, body)


def launch_buttons_need_a_repository(app, config):
    options = config.html_theme_options
    if not options.get("repository_url"):
        options["launch_buttons"] = {}


def setup(app):
    modules = (
        "book_frames",
        "book_math",
        "book_icons",
        "book_cjk",
        "book_search",
        "book_languages",
        "book_pages",
    )
    for module in modules:
        app.setup_extension(module)
    app.connect("config-inited", launch_buttons_need_a_repository)
    app.connect("html-page-context", drop_thebe)
    app.connect("html-page-context", frames_to_files)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
