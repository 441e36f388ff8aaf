"""The static panel: an explorer as self-contained HTML, for the built book.

Every frame is rendered ahead of time; a short inline script switches between them
when a control moves. Nothing is loaded from anywhere else: the frames are data URLs
and the script is inline. Sliders and drop-downs are native form controls, so the
panel works from the keyboard, and each frame's alt text states its figures.
"""

from __future__ import annotations

import base64
import json
import re
from typing import TYPE_CHECKING

from attention_qa.panel.core import InvalidSetting, escape, figures_html
from attention_qa.panel.legibility import smallest_text_px

if TYPE_CHECKING:
    from attention_qa.panel.core import ExplorerBase as Explorer


def data_url(png: bytes) -> str:
    """A frame inlined in the page; the book's build moves it to a file (``_ext``)."""
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def png_size(png: bytes) -> tuple[int, int]:
    """(width, height) from a PNG's header."""
    return int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")


_STYLE = """
.aqa-explorer{border:1px solid #c8ccd0;border-radius:6px;padding:.6em .8em;margin:.8em 0;
background:#fff;color:#1a1a1a}
.aqa-explorer .aqa-title{font-weight:600;margin:0 0 .4em}
.aqa-explorer .aqa-controls{display:flex;flex-wrap:wrap;gap:.4em 1.4em;margin-bottom:.5em}
.aqa-explorer .aqa-control{display:flex;align-items:center;gap:.5em}
.aqa-explorer .aqa-control output{min-width:3.5em;font-variant-numeric:tabular-nums;
font-weight:600}
.aqa-explorer .aqa-stage{position:relative}
.aqa-explorer img{max-width:100%;height:auto;display:block}
.aqa-explorer .aqa-message{color:#8a1c1c;font-weight:600;margin:.5em 0;position:absolute;
top:0;left:0;right:0}
.aqa-explorer .aqa-figures{list-style:none;padding:0;margin:.4em 0 0;display:flex;
flex-wrap:wrap;gap:.2em 1.2em}
.aqa-explorer .aqa-figures b{font-variant-numeric:tabular-nums}
.aqa-explorer .aqa-note{font-size:.85em;color:#4a4a4a;margin:.4em 0 0}
html[data-theme=dark] .aqa-explorer{background:#1e2329;color:#e8eaed;border-color:#5b6470}
html[data-theme=dark] .aqa-explorer select{background:#2b3138;color:#e8eaed;
border:1px solid #7a8490}
html[data-theme=dark] .aqa-explorer input[type=range]{accent-color:#8ab4f8}
html[data-theme=dark] .aqa-explorer .aqa-message{color:#ffb4ab}
html[data-theme=dark] .aqa-explorer .aqa-note{color:#c4c9cf}
""".strip()

# Finds its own panel through document.currentScript, so two panels on a page never clash.
_SCRIPT = """
(function () {
  var root = document.currentScript.closest('.aqa-explorer');
  var data = JSON.parse(root.querySelector('script.aqa-frames').textContent);
  var inputs = Array.prototype.slice.call(root.querySelectorAll('[data-aqa-control]'));
  var img = root.querySelector('img.aqa-frame');
  var message = root.querySelector('.aqa-message');
  var figures = root.querySelector('.aqa-figures');
  function indexOf(ks) {
    return ks.reduce(function (index, k, i) { return index * data.sizes[i] + k; }, 0);
  }
  function valuesOf(index) {
    var ks = [];
    for (var i = data.sizes.length - 1; i >= 0; i--) {
      ks.unshift(index % data.sizes[i]);
      index = Math.floor(index / data.sizes[i]);
    }
    return ks;
  }
  // After the reader moves control c to an invalid setting, move the others to the
  // nearest valid one (fewest controls moved, then smallest steps), as the live panel does.
  function adjust(c) {
    var ks = inputs.map(function (input) { return Number(input.value); });
    if (data.keep || data.frames[indexOf(ks)].m === null) { return; }
    var best = null, bestCost = null;
    data.frames.forEach(function (frame, index) {
      var cand = valuesOf(index);
      if (frame.m !== null || cand[c] !== ks[c]) { return; }
      var moved = 0, steps = 0;
      cand.forEach(function (k, i) { moved += k !== ks[i]; steps += Math.abs(k - ks[i]); });
      if (best === null || moved < bestCost[0] || (moved === bestCost[0] && steps < bestCost[1])) {
        best = cand; bestCost = [moved, steps];
      }
    });
    if (best !== null) { inputs.forEach(function (input, i) { input.value = best[i]; }); }
  }
  function show() {
    var ks = inputs.map(function (input, i) {
      var k = Number(input.value);
      var label = data.labels[i][k];
      var out = root.querySelector('output[for="' + input.id + '"]');
      if (out) { out.textContent = label; input.setAttribute('aria-valuetext', label); }
      return k;
    });
    var index = indexOf(ks);
    var frame = data.frames[index];
    message.hidden = frame.m === null;
    message.textContent = frame.m === null ? '' : frame.m;
    // A refused setting keeps the picture's place, so the page does not jump.
    img.style.visibility = frame.i < 0 ? 'hidden' : '';
    if (frame.i >= 0) { img.src = data.images[frame.i]; }
    img.alt = describe(ks, frame);
    fill(figures, frame.f);
    root.setAttribute('data-aqa-frame', String(index));
  }
  // The alt text, as Explorer.describe writes it: the setting, then the figures (or the
  // message), joined by the language's words (data.w). Composed here rather than stored,
  // since the figures are in the frame already.
  function describe(ks, frame) {
    var w = data.w;
    var where = data.names.map(function (name, i) {
      return name + ' = ' + data.labels[i][ks[i]];
    }).join(w.list);
    var head = data.title + w.open + where + w.close;
    if (frame.m !== null) { return head + w.colon + frame.m; }
    var facts = frame.f.map(function (pair) { return pair[0] + ' ' + pair[1]; }).join(w.facts);
    return head + w.stop + facts + w.end;
  }
  function fill(list, pairs) {
    list.textContent = '';
    pairs.forEach(function (pair) {
      var li = document.createElement('li');
      li.appendChild(document.createTextNode(pair[0] + ' '));
      var b = document.createElement('b');
      b.textContent = pair[1];
      li.appendChild(b);
      list.appendChild(li);
    });
  }
  // The figures under the picture take the room of the longest frame's, so moving a
  // control never makes the page below jump.
  var reservedFor = -1;
  function reserve() {
    var width = figures.clientWidth;
    if (width === reservedFor) return;
    reservedFor = width;
    var probe = figures.cloneNode(false);
    probe.removeAttribute('aria-live');
    probe.setAttribute('aria-hidden', 'true');
    probe.style.cssText = 'position:absolute;visibility:hidden;width:' + width + 'px';
    root.appendChild(probe);
    var tallest = 0;
    data.frames.forEach(function (frame) {
      fill(probe, frame.f);
      tallest = Math.max(tallest, probe.offsetHeight);
    });
    root.removeChild(probe);
    figures.style.minHeight = tallest + 'px';
  }
  reserve();
  // Measured again once the list's width has settled on a new value (a resized window, a
  // turned phone); at the window's resize event the layout may still be moving.
  if (window.ResizeObserver) new ResizeObserver(reserve).observe(figures);
  else window.addEventListener('resize', reserve);
  inputs.forEach(function (input, c) {
    function moved() { adjust(c); show(); }
    input.addEventListener('input', moved);
    input.addEventListener('change', moved);
  });
})();
""".strip()


# Turns a compacted payload (``compacted``) back into label–value pairs in the page, before
# the panel's script parses it.
_EXPAND = """
(function () {
  var holder = document.currentScript.closest('.aqa-explorer').querySelector('script.aqa-frames');
  var data = JSON.parse(holder.textContent);
  data.frames.forEach(function (frame) {
    if (frame.v) {
      frame.f = frame.v.map(function (value, i) { return [data.fl[i], value]; });
      delete frame.v;
    }
  });
  delete data.fl;
  holder.textContent = JSON.stringify(data);
})();
""".strip()


def frames_payload(panel_html: str) -> dict:
    """The frames, images and labels a static panel carries (for tests and tools)."""
    found = re.search(r'class="aqa-frames">(.*?)</script>', panel_html)
    if found is None:
        raise ValueError("no explorer frames in this HTML")
    return expanded(json.loads(found.group(1).replace("<\\/", "</")))


def compacted(payload: dict) -> dict:
    """The payload with the figures' labels written once, when every frame shows the same
    labels in the same order (the usual case): each frame keeps only its values, ``v``, and
    ``fl`` holds the labels. A panel of 96 frames with five figures saves about half its data
    (q35: 29 kB of frames become 14 kB). ``_EXPAND`` undoes it in the page before the panel's
    script reads the data, so the script sees pairs as ever."""
    shown = [[label for label, _ in r["f"]] for r in payload["frames"] if r["m"] is None]
    if len(shown) < 2 or any(labels != shown[0] for labels in shown):
        return payload
    frames = [
        {"i": r["i"], "v": [value for _, value in r["f"]], "m": None} if r["m"] is None else r
        for r in payload["frames"]
    ]
    return {**payload, "frames": frames, "fl": shown[0]}


def expanded(payload: dict) -> dict:
    """A compacted payload as pairs again (the inverse of ``compacted``)."""
    labels = payload.get("fl")
    if labels is None:
        return payload
    frames = [
        {"i": r["i"], "f": [list(pair) for pair in zip(labels, r["v"], strict=True)], "m": None}
        if "v" in r else r
        for r in payload["frames"]
    ]
    return {k: v for k, v in {**payload, "frames": frames}.items() if k != "fl"}


def _control_html(uid: str, position: int, control, payload: dict, enabled: bool) -> str:
    cid = f"{uid}-{control.name}"
    k = control.values.index(control.default)
    label, labels = payload["names"][position], payload["labels"][position]
    disabled = "" if enabled else " disabled"
    common = f'id="{cid}" data-aqa-control="{position}"{disabled}'
    if control.is_slider:
        field = (
            f'<input type="range" {common} min="0" max="{len(control.values) - 1}" step="1" '
            f'value="{k}" aria-valuetext="{escape(labels[k])}">'
            f'<output for="{cid}">{escape(labels[k])}</output>'
        )
    else:
        options = "".join(
            f'<option value="{i}"{" selected" if i == k else ""}>{escape(label)}</option>'
            for i, label in enumerate(labels)
        )
        field = f"<select {common}>{options}</select>"
    return (
        f'<div class="aqa-control"><label for="{cid}">{escape(label)}</label>{field}</div>'
    )


def _frame_record(explorer: Explorer, settings: dict, images: dict[bytes, int]) -> dict:
    try:
        frame = explorer.frame(**settings)
    except Exception as err:
        # At build time a failing setting is the author's bug: stop the build and say where.
        raise RuntimeError(f"{explorer.title!r} failed to compute {settings}: {err!r}") from err
    tr = explorer.language
    if isinstance(frame, InvalidSetting):
        return {"i": -1, "f": [], "m": tr(str(frame))}
    png = explorer.render(frame, compact=True)
    index = images.setdefault(png, len(images))  # identical pictures are stored once
    return {"i": index, "f": [[tr(k), tr(v)] for k, v in frame.figures.items()], "m": None}


def described(payload: dict, index: int) -> str:
    """Frame ``index``'s alt text as the panel's script composes it from the payload (the
    same words as ``Explorer.describe``; tests hold the two equal)."""
    ks, rest = [], index
    for size in reversed(payload["sizes"]):
        ks.insert(0, rest % size)
        rest //= size
    frame, w = payload["frames"][index], payload["w"]
    where = w["list"].join(
        f"{name} = {labels[k]}"
        for name, labels, k in zip(payload["names"], payload["labels"], ks, strict=True)
    )
    head = f"{payload['title']}{w['open']}{where}{w['close']}"
    if frame["m"] is not None:
        return f"{head}{w['colon']}{frame['m']}"
    facts = w["facts"].join(f"{label} {value}" for label, value in frame["f"])
    return f"{head}{w['stop']}{facts}{w['end']}"


def static_panel(explorer: Explorer, all_frames: bool = True) -> str:
    """The explorer as one HTML fragment with inline style, data and script."""
    uid = explorer.uid
    chosen = list(explorer.settings()) if all_frames else [explorer.defaults]
    images: dict[bytes, int] = {}
    records = [_frame_record(explorer, s, images) for s in chosen]
    default_index = chosen.index(explorer.defaults)
    default = records[default_index]
    default_frame = explorer.frame(**explorer.defaults)
    tr = explorer.language
    payload = {
        "title": tr(explorer.title),
        "names": [tr(c.label) for c in explorer.controls],
        "sizes": [len(c.values) for c in explorer.controls],
        "labels": [[tr(label) for label in c.labels] for c in explorer.controls],
        "frames": records,
        "images": [data_url(png) for png in images],
        "keep": explorer.lesson_errors,
        "w": tr.words,
    }
    stored = compacted(payload) if all_frames else payload
    # written as UTF-8, as the page is: a \u escape takes six bytes for a Chinese character
    data = json.dumps(stored, separators=(",", ":"), ensure_ascii=False).replace("</", "<\\/")
    expand = f"<script>{_EXPAND}</script>" if "fl" in stored else ""
    controls = "".join(
        _control_html(uid, i, c, payload, enabled=all_frames)
        for i, c in enumerate(explorer.controls)
    )
    width, height = png_size(next(iter(images)))  # every frame has the same size (tested)
    src = payload["images"][max(default["i"], 0)]
    hidden = ' style="visibility:hidden"' if default["i"] < 0 else ""
    text_px = smallest_text_px(explorer.figure)  # the browser tests scale it to the column
    message = "" if default["m"] is None else escape(default["m"])
    note = (
        ""
        if all_frames
        else '<p class="aqa-note">This copy holds the default setting only: the built book '
        "holds every setting, and running the notebook in Jupyter makes the panel live.</p>"
    )
    caption = f'<p class="aqa-note">{escape(tr(explorer.caption))}</p>' if explorer.caption else ""
    return (
        f'<div class="aqa-explorer" id="{uid}" data-aqa-frame="{default_index}" '
        f'data-aqa-frames="{len(records)}" role="group" aria-labelledby="{uid}-title">'
        f"<style>{_STYLE}</style>"
        f'<p class="aqa-title" id="{uid}-title">{escape(payload["title"])}</p>'
        f'<div class="aqa-controls">{controls}</div>'
        f'<div class="aqa-stage"><img class="aqa-frame" src="{src}" width="{width}" '
        f'height="{height}" data-text-px="{text_px:.1f}" '
        f'alt="{escape(explorer.describe(explorer.defaults, default_frame))}"'
        f"{hidden}>"
        f'<p class="aqa-message" role="status"{"" if message else " hidden"}>{message}</p></div>'
        f'<ul class="aqa-figures" aria-live="polite">{figures_html(default_frame, tr)}</ul>'
        f"{caption}{note}"
        f'<script type="application/json" class="aqa-frames">{data}</script>'
        f"{expand}<script>{_SCRIPT}</script>"
        "</div>"
    )
