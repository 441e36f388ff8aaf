"""The Chinese edition's translations, one .po file per page in locales/zh_CN/LC_MESSAGES/.

    python scripts/translations.py stats           how much of each page is translated
    python scripts/translations.py todo PO         untranslated and fuzzy entries, as JSON lines
    python scripts/translations.py show PO         every entry with its translation, as JSON lines
    python scripts/translations.py fill PO JSONL   set msgstr from lines {"i": n, "zh": "..."}
    python scripts/translations.py check [PO ...]  translations that lose a formula, code or link
    python scripts/translations.py explorers       the explorers' words into explorers.po
    python scripts/translations.py reuse           fill entries other pages have translated
    python scripts/translations.py alts            the chapters' figure descriptions, into the .pot
    python scripts/translations.py drill           drill entries a chapter has: the chapter's zh
    python scripts/translations.py terms           translations that use a term's forbidden variant
    python scripts/translations.py controls        chapters naming a panel control not by its label
    python scripts/translations.py glossary        the glossary's table of terms, from TERMS

The pages' entries come from Sphinx (``make gettext``); the explorers' from the explorers
themselves: every title, control, option, figure, message and picture text of every frame,
with numbers taken out (``attention_qa.panel.i18n.template``).

An entry is numbered by its place among the file's messages (``todo`` prints the number).
A translation must keep every formula, code span, link target, role and HTML tag of its
source, in any order: ``fill`` refuses one that does not, and ``check`` lists them.

One concept, one Chinese term: ``TERMS`` names the term and the variants no translation may use
(the glossary page shows the same table, ``glossary`` prints it), ``TERM_EXCEPTIONS`` the entries
where a variant is right, each with its reason. The drill pages repeat the chapters' short
answers and follow-ups; ``drill`` gives each such entry the chapter's translation.
"""

import json
import re
import sys
from collections import Counter
from dataclasses import dataclass
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


# One Chinese term per concept. A row: the English concept, the book's one Chinese term, the
# variants no translation may use (regular expressions) with how the glossary shows them, and
# optionally the English (a regular expression) an entry's msgid must contain for a variant to
# count, where the variant's word is right for another sense (提示 is also a "hint"). A variant
# is looked for in the translation with its code spans, formulas and link targets taken out,
# and with the term itself and its allowed glosses (``allowed``) taken out first, so 提示词
# does not hold the variant 提示, nor 块（tile） the variant tile.
@dataclass(frozen=True)
class Term:
    english: str
    term: str
    variants: tuple[str, ...]
    shown: str
    scope: str | None = None
    allowed: tuple[str, ...] = ()


TERMS = (
    Term("score", "分数",
         ("得分",), "得分（基准、束搜索和排序的得分除外）"),
    Term("KV cache, K/V cache", "KV 缓存", (r"K/V ?缓存", r"KV缓存", r"键值缓存"),
         "K/V 缓存、KV缓存、键值缓存"),
    Term("ridge point (roofline)", "屋脊点", ("拐点",), "拐点", scope=r"(?i)ridge"),
    Term("memory-bound", "访存受限",
         ("受访存限制", "受内存带宽限制", "内存受限", "受内存限制", "受带宽限制"),
         "受访存限制、受内存带宽限制、内存受限"),
    Term("compute-bound", "计算受限", ("受算力限制", "受计算限制", "算力受限"),
         "受算力限制、受计算限制、算力受限"),
    Term("GPU memory (HBM, device memory)", "显存",
         (r"GPU ?的?内存", "内存带宽", "等待?内存", "HBM ?内存"),
         "GPU 内存、内存带宽、等待内存（内存只指主机内存或一般的内存）",
         allowed=("高带宽内存（HBM）",)),
    Term("prompt", "提示词", ("提示",), "提示", scope=r"(?i)prompt"),
    Term("head dimension, head width", "头维度", ("头宽度", "头的宽度", "头宽"),
         "头宽度、头的宽度、头宽"),
    Term("prefill", "预填充", (r"(?<![A-Za-z_])prefill",), "prefill（作注释时除外）",
         allowed=("（prefill）", "（prefill，", "（prefill；", "（chunked prefill）")),
    Term("one-hot", "one-hot", ("独热",), "独热"),
    Term("tile", "块（tile）", (r"(?<![A-Za-z_])tiles?(?![A-Za-z_])",),
         "tile（作注释时除外）", allowed=("（tile）", "（tiles）")),
    Term("“The short answer, at length.”", "把简答展开来说", ("简答的展开", "把简答展开说"),
         "简答的展开、把简答展开说"),
    Term("“N× smaller”, “N times fewer”", "降为 1/N",
         (r"(?:缩小|减小|减少|(?<!多)少)(?:了|到|为)?[^，。；：、\n倍]{0,25}倍(?!数)",
          r"缩小的倍数", r"缩小 ?\{\d\} ?×"),
         "缩小 N 倍、少 N 倍、缩小的倍数"),
    Term("router (MoE)", "路由器", ("门控网络",), "门控网络（作注释时除外）",
         allowed=("（门控网络）", "（router，门控网络）")),
    Term("segment embedding (BERT)", "分段嵌入", ("片段嵌入",), "片段嵌入（片段指 span）"),
    Term("text infilling (BART)", "文本填充", ("文本补全", "文本插补"), "文本补全、文本插补"),
)

# Entries where a variant is the right word: (catalogue, start of the entry's msgid, the
# variant as written in the translation, why). A chapter's exception also covers the same
# entry on a drill page (tests/test_drill_translation.py keeps the two translations equal).
TERM_EXCEPTIONS = (
    ("q13_self_vs_cross_attention", "**How do decoder-only models translate without", "得分",
     "a benchmark score: the encoder–decoder scored best"),
    ("q14_mqa_gqa", "**What does MQA cost?** Quality and stability.", "得分",
     "a benchmark score: uptrained T5-XXL scored 46.6 on average"),
    ("q24_mixture_of_experts", "A mixture of experts (混合专家, MoE) replaces", "得分",
     "the router's ranking of experts: each token goes to its top k"),
    ("q24_mixture_of_experts", "The top two are experts 1 and 2;", "得分",
     "the router's ranking of experts"),
    ("q24_mixture_of_experts", "A router scores $E$ experts per token;", "得分",
     "the router's ranking of experts (the top k run)"),
    ("q28_decoding", "Beam search survives where one output is right", "得分",
     "a beam's score, its summed log-probability"),
    ("q28_decoding", "Every other figure (probabilities, nucleus sizes, beam score", "得分",
     "beam scores"),
    ("q08_causal_training", "**Other layers that mix positions", "得分",
     "an expert's ranking of tokens (expert-choice routing picks its top tokens)"),
    ("q31_what_is_a_token", "**\"BPE splits a word", "得分",
     "SentencePiece's score of a merged piece, a ranking"),
    ("q31_what_is_a_token", "Kudo and Richardson (2018)", "得分",
     "SentencePiece's score of a merged piece, a ranking"),
    ("q36_long_context_training", "**What data does the long-context stage need?**", "得分",
     "benchmark scores on short-context tasks"),
    ("q36_long_context_training", "**How do you know the long context works?**", "得分",
     "needle-in-a-haystack benchmark scores"),
    ("q42_long_context_in_use", "**A window a model accepts is not a window it uses", "得分",
     "RULER's benchmark score (85.6 at 4K)"),
    ("teachers_guide", "Read out the **Predict first** prompt.", "提示",
     "a Predict-first prompt is a question put to the class, not a model's input"),
    ("teachers_guide", "`make handouts` prints every chapter", "提示",
     "a Predict-first prompt is a question put to the class, not a model's input"),
    ("q37_attention_over_images", "**Vision encoder to LLM.**", "提示",
     "soft visual prompts are vectors, not words: 提示词 would be wrong"),
    ("q37_attention_over_images", "Li et al. (2023). BLIP-2.", "提示",
     "soft visual prompts are vectors, not words: 提示词 would be wrong"),
    ("q12_efficient_mha", "NVIDIA Deep Learning Performance documentation", "tile",
     "the English name of a documentation section (tile and wave quantization), as a gloss"),
)


CJK = re.compile(r"[\u4e00-\u9fff]")


def _strip_for_terms(text: str) -> str:
    for name in ("formula", "code span", "link target"):
        text = KEPT[name].sub(" ", text)
    return text


def term_problems(stems: set[str], message_id: str, translation: str) -> list[str]:
    """The forbidden variants ``translation`` of ``message_id`` uses, in a catalogue named one
    of ``stems`` (a drill page's entry also goes by the chapter it repeats)."""
    excused = {
        variant for where, start, variant, _ in TERM_EXCEPTIONS
        if where in stems and message_id.startswith(start)
    }
    found = []
    for term in TERMS:
        if term.scope and not re.search(term.scope, message_id):
            continue
        text = _strip_for_terms(translation)
        for kept in (term.term, *term.allowed):
            text = text.replace(kept, " ")
        for variant in term.variants:
            found += [m.group(0) for m in re.finditer(variant, text) if m.group(0) not in excused]
    return found


def chapter_of() -> dict[str, str]:
    """Each chapter entry's msgid, with the chapter's catalogue."""
    found = {}
    for path in sorted((LOCALE / "book").glob("q[0-9]*.po")):
        for m in messages(load(path)):
            found.setdefault(m.id, path.stem)
    return found


def term_report(paths: list[Path]) -> list[str]:
    """Every use of a forbidden variant in ``paths``, naming the file, the entry and the variant."""
    chapters = chapter_of()
    listed = {t.shown for t in TERMS}  # the glossary's column of variants names them
    lines = []
    for path in paths:
        for i, m in enumerate(messages(load(path))):
            if m.id in listed or (m.string == m.id and not CJK.search(m.id)):
                continue  # the variants as listed; English kept as it is
            stems = {path.stem, chapters.get(m.id, path.stem)}
            for variant in term_problems(stems, m.id, m.string):
                lines.append(f"{path.name} entry {i} ({m.id[:50]!r}): {variant!r}")
    return lines


def glossary_table() -> str:
    """The glossary page's table of terms, made from ``TERMS``."""
    rows = ["| English | 中文 | not |", "|---|---|---|"]
    rows += [f"| {t.english} | {t.term} | {t.shown} |" for t in TERMS]
    return "\n".join(rows) + "\n"


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


def chapter_translations() -> dict[str, str]:
    """Each chapter entry's msgid with its translation (translated, not fuzzy, entries only)."""
    found: dict[str, str] = {}
    for path in sorted((LOCALE / "book").glob("q[0-9]*.po")):
        for m in messages(load(path)):
            if not pending(m):
                found.setdefault(m.id, m.string)
    return found


def drill_differences() -> list[tuple[Path, int, str]]:
    """Drill entries whose msgid a chapter has, translated differently (or left fuzzy)."""
    chapters = chapter_translations()
    return [
        (path, i, m.id)
        for path in sorted((LOCALE / "book").glob("drill*.po"))
        for i, m in enumerate(messages(load(path)))
        if m.id in chapters and (m.string != chapters[m.id] or m.fuzzy)
    ]


def sync_drill() -> int:
    """Give every drill entry whose msgid a chapter also has the chapter's translation: the
    chapter is the source of truth. Files already equal are left untouched (idempotent)."""
    chapters = chapter_translations()
    total = 0
    for path in sorted((LOCALE / "book").glob("drill*.po")):
        catalog = load(path)
        changed = 0
        for m in messages(catalog):
            if m.id in chapters and (m.string != chapters[m.id] or m.fuzzy):
                m.string = chapters[m.id]
                m.flags.discard("fuzzy")
                m.previous_id = ()
                changed += 1
        if changed:
            save(path, catalog)
            print(f"{path.relative_to(LOCALE)}: {changed} entries set to the chapter's translation")
        total += changed
    return total


# A quoted string in a chapter's English, "…" or “…”.
QUOTED = re.compile(r"“([^”\n]+)”|\"([^\"\n]+)\"")


def control_problems(locale: Path = LOCALE) -> list[str]:
    """Chapter entries that quote a label their chapter's panel shows (a control, an option, a
    legend entry: an entry of explorers.po located at that chapter) and whose translation does
    not quote that label's Chinese, “…”, as the Chinese panel shows it."""
    panel: dict[str, dict[str, str]] = {}
    for m in messages(load(locale / "explorers.po")):
        for where, _ in m.locations:
            panel.setdefault(where, {})[m.id.lower()] = m.string
    found = []
    for path in sorted((locale / "book").glob("q[0-9]*.po")):
        labels = panel.get(path.stem.split("_")[0], {})
        for i, m in enumerate(messages(load(path))):
            for pair in QUOTED.findall(KEPT["code span"].sub("", m.id)):  # not code's strings
                label = pair[0] or pair[1]
                zh = labels.get(label.lower())
                if zh is not None and f"“{zh}”" not in m.string:
                    found.append(f"{path.name} entry {i}: \"{label}\" is “{zh}” on the panel")
    return found


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
    elif command == "drill":
        sync_drill()
    elif command == "terms":
        lines = term_report(args or sorted(LOCALE.rglob("*.po")))
        print("\n".join(lines))
        return 1 if lines else 0
    elif command == "controls":
        lines = control_problems(args[0] if args else LOCALE)
        print("\n".join(lines))
        return 1 if lines else 0
    elif command == "glossary":
        print(glossary_table(), end="")
    elif command == "check":
        return 1 if check(args or sorted(LOCALE.rglob("*.po"))) else 0
    else:
        print(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
