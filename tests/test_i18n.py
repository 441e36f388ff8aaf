"""The explorers in another language (attention_qa.panel.i18n): lookups with the numbers
taken out, pictures whose words are translated, the alt text in the language's own words,
and the build's panels in Chinese (_ext/book_frames.py)."""

import sys
from pathlib import Path

import pytest
from matplotlib.figure import Figure
from sphinx.errors import ExtensionError

from attention_qa.panel import (
    Control,
    Explorer,
    Frame,
    InvalidSetting,
    View,
    described,
    frames_payload,
)
from attention_qa.panel.i18n import (
    ENGLISH,
    Translator,
    figure_texts,
    needs_translation,
    template,
    translate_figure,
)

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "_ext"))

import book_frames  # noqa: E402

TABLE = {
    "Toy heads": "玩具头",
    "heads": "头数",
    "mask": "掩码",
    "causal": "因果",
    "{0} heads do not divide d_model = {1}": "{0} 个头不能整除 d_model = {1}",
    "share kept": "保留比例",
    "{0} keys": "{0} 个键",
    "weight": "权重",
    "layer {0} of {1}": "第 {0} 层（共 {1} 层）",
    "{0} of {1}": "{1} 中的 {0}",
    "English label": "中文标签",
}


def zh() -> Translator:
    return Translator("zh_CN", dict(TABLE))


def test_numbers_come_out_of_the_entry_and_go_back_in_their_places():
    assert template("8 heads do not divide d_model = 100") == (
        "{0} heads do not divide d_model = {1}",
        ["8", "100"],
    )
    # names keep their digits; separators and decimals belong to the number
    assert template("float16 on GPT-2 with 1,024 tokens, 12.5 GiB") == (
        "float16 on GPT-{0} with {1} tokens, {2} GiB",
        ["2", "1,024", "12.5"],
    )
    assert template("1.01e+12 FLOPs, 3e-05 rad") == ("{0} FLOPs, {1} rad", ["1.01e+12", "3e-05"])
    assert template("{x}") == ("{{x}}", [])
    tr = zh()
    assert tr("8 heads do not divide d_model = 100") == "8 个头不能整除 d_model = 100"
    assert tr("3 of 12") == "12 中的 3"  # placeholders may move
    assert tr("layer 2 of 12") == "第 2 层（共 12 层）"


def test_what_needs_no_entry_and_what_is_missing():
    assert not needs_translation("0.93") and not needs_translation("$d_k = 64$")
    assert not needs_translation("x = 3") and needs_translation("max weight")
    tr = zh()
    assert tr("0.93") == "0.93" and tr("因果") == "因果"  # a number; already translated
    assert tr.missing == set()
    assert tr("max weight 0.5") == "max weight 0.5"  # no entry: stays English, and is counted
    assert tr.missing == {"max weight {0}"}
    assert ENGLISH("max weight") == "max weight" and ENGLISH.missing == set()


class WordsView(View):
    figsize = (3, 2)

    def setup(self, fig: Figure) -> None:
        ax, other = fig.subplots(1, 2)
        other.bar(range(2), [1, 2])
        other.set(xticks=range(2), xticklabels=["share kept", "weight"])  # a dict of labels
        ax.set_title("Toy heads")
        ax.set_xlabel("heads")
        ax.set_xticks([0, 1], labels=["causal", "mask"])
        ax.bar(["causal", "mask"], [1, 2], label="weight")
        ax.legend()
        self.note = ax.text(0, 0, "x", animated=True)

    def update(self, data) -> None:
        self.note.set_text(f"{data} keys")


def test_every_word_in_a_picture_is_translated():
    fig = Figure()
    view = WordsView()
    view.setup(fig)
    view.update(4)
    before = set(figure_texts(fig))
    assert {"Toy heads", "heads", "causal", "mask", "weight", "4 keys", "share kept"} <= before
    translate_figure(fig, zh())
    fig.canvas.draw()  # tick labels are written again from their formatters when drawn
    after = set(figure_texts(fig))
    assert {"玩具头", "头数", "因果", "掩码", "权重", "4 个键", "保留比例"} <= after
    assert not {"Toy heads", "causal", "mask", "4 keys", "share kept"} & after


def compute(heads, mask):
    if heads == 3:
        raise InvalidSetting("3 heads do not divide d_model = 64")
    return Frame(heads, {"share kept": f"{heads / 8:.2f}", "weight": "English label"})


def toy() -> Explorer:
    controls = [Control("heads", "heads", (2, 3, 4)), Control("mask", "mask", ("causal",))]
    return Explorer("Toy heads", controls, compute, WordsView())


def test_a_chinese_panel_says_everything_in_chinese():
    explorer = toy().in_language(zh())
    payload = frames_payload(explorer.to_html())
    assert payload["title"] == "玩具头" and payload["names"] == ["头数", "掩码"]
    assert payload["labels"] == [["2", "3", "4"], ["因果"]]
    assert payload["frames"][0]["f"] == [["保留比例", "0.25"], ["权重", "中文标签"]]
    assert payload["frames"][1]["m"] == "3 个头不能整除 d_model = 64"
    # the alt text, as the page's script composes it, is Explorer.describe's, in Chinese
    assert described(payload, 0) == (
        "玩具头（头数 = 2，掩码 = 因果）。保留比例 0.25；权重 中文标签。"
    )
    assert described(payload, 1) == (
        "玩具头（头数 = 3，掩码 = 因果）：3 个头不能整除 d_model = 64"
    )
    settings = list(explorer.settings())
    for index, setting in enumerate(settings):
        assert described(payload, index) == explorer.describe(setting, explorer.frame(**setting))
    assert explorer.language.missing == set()


def test_the_english_panel_keeps_its_words():
    payload = frames_payload(toy().to_html())
    assert payload["title"] == "Toy heads"
    assert described(payload, 0) == (
        "Toy heads at heads = 2, mask = causal. share kept 0.25; weight English label."
    )


def test_the_build_stops_on_a_word_missing_from_the_table(tmp_path):
    table = {k: v for k, v in TABLE.items() if k != "weight"}

    def toy_explorer():
        return toy()

    with pytest.raises(ExtensionError, match=r"toy_explorer: not in .*explorers\.po.*weight"):
        book_frames.cached_panel(toy_explorer, tmp_path, language=Translator("zh_CN", table))
    assert list(tmp_path.iterdir()) == []  # nothing cached


def test_each_language_has_its_own_cached_panel(tmp_path):
    def toy_explorer():
        return toy()

    english = book_frames.cached_panel(toy_explorer, tmp_path)
    chinese = book_frames.cached_panel(toy_explorer, tmp_path, language=zh())
    assert "Toy heads" in english and "玩具头" in chinese
    names = sorted(p.name for p in tmp_path.iterdir())
    assert len(names) == 2 and any(f"-zh_CN-{zh().digest}" in n for n in names)


def test_the_chinese_table_is_read_without_fuzzy_or_empty_entries(tmp_path):
    folder = tmp_path / "locales" / "zh_CN" / "LC_MESSAGES"
    folder.mkdir(parents=True)
    (folder / "explorers.po").write_text(
        'msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=UTF-8\\n"\n\n'
        'msgid "heads"\nmsgstr "头数"\n\n'
        '#, fuzzy\nmsgid "mask"\nmsgstr "掩"\n\n'
        'msgid "weight"\nmsgstr ""\n',
        encoding="utf-8",
    )
    tr = book_frames.translator(tmp_path, "zh_CN")
    assert tr.table == {"heads": "头数"}
    assert book_frames.translator(tmp_path, "en") is ENGLISH
    with pytest.raises(ExtensionError, match="no table"):
        book_frames.translator(tmp_path, "fr")
