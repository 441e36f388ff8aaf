"""Build one language's site with jupyter-book's own Sphinx configuration.

    python scripts/build_language.py gettext   the text of every page, into _build/gettext
    python scripts/build_language.py zh_CN     the Chinese site, into _build/html/zh

``jupyter-book build`` cannot pass Sphinx a language, so this calls the function it calls,
with ``language`` set. The notebooks are not executed again and the explorers' panels come
from _build/.frames, as in the English build.
"""

import sys
from pathlib import Path

from jupyter_book.sphinx import build_sphinx

OUTPUT = {"gettext": "_build/gettext", "zh_CN": "_build/html/zh"}


def main(target: str) -> int:
    builder = "gettext" if target == "gettext" else "html"
    overrides = {"nitpicky": True, "external_toc_path": "_toc.yml", "latex_individualpages": False}
    if target != "gettext":
        overrides["language"] = target
    result = build_sphinx(
        str(Path.cwd()),
        OUTPUT[target],
        noconfig=True,
        path_config="_config.yml",
        confoverrides=overrides,
        doctreedir=f"_build/.doctrees-{target}",
        builder=builder,
        warningiserror=True,
        keep_going=True,
        quiet=True,
    )
    return 1 if result else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
