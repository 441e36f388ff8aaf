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

if TYPE_CHECKING:
    from attention_qa.panel.core import ExplorerBase as Explorer


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


_STYLE = """
.aqa-explorer{border:1px solid #c8ccd0;border-radius:6px;padding:.6em .8em;margin:.8em 0;
background:#fff;color:#1a1a1a}
.aqa-explorer .aqa-title{font-weight:600;margin:0 0 .4em}
.aqa-explorer .aqa-controls{display:flex;flex-wrap:wrap;gap:.4em 1.4em;margin-bottom:.5em}
.aqa-explorer .aqa-control{display:flex;align-items:center;gap:.5em}
.aqa-explorer .aqa-control output{min-width:3.5em;font-variant-numeric:tabular-nums;
font-weight:600}
.aqa-explorer img{max-width:100%;height:auto;display:block}
.aqa-explorer .aqa-message{color:#8a1c1c;font-weight:600;margin:.5em 0}
.aqa-explorer .aqa-figures{list-style:none;padding:0;margin:.4em 0 0;display:flex;
flex-wrap:wrap;gap:.2em 1.2em}
.aqa-explorer .aqa-figures b{font-variant-numeric:tabular-nums}
.aqa-explorer .aqa-note{font-size:.85em;color:#4a4a4a;margin:.4em 0 0}
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
  function show() {
    var index = 0;
    inputs.forEach(function (input, i) {
      var k = Number(input.value);
      index = index * data.sizes[i] + k;
      var label = data.labels[i][k];
      var out = root.querySelector('output[for="' + input.id + '"]');
      if (out) { out.textContent = label; input.setAttribute('aria-valuetext', label); }
    });
    var frame = data.frames[index];
    root.setAttribute('data-aqa-frame', String(index));
    message.hidden = frame.m === null;
    message.textContent = frame.m === null ? '' : frame.m;
    img.hidden = frame.i < 0;
    if (frame.i >= 0) { img.src = 'data:image/png;base64,' + data.images[frame.i]; }
    img.alt = frame.a;
    figures.textContent = '';
    frame.f.forEach(function (pair) {
      var li = document.createElement('li');
      li.appendChild(document.createTextNode(pair[0] + ' '));
      var b = document.createElement('b');
      b.textContent = pair[1];
      li.appendChild(b);
      figures.appendChild(li);
    });
  }
  inputs.forEach(function (input) {
    input.addEventListener('input', show);
    input.addEventListener('change', show);
  });
})();
""".strip()


def frames_payload(panel_html: str) -> dict:
    """The frames, images and labels a static panel carries (for tests and tools)."""
    found = re.search(r'class="aqa-frames">(.*?)</script>', panel_html)
    if found is None:
        raise ValueError("no explorer frames in this HTML")
    return json.loads(found.group(1).replace("<\\/", "</"))


def _control_html(uid: str, position: int, control, enabled: bool) -> str:
    cid = f"{uid}-{control.name}"
    k = control.values.index(control.default)
    disabled = "" if enabled else " disabled"
    common = f'id="{cid}" data-aqa-control="{position}"{disabled}'
    if control.is_slider:
        field = (
            f'<input type="range" {common} min="0" max="{len(control.values) - 1}" step="1" '
            f'value="{k}" aria-valuetext="{escape(control.labels[k])}">'
            f'<output for="{cid}">{escape(control.labels[k])}</output>'
        )
    else:
        options = "".join(
            f'<option value="{i}"{" selected" if i == k else ""}>{escape(label)}</option>'
            for i, label in enumerate(control.labels)
        )
        field = f"<select {common}>{options}</select>"
    return (
        f'<div class="aqa-control"><label for="{cid}">{escape(control.label)}</label>{field}</div>'
    )


def _frame_record(explorer: Explorer, settings: dict, images: dict[bytes, int]) -> dict:
    try:
        frame = explorer.frame(**settings)
    except Exception as err:
        # At build time a failing setting is the author's bug: stop the build and say where.
        raise RuntimeError(f"{explorer.title!r} failed to compute {settings}: {err!r}") from err
    alt = explorer.describe(settings, frame)
    if isinstance(frame, InvalidSetting):
        return {"i": -1, "a": alt, "f": [], "m": str(frame)}
    png = explorer.render(frame, compact=True)
    index = images.setdefault(png, len(images))  # identical pictures are stored once
    return {"i": index, "a": alt, "f": list(frame.figures.items()), "m": None}


def static_panel(explorer: Explorer, all_frames: bool = True) -> str:
    """The explorer as one HTML fragment with inline style, data and script."""
    uid = explorer.uid
    chosen = list(explorer.settings()) if all_frames else [explorer.defaults]
    images: dict[bytes, int] = {}
    records = [_frame_record(explorer, s, images) for s in chosen]
    default_index = chosen.index(explorer.defaults)
    default = records[default_index]
    default_frame = explorer.frame(**explorer.defaults)
    payload = {
        "sizes": [len(c.values) for c in explorer.controls],
        "labels": [list(c.labels) for c in explorer.controls],
        "frames": records,
        "images": [b64(png) for png in images],
    }
    data = json.dumps(payload, separators=(",", ":")).replace("</", "<\\/")
    controls = "".join(
        _control_html(uid, i, c, enabled=all_frames) for i, c in enumerate(explorer.controls)
    )
    src = f"data:image/png;base64,{payload['images'][default['i']]}" if default["i"] >= 0 else ""
    message = "" if default["m"] is None else escape(default["m"])
    note = (
        ""
        if all_frames
        else '<p class="aqa-note">This copy holds the default setting only: the built book '
        "holds every setting, and running the notebook in Jupyter makes the panel live.</p>"
    )
    caption = f'<p class="aqa-note">{escape(explorer.caption)}</p>' if explorer.caption else ""
    return (
        f'<div class="aqa-explorer" id="{uid}" data-aqa-frame="{default_index}" '
        f'data-aqa-frames="{len(records)}" role="group" aria-labelledby="{uid}-title">'
        f"<style>{_STYLE}</style>"
        f'<p class="aqa-title" id="{uid}-title">{escape(explorer.title)}</p>'
        f'<div class="aqa-controls">{controls}</div>'
        f'<img class="aqa-frame" src="{src}" alt="{escape(default["a"])}"'
        f"{' hidden' if default['i'] < 0 else ''}>"
        f'<p class="aqa-message" role="status"{"" if message else " hidden"}>{message}</p>'
        f'<ul class="aqa-figures" aria-live="polite">{figures_html(default_frame)}</ul>'
        f"{caption}{note}"
        f'<script type="application/json" class="aqa-frames">{data}</script>'
        f"<script>{_SCRIPT}</script>"
        "</div>"
    )
