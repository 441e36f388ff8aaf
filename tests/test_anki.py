"""The drill as Anki decks (scripts/make_anki.py, _ext/book_anki.py): a note for every short
answer and follow-up of the drill pages, counted here from the Markdown on its own; one
subdeck per part; every field filled, its maths for Anki's MathJax; the Chinese deck in
Chinese; ids that do not move between builds or when an answer's text changes; and in the
built site, each edition's drill pages link to that edition's deck."""

import io
import json
import re
import shutil
import sqlite3
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import make_anki  # noqa: E402

PAGES = sorted((ROOT / "book").glob("drill_part*.md"), key=lambda p: int(p.stem[10:]))
# As tests/site/test_zh.py judges a Chinese page: Chinese characters, and English words
CJK = re.compile(r"[\u3400-\u9fff\u3000-\u303f\uff00-\uffef]")
WORD = re.compile(r"\b[A-Za-z]{2,}\b")
# A run of four or more Latin words: English prose, unless it is maths, code, a title in
# italics, a quotation (“…”) or a gloss in brackets (（…）), as the translations keep them.
LATIN_RUN = re.compile(r"[A-Za-z][\w'’.-]*(?:[ \t]+[A-Za-z][\w'’.-]*){3,}")
KEPT_IN_ENGLISH = re.compile(
    r"\\\(.*?\\\)|\\\[.*?\\\]|<code>.*?</code>|<em>.*?</em>|“[^”]*”|「[^」]*」|（[^）]*）", re.S)


def expected(page: Path) -> tuple[str, int, int]:
    """A drill page's part caption, short answers and follow-ups, read from its Markdown."""
    text = page.read_text()
    caption = re.match(r"# Drill · (.+)\n", text).group(1)
    shorts = text.count("<summary>Short answer</summary>")
    folds = re.findall(r"<summary>What they ask next</summary>\n(.*?)</details>", text, re.S)
    # a follow-up is a paragraph that opens with its question in bold (which may wrap)
    follow_ups = sum(block.lstrip().startswith("**")
                     for fold in folds for block in re.split(r"\n\s*\n", fold))
    return caption, shorts, follow_ups


def open_deck(path: Path) -> dict:
    with zipfile.ZipFile(path) as apkg:
        assert sorted(apkg.namelist()) == ["collection.anki2", "media"]
        db = path.with_suffix(".anki2")
        db.write_bytes(apkg.read("collection.anki2"))
    conn = sqlite3.connect(db)
    decks = json.loads(conn.execute("SELECT decks FROM col").fetchone()[0])
    models = json.loads(conn.execute("SELECT models FROM col").fetchone()[0])
    notes = conn.execute("SELECT id, guid, mid, flds, tags FROM notes ORDER BY id").fetchall()
    cards = dict(conn.execute("SELECT nid, did FROM cards").fetchall())
    conn.close()
    return {
        "decks": {int(i): d["name"] for i, d in decks.items() if d["name"] != "Default"},
        "models": {int(i): m["name"] for i, m in models.items()},
        "notes": [
            {"guid": guid, "model": mid, "fields": flds.split("\x1f"), "tags": tags.split(),
             "deck": cards[nid]}
            for nid, guid, mid, flds, tags in notes
        ],
    }


@pytest.fixture(scope="module")
def decks(tmp_path_factory):
    """A deck, built once per language and run ("first", "second") into its own folder; a
    language's failure (a missing translation) fails only that language's tests."""
    built = {}

    def deck(language: str, run: str = "first") -> Path:
        if (language, run) not in built:
            folder = tmp_path_factory.mktemp(f"{language}-{run}")
            built[language, run] = make_anki.write_deck(language, folder, base_url="")
        return built[language, run]

    return deck


@pytest.mark.parametrize("language", make_anki.LANGUAGES)
def test_a_note_per_short_answer_and_follow_up_in_a_subdeck_per_part(decks, language):
    deck = open_deck(decks(language))
    parent = "Attention Q&A" if language == "en" else "注意力问答"
    assert sorted(deck["decks"].values())[0] == parent
    per_deck = {}
    for note in deck["notes"]:
        per_deck.setdefault(deck["decks"][note["deck"]], []).append(note)
    assert len(per_deck) == len(PAGES) and parent not in per_deck
    for number, page in enumerate(PAGES, start=1):
        caption, shorts, follow_ups = expected(page)
        name = next(n for n in per_deck if f"part{number}" in per_deck[n][0]["tags"])
        if language == "en":
            assert name == f"{parent}::{caption}"
        assert name.startswith(f"{parent}::") and name != f"{parent}::"
        notes = per_deck[name]
        assert all(f"part{number}" in n["tags"] for n in notes)
        kinds = [n["tags"][-1] for n in notes]
        assert (kinds.count("short-answer"), kinds.count("follow-up")) == (shorts, follow_ups), \
            f"{language} deck, {page.name}"
    assert len(set(deck["models"])) == 1


@pytest.mark.parametrize("language", make_anki.LANGUAGES)
def test_every_field_is_filled_and_its_maths_is_for_mathjax(decks, language):
    notes = open_deck(decks(language))["notes"]
    for note in notes:
        assert len(note["fields"]) == len(make_anki.MODEL_FIELDS)
        for name, value in zip(make_anki.MODEL_FIELDS, note["fields"], strict=True):
            assert re.sub(r"<[^>]+>", "", value).strip(), f"{note['tags']}: {name} is empty"
            assert "$" not in value, f"{note['tags']}: a $ left in {name}: {value[:120]}"
            assert "**" not in value and "](" not in value, f"Markdown left in {value[:120]}"
            assert value.count("\\(") == value.count("\\)")
    q01 = notes[0]["fields"]
    assert q01[0].startswith("q01 · ") and "\\(Q\\)" in q01[2] and "<strong>" in q01[2]
    assert "book/q01_what_is_attention.html" in q01[3]  # no site address: the page's file
    guids = [n["guid"] for n in notes]
    assert len(set(guids)) == len(guids)


def test_the_chinese_deck_has_no_english_prose(decks):
    for note in open_deck(decks("zh"))["notes"]:
        for value in note["fields"]:
            text = re.sub(r"<[^>]+>|&\w+;", " ", value)
            assert CJK.search(text) or len(WORD.findall(text)) < 6, f"English: {text[:120]}"
            prose = re.sub(r"<[^>]+>|&\w+;", " ", KEPT_IN_ENGLISH.sub(" ", value))
            assert not LATIN_RUN.search(prose), f"English in {note['tags']}: {prose[:160]}"


def test_the_check_for_english_catches_a_sentence():
    value = "注意力是按内容查找（soft lookup by content）。The weights sum to one here."
    prose = KEPT_IN_ENGLISH.sub(" ", value)
    assert LATIN_RUN.findall(prose) == ["The weights sum to one here."]


@pytest.mark.parametrize("language", make_anki.LANGUAGES)
def test_a_second_build_gives_the_same_bytes(decks, language):
    assert decks(language).read_bytes() == decks(language, "second").read_bytes()


def test_the_editions_ids_are_their_own(decks):
    en, zh = open_deck(decks("en")), open_deck(decks("zh"))
    assert set(en["decks"]).isdisjoint(zh["decks"]) and set(en["models"]).isdisjoint(zh["models"])
    assert {n["guid"] for n in en["notes"]}.isdisjoint(n["guid"] for n in zh["notes"])
    assert make_anki.stable_id("deck", "en") in en["decks"]


def test_a_changed_answer_keeps_its_note_and_a_missing_translation_is_named(tmp_path):
    """The guid is the language, chapter and which answer, not the text: an edited answer
    updates its card. A paragraph the .po files lack stops the Chinese deck, by name."""
    book, locale = tmp_path / "book", tmp_path / "locale"
    shutil.copytree(ROOT / "book", book, ignore=lambda d, names: [
        n for n in names if not (n.startswith("drill") and n.endswith(".md"))])
    shutil.copytree(make_anki.LOCALE, locale, ignore=lambda d, names: [
        n for n in names if not n.endswith(".po")])
    page = book / "drill_part1.md"
    text = page.read_text()
    answer = re.search(r"<summary>Short answer</summary>\n\n(.+?)\n\n</details>", text, re.S)
    page.write_text(text.replace(answer.group(1), "Attention is a **soft** lookup, $a_i$."))
    _, _, _, before = make_anki.cards("en")
    _, _, _, after = make_anki.cards("en", book=book, locale=locale)
    assert [c.guid for c in after] == [c.guid for c in before]
    assert after[0].fields[2] == "Attention is a <strong>soft</strong> lookup, \\(a_i\\)."
    with pytest.raises(make_anki.MissingTranslation) as missing:
        make_anki.cards("zh", book=book, locale=locale)
    assert f"{locale / 'drill_part1.po'}: 'Attention is a **soft** lookup, $a_i$.'" \
        in missing.value.entries


def test_a_site_address_links_each_card_to_its_chapter():
    url = "https://example.org/attention-qa"
    for language, folder in (("en", ""), ("zh", "zh/")):
        card = make_anki.cards(language, base_url=url + "/")[3][0]
        assert f'<a href="{url}/{folder}book/q01_what_is_attention.html">' in card.fields[3]


def test_each_edition_links_its_drill_pages_to_its_own_deck(tmp_path):
    """A small Sphinx project with the book's drill page and its translations: the English
    build writes the English deck and links to it, the Chinese build the Chinese one."""
    from sphinx.application import Sphinx

    shutil.copytree(ROOT / "book", tmp_path / "book", ignore=lambda d, names: [
        n for n in names if not (n.startswith("drill") and n.endswith(".md"))])
    shutil.copytree(ROOT / "locales", tmp_path / "locales", ignore=lambda d, names: [
        n for n in names if n.endswith(".mo") or n.startswith("q")])
    (tmp_path / "conf.py").write_text(
        f"import sys\nsys.path.insert(0, {str(ROOT / '_ext')!r})\n"
        "extensions = ['myst_parser', 'book_anki']\n"
        "myst_enable_extensions = ['dollarmath']\n"
        "root_doc = 'book/drill_part1'\ninclude_patterns = ['book/drill_part1.md']\n"
        "locale_dirs = ['locales']\ngettext_compact = False\n"
        "html_theme = 'basic'\nhtml_search_language = 'en'\n")
    warnings = io.StringIO()
    for language, out in ((None, "html"), ("zh_CN", "html/zh")):
        overrides = {"language": language} if language else {}
        app = Sphinx(str(tmp_path), str(tmp_path), str(tmp_path / "_build" / out),
                     str(tmp_path / "_build" / f"doctrees-{out}"), "html",
                     confoverrides=overrides, status=None, warning=warnings, freshenv=True)
        app.build()
    anki_warnings = [w for w in warnings.getvalue().splitlines() if "Anki" in w]
    site = tmp_path / "_build" / "html"
    for folder, language in (("", "en"), ("zh/", "zh")):
        page = (site / folder / "book" / "drill_part1.html").read_text()
        links = re.findall(r'<a class="aqa-anki[^"]*" href="([^"]+)"', page)
        assert links == [f"../anki/attention-qa-{language}.apkg"], (language, links)
        deck = site / folder / "anki" / f"attention-qa-{language}.apkg"
        assert deck.is_file(), "\n".join(anki_warnings)
    assert not anki_warnings


def test_a_follow_up_keeps_its_card_when_the_follow_ups_are_reordered(tmp_path):
    """A follow-up's guid is its English question's: moving it (or inserting another before
    it) updates its own card rather than overwriting its neighbour's."""
    book = tmp_path / "book"
    shutil.copytree(ROOT / "book", book, ignore=lambda d, names: [
        n for n in names if not (n.startswith("drill") and n.endswith(".md"))])
    page = book / "drill_part1.md"
    text = page.read_text()
    fold = re.search(r"<summary>What they ask next</summary>\n\n(.+?)\n\n</details>", text, re.S)
    first, second, *rest = re.split(r"\n\n(?=\*\*)", fold.group(1))
    page.write_text(text.replace(fold.group(1), "\n\n".join([second, first, *rest])))
    _, _, _, before = make_anki.cards("en")
    _, _, _, after = make_anki.cards("en", book=book)
    by_question = {c.fields[0]: c.guid for c in before}
    assert {c.fields[0]: c.guid for c in after} == by_question
    assert [c.guid for c in after] != [c.guid for c in before]  # the order did change
