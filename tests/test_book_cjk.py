"""Chinese inside code and printed output is marked in the page's HTML (``_ext/book_cjk.py``)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "_ext"))

from book_cjk import marked_pre  # noqa: E402


def test_chinese_in_highlighted_code_is_wrapped_between_tags():
    body = (
        '<p>词元 outside</p><div class="highlight"><pre><span></span>'
        '<span class="s2">&quot;词元化&quot;</span> '
        '<span class="c1"># 注释，ok</span>\n</pre></div>'
    )
    assert marked_pre(body) == (
        '<p>词元 outside</p><div class="highlight"><pre><span></span>'
        '<span class="s2">&quot;<span lang="zh-CN">词元化</span>&quot;</span> '
        '<span class="c1"># <span lang="zh-CN">注释，</span>ok</span>\n</pre></div>'
    )


def test_printed_output_and_several_blocks():
    body = "<pre>a 词 b</pre><p>x</p><pre class='o'>'化': 9 tokens</pre>"
    assert marked_pre(body) == (
        '<pre>a <span lang="zh-CN">词</span> b</pre><p>x</p>'
        "<pre class='o'>'<span lang=\"zh-CN\">化</span>': 9 tokens</pre>"
    )


def test_html_without_chinese_is_unchanged():
    body = '<pre><span class="k">def</span> f(x): return x &lt; 2</pre>'
    assert marked_pre(body) == body
