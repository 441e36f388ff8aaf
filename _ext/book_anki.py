"""The drill as an Anki deck in each edition's site (scripts/make_anki.py makes the decks).

* ``write_deck``: once the HTML is written, the edition's deck goes to its site's ``anki/``
  folder: ``_build/html/anki/attention-qa-en.apkg`` in the English build,
  ``_build/html/zh/anki/attention-qa-zh.apkg`` in the Chinese one. A drill paragraph with no
  Chinese translation is a warning naming its entry (so the strict build fails), never an
  English card in the Chinese deck.
* ``DeckLinks``: the drill pages link to the deck with a Markdown link to the English one
  (``../anki/attention-qa-en.apkg``; the file exists only in the built site, so MyST would
  call the link unresolved). Here such a link becomes a plain relative link to the deck of
  the page's own edition: the Chinese pages, whose translations keep the English target as
  every translation does, lead to the Chinese deck. It works offline and from ``file://``.
"""

from __future__ import annotations

import posixpath
import re
import sys
from pathlib import Path

from docutils import nodes
from sphinx import addnodes
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx.util import logging
from sphinx.util.osutil import relative_uri

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
import make_anki  # noqa: E402

logger = logging.getLogger(__name__)

DECK_LINK = re.compile(rf"{make_anki.DECKS_FOLDER}/attention-qa-(\w+)\.apkg")


def edition(config) -> str:
    return "zh" if (config.language or "").startswith("zh") else "en"


class DeckLinks(SphinxPostTransform):
    default_priority = 5  # before MyST's resolver (9) calls the link unresolved
    # every builder: the gettext one (make gettext) resolves the page's links too

    def run(self, **kwargs) -> None:
        for node in list(self.document.findall(addnodes.pending_xref)):
            if node.get("reftype") != "myst" or node.get("refdomain"):
                continue
            here = posixpath.dirname(node.get("refdoc", self.env.docname))
            target = posixpath.normpath(posixpath.join(here, node["reftarget"]))
            if not DECK_LINK.fullmatch(target):
                continue
            deck = f"{make_anki.DECKS_FOLDER}/{make_anki.deck_file(edition(self.config))}"
            uri = relative_uri(self.app.builder.get_target_uri(self.env.docname), deck)
            link = nodes.reference("", "", refuri=uri, classes=["aqa-anki"])
            link += node.children[0].children if node.children else nodes.Text(deck)
            node.replace_self(link)


def write_deck(app, exception) -> None:
    if exception is not None or app.builder.format != "html":
        return
    language = edition(app.config)
    folder = Path(app.outdir) / make_anki.DECKS_FOLDER
    try:
        make_anki.write_deck(language, folder, app.config.html_baseurl or None,
                             book=Path(app.srcdir) / "book",
                             locale=Path(app.srcdir) / make_anki.LOCALE.relative_to(make_anki.ROOT))
    except make_anki.MissingTranslation as missing:
        for entry in missing.entries:
            logger.warning("Anki deck: no Chinese translation for %s", entry)


def setup(app):
    app.add_post_transform(DeckLinks)
    app.connect("build-finished", write_deck)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
