"""The Chinese edition's translations, one .po file per page in locales/zh_CN/LC_MESSAGES/.

    python scripts/translations.py stats           how much of each page is translated
    python scripts/translations.py todo PO         untranslated and fuzzy entries, as JSON lines
    python scripts/translations.py show PO         every entry with its translation, as JSON lines
    python scripts/translations.py fill PO JSONL   set msgstr from lines {"i": n, "zh": "..."}
    python scripts/translations.py check [PO ...]  translations that lose a formula, code or link
    python scripts/translations.py explorers       the explorers' words into explorers.po
    python scripts/translations.py reuse           fill entries other pages have translated
    python scripts/translations.py alts            the chapters' figure descriptions, into the .pot

The pages' entries come from Sphinx (``make gettext``); the explorers' from the explorers
themselves: every title, control, option, figure, message and picture text of every frame,
with numbers taken out (``attention_qa.panel.i18n.template``).

An entry is numbered by its place among the file's messages (``todo`` prints the number).
A translation must keep every formula, code span, link target, role and HTML tag of its
source, in any order: ``fill`` refuses one that does not, and ``check`` lists them.
"""

import json
import re
import sys
from collections import Counter
from pathlib import Path

from babel.messages.catalog import Catalog
from babel.messages.pofile import read_po, write_po

ROOT = Path(__file__).resolve().parents[1]
LOCALE = ROOT / "locales" / "zh_CN" / "LC_MESSAGES"
EXPLORERS = LOCALE / "explorers.po"
KEPT = {
    "formula": re.compile(r"\$\$.*?\$\$|\$[^$\n]+?\$", re.S),
    "code span": re.compile(r"`[^`\n]+`"),
    "link target": re.compile(r"\]\(([^)\s]+)\)"),
    "role": re.compile(r"\{[a-z:-]+\}(?=`)"),
    "HTML tag": re.compile(r"</?[a-zA-Z][^>]*>"),
    "placeholder": re.compile(r"\{\d+\}"),
}


def problems(source: str, translation: str) -> list[str]:
    """What ``translation`` loses or adds of ``source``'s formulas, code, links and tags."""
    found = []
    for name, pattern in KEPT.items():
        want, got = Counter(pattern.findall(source)), Counter(pattern.findall(translation))
        if want != got:
            lost, added = sorted((want - got).elements()), sorted((got - want).elements())
            found.append(f"{name}: lost {lost}, added {added}")
    if KEPT["code span"].sub("", translation).count("**") % 2:
        found.append("an odd number of ** (bold left open)")
    return found


def load(path: Path):
    with path.open("rb") as f:
        return read_po(f, locale="zh_CN")


def save(path: Path, catalog) -> None:
    with path.open("wb") as f:
        write_po(f, catalog, width=100, include_previous=True)


def messages(catalog) -> list:
    return [m for m in catalog if m.id]


def pending(message) -> bool:
    return not message.string or message.fuzzy


def todo(path: Path) -> None:
    for i, m in enumerate(messages(load(path))):
        if pending(m):
            entry = {"i": i, "en": m.id}
            if m.fuzzy:  # the translation of the paragraph before the English changed
                entry["zh_was"] = m.string
                if m.previous_id:
                    entry["was"] = m.previous_id[0]
            print(json.dumps(entry, ensure_ascii=False))


def show(path: Path) -> None:
    for i, m in enumerate(messages(load(path))):
        entry = {"i": i, "en": m.id, "zh": m.string, "fuzzy": m.fuzzy}
        print(json.dumps(entry, ensure_ascii=False))


def fill(path: Path, lines: Path) -> int:
    catalog = load(path)
    entries = messages(catalog)
    refused = 0
    for line in lines.read_text().splitlines():
        if not line.strip():
            continue
        item = json.loads(line)
        message = entries[item["i"]]
        wrong = problems(message.id, item["zh"])
        if wrong:
            refused += 1
            print(f"entry {item['i']} refused: {'; '.join(wrong)}")
            continue
        message.string = item["zh"]
        message.flags.discard("fuzzy")
        message.previous_id = ()
    save(path, catalog)
    return refused


def check(paths: list[Path]) -> int:
    count = 0
    for path in paths:
        for i, m in enumerate(messages(load(path))):
            if m.string and not m.fuzzy:
                for wrong in problems(m.id, m.string):
                    count += 1
                    print(f"{path.name} entry {i}: {wrong}")
    return count


def explorer_strings() -> dict[str, set[str]]:
    """Every string the explorers show, as lookup entries, with the chapters that show it."""
    from attention_qa.explorers import BY_CHAPTER
    from attention_qa.panel.core import InvalidSetting
    from attention_qa.panel.i18n import figure_texts, needs_translation, template

    found: dict[str, set[str]] = {}

    def add(text, where: str) -> None:
        if isinstance(text, str) and needs_translation(text):
            found.setdefault(template(text)[0], set()).add(where)

    for chapter, builders in BY_CHAPTER.items():
        for builder in builders:
            explorer = builder()
            for text in [explorer.title, explorer.caption]:
                add(text, chapter)
            for control in explorer.controls:
                for text in [control.label, *control.labels]:
                    add(text, chapter)
            for text in figure_texts(explorer.figure):
                add(text, chapter)
            for settings in explorer.settings():
                frame = explorer.frame(**settings)
                if isinstance(frame, InvalidSetting):
                    add(str(frame), chapter)
                    continue
                for key, value in frame.figures.items():
                    add(key, chapter)
                    add(value, chapter)
                explorer.view.update(frame.data)
                for text in figure_texts(explorer.figure):
                    add(text, chapter)
    return found


def update_explorers() -> None:
    """explorers.po: the current strings, keeping the translations of those that stay."""
    template_catalog = Catalog(locale="zh_CN", project="Attention Q&A explorers")
    for text, chapters in sorted(explorer_strings().items()):
        template_catalog.add(text, locations=[(c, 0) for c in sorted(chapters)])
    catalog = load(EXPLORERS) if EXPLORERS.exists() else Catalog(locale="zh_CN")
    catalog.update(template_catalog, no_fuzzy_matching=False)
    save(EXPLORERS, catalog)


def reuse() -> None:
    """Give each untranslated entry the translation the same paragraph has on another page
    (the drill pages repeat the chapters' short answers and follow-ups)."""
    paths = sorted((LOCALE / "book").glob("*.po"))
    known = {}
    for path in paths:
        for m in messages(load(path)):
            if not pending(m):
                known.setdefault(m.id, m.string)
    for path in paths:
        catalog = load(path)
        filled = 0
        for m in messages(catalog):
            if not m.string and m.id in known:
                m.string, filled = known[m.id], filled + 1
        if filled:
            save(path, catalog)
            print(f"{path.relative_to(LOCALE)}: {filled} entries from other pages")


def output_alts(notebook: Path) -> list[str]:
    """The descriptions (alt texts) a chapter gives its figures, in its cells' metadata."""
    cells = json.loads(notebook.read_text())["cells"]
    alts = [c.get("metadata", {}).get("mystnb", {}).get("image", {}).get("alt") for c in cells]
    return [alt for alt in alts if alt]


def add_alts(pot_folder: Path = ROOT / "_build" / "gettext" / "book") -> None:
    """Sphinx does not extract a cell output's alt text: put each chapter's into its .pot."""
    for notebook in sorted((ROOT / "book").glob("*.ipynb")):
        alts = output_alts(notebook)
        pot = pot_folder / f"{notebook.stem}.pot"
        if not alts or not pot.exists():
            continue
        catalog = load(pot)
        for alt in alts:
            catalog.add(alt, locations=[(f"../../book/{notebook.name}", 0)])
        save(pot, catalog)


def stats() -> None:
    for path in sorted(LOCALE.rglob("*.po")):
        entries = messages(load(path))
        left = sum(pending(m) for m in entries)
        print(f"{path.relative_to(LOCALE)}: {len(entries) - left}/{len(entries)} translated")


def main(argv: list[str]) -> int:
    command, args = argv[0], [Path(a) for a in argv[1:]]
    if command == "stats":
        stats()
    elif command == "todo":
        todo(args[0])
    elif command == "show":
        show(args[0])
    elif command == "fill":
        return 1 if fill(args[0], args[1]) else 0
    elif command == "explorers":
        update_explorers()
    elif command == "alts":
        add_alts()
    elif command == "reuse":
        reuse()
    elif command == "check":
        return 1 if check(args or sorted(LOCALE.rglob("*.po"))) else 0
    else:
        print(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
