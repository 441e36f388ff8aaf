// The search page's additions to Sphinx's search (searchtools.js). Loaded there only.
(function () {
  if (typeof Search === "undefined") return;

  // Chinese queries are cut into the index's own words, longest first, as jieba cut the
  // pages when the book was built: 填充掩码 searches for 填充 and 掩码.
  const CHINESE = /[\u3400-\u9fff\uf900-\ufaff]/;
  function indexed(word) {
    const index = Search._index || {};
    return [index.terms, index.titleterms].some(function (words) {
      return words && Object.prototype.hasOwnProperty.call(words, word);
    });
  }
  function cutChinese(run) {
    const words = [];
    for (let i = 0; i < run.length; ) {
      let j = run.length;
      while (j > i + 1 && !indexed(run.slice(i, j))) j--;
      if (j > i + 1 || indexed(run[i])) words.push(run.slice(i, j));
      i = j;  // a lone character the index does not know (的, 和) is left out
    }
    return words.length ? words : [run];
  }
  const splitWords = splitQuery;
  splitQuery = function (query) {
    return splitWords(query).flatMap(function (word) {
      return CHINESE.test(word) && !indexed(word) ? cutChinese(word) : [word];
    });
  };

  // Snippets in plain text. Sphinx takes each snippet from the text of the page found;
  // formulas there are SVG with MathML for screen readers, whose text runs together
  // ("QKTdk"). Each formula carries a plain reading instead (data-text, "√d_k"), written
  // when the book was built, and the snippet uses that.
  Search.htmlToText = function (htmlString, anchor) {
    const page = new DOMParser().parseFromString(htmlString, "text/html");
    page.querySelectorAll(".headerlink, script, style, #aqa-math-glyphs").forEach(function (el) {
      el.remove();
    });
    page.querySelectorAll(".math[data-text]").forEach(function (formula) {
      formula.replaceWith(formula.dataset.text);
    });
    const main = page.querySelector('[role="main"]');
    const part = anchor && main ? main.querySelector(anchor) : null;
    return (part || main || page.body).textContent;
  };

  // Chinese in the results (titles and snippets arrive as plain text) is marked
  // lang="zh-CN", as on the pages, so that it is read and drawn as Chinese.
  const CHINESE_RUN = /[\u2e80-\u2fdf\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\ufe30-\ufe4f\uff00-\uffef]+/g;
  function markChinese(root) {
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    const unmarked = [];
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      if (node.data.search(CHINESE_RUN) >= 0 && !node.parentElement.closest('[lang^="zh"]')) {
        unmarked.push(node);
      }
    }
    unmarked.forEach(function (node) {
      const parts = document.createDocumentFragment();
      let at = 0;
      node.data.replace(CHINESE_RUN, function (run, offset) {
        parts.append(node.data.slice(at, offset));
        const span = document.createElement("span");
        span.lang = "zh-CN";
        span.textContent = run;
        parts.append(span);
        at = offset + run.length;
      });
      parts.append(node.data.slice(at));
      node.replaceWith(parts);
    });
  }
  document.addEventListener("DOMContentLoaded", function () {
    const results = document.getElementById("search-results");
    if (!results) return;
    new MutationObserver(function () { markChinese(results); })
      .observe(results, { childList: true, subtree: true, characterData: true });
  });
})();
