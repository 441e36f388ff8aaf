"""What a reader's browser transfers, and how fast an explorer answers a key press.

Serves the built site (``_build/html``) over http on 127.0.0.1 and opens it in Chromium
(Playwright, Debian's /usr/bin/chromium), counting the bytes of every network response as
Chromium reports them (CDP ``Network.loadingFinished``, ``encodedDataLength``: body and
headers as they came over the wire).

- first visit: a chapter opened with an empty cache;
- next page: then the chapter after it, in the same browser, cache warm;
- key press: focus the first explorer slider that can move right, press ArrowRight, and
  time until the panel shows the new frame (``data-aqa-frame`` changed, its ``<img>``
  decoded and painted).

Images inlined in a page (``data:`` URLs, or base64 frames in an explorer's data) are no
network transfers of their own: they arrive as part of its HTML, and are reported beside it
(``inline_data_bytes``) so that the page's own weight can be told from the frames it carries.

Usage: python benchmarks/site_weight.py [--only PAGE ...] [--json PATH]   (prints a table)
"""

import argparse
import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
from built_site import SITE, chromium, serve  # noqa: E402

KB = 1000
FIRST_VISIT_BUDGET = 1_500_000
NEXT_PAGE_BUDGET = 500_000
ROOM = 0.9  # the share of each budget a page may use, so that the next chapter fits too
# Base64 runs long enough to be an image: data: URLs and explorer frames in JSON.
INLINE_IMAGE = re.compile(rb"[A-Za-z0-9+/]{400,}={0,2}")


def chapters(site: Path = SITE) -> list[str]:
    """The book's pages in reading order (the order of the "next" links), from the root."""
    order: list[str] = []
    path = _redirect_target(site) or "index.html"
    while path and path not in order:
        order.append(path)
        link = re.search(r'<link rel="next"[^>]*href="([^"]+)"', (site / path).read_text())
        path = _relative(site, (site / path).parent / link.group(1)) if link else None
    return order


def _relative(site: Path, path: Path) -> str:
    return str(path.resolve().relative_to(site.resolve()))


def _redirect_target(site: Path) -> str | None:
    """The root page's redirect (jupyter-book's index.html sends readers to the intro)."""
    found = re.search(r'url=([^"]+)"', (site / "index.html").read_text())
    return _relative(site, site / found.group(1)) if found else None


def inline_data_bytes(path: str, site: Path = SITE) -> int:
    """Bytes of base64 images written into a page (explorer frames, inlined figures)."""
    return sum(len(m.group(0)) for m in INLINE_IMAGE.finditer((site / path).read_bytes()))


class Transfers:
    """Every network response of one page, with the bytes it took (CDP Network domain)."""

    def __init__(self, page):
        self.urls, self.status, self.bytes = {}, {}, {}
        self.cdp = page.context.new_cdp_session(page)
        self.cdp.send("Network.enable")
        self.cdp.on("Network.requestWillBeSent", self._sent)
        self.cdp.on("Network.responseReceived", self._response)
        self.cdp.on("Network.loadingFinished", self._finished)
        self.cdp.on("Network.loadingFailed", self._failed)
        self.done: set[str] = set()

    def _sent(self, event):
        self.urls[event["requestId"]] = event["request"]["url"]

    def _response(self, event):
        self.status[event["requestId"]] = event["response"]["status"]

    def _finished(self, event):
        self.bytes[event["requestId"]] = event["encodedDataLength"]
        self.done.add(event["requestId"])

    def _failed(self, event):
        self.done.add(event["requestId"])

    def in_flight(self) -> int:
        return len(set(self.urls) - self.done)

    def reset(self):
        self.urls, self.status, self.bytes, self.done = {}, {}, {}, set()

    def by_url(self, base: str) -> dict[str, int]:
        """Bytes per URL (relative to base), network transfers only (no ``data:``)."""
        sizes: dict[str, int] = {}
        for request, size in self.bytes.items():
            url = self.urls.get(request, "")
            if url.startswith("data:"):
                continue
            name = url.removeprefix(base + "/").split("?")[0]
            sizes[name] = sizes.get(name, 0) + int(size)
        return sizes

    def failed(self, base: str) -> list[str]:
        return sorted(
            f"{self.status[r]} {self.urls.get(r, '').removeprefix(base + '/')}"
            for r in self.status
            if self.status[r] >= 400
        )


def _settle(page, transfers: "Transfers", quiet_ms: int = 300, limit_ms: int = 30_000):
    """Wait until the page, its fonts and its lazily loaded pieces have all arrived:
    fonts ready and no request in flight for quiet_ms."""
    page.evaluate("() => document.fonts.ready.then(() => true)")
    quiet = waited = 0
    while quiet < quiet_ms and waited < limit_ms:
        page.wait_for_timeout(50)
        waited += 50
        quiet = 0 if transfers.in_flight() else quiet + 50


def visit(browser, base: str, path: str, next_path: str | None) -> dict:
    """One empty-cache visit to path, then (cache warm) to next_path."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    transfers = Transfers(page)
    try:
        page.goto(f"{base}/{path}", wait_until="load")
        _settle(page, transfers)
        first = transfers.by_url(base)
        failed = transfers.failed(base)
        result = {
            "page": path,
            "first_visit_bytes": sum(first.values()),
            "first_visit": first,
            "inline_data_bytes": inline_data_bytes(path),
            "failed": failed,
        }
        if next_path:
            transfers.reset()
            page.goto(f"{base}/{next_path}", wait_until="load")
            _settle(page, transfers)
            after = transfers.by_url(base)
            result.update(
                next_page=next_path,
                next_page_bytes=sum(after.values()),
                next_page_transfers=after,
                next_inline_data_bytes=inline_data_bytes(next_path),
                failed=failed + transfers.failed(base),
            )
        return result
    finally:
        context.close()


KEY_PRESS_JS = """
async ([index, which]) => {
  const explorer = document.querySelectorAll('.aqa-explorer')[index];
  const slider = explorer.querySelectorAll('input[type=range]')[which];
  const img = explorer.querySelector('img.aqa-frame');
  const before = explorer.getAttribute('data-aqa-frame');
  window.__aqaPressed = null;
  addEventListener('keydown', (e) => { window.__aqaPressed = e.timeStamp; },
                   {capture: true, once: true});
  slider.focus();
  window.__aqaShown = new Promise((resolve) => {
    const observer = new MutationObserver(async () => {
      if (explorer.getAttribute('data-aqa-frame') === before) return;
      observer.disconnect();
      if (!img.complete) await new Promise((r) => img.addEventListener('load', r, {once: true}));
      try { await img.decode(); } catch (e) {}
      requestAnimationFrame(() => resolve(performance.now()));
    });
    observer.observe(explorer, {attributes: true, attributeFilter: ['data-aqa-frame']});
  });
  return before;
}
"""


def key_press_latency(browser, base: str, path: str, presses: int = 5) -> list[float] | None:
    """Milliseconds from an ArrowRight on the first movable explorer slider to its new frame.

    Each press starts from a freshly loaded page, so that a frame fetched on demand is
    fetched (from the warm cache or the network) rather than already in memory.
    """
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    transfers = Transfers(page)
    times = []
    try:
        for _ in range(presses):
            page.goto(f"{base}/{path}", wait_until="load")
            _settle(page, transfers)
            # The first slider, in page order, that can still move right.
            where = page.evaluate(
                "() => { const all = [...document.querySelectorAll('.aqa-explorer')];"
                " for (const [i, e] of all.entries()) {"
                "  const s = [...e.querySelectorAll('input[type=range]')].findIndex("
                "   s => !s.disabled && Number(s.value) < Number(s.max));"
                "  if (s >= 0) return [i, s]; } return null; }"
            )
            if where is None:
                return None
            page.evaluate(KEY_PRESS_JS, where)
            page.keyboard.press("ArrowRight")
            shown = page.evaluate("() => window.__aqaShown")
            pressed = page.evaluate("() => window.__aqaPressed")
            times.append(shown - pressed)
        return times
    finally:
        context.close()


def measure(only: list[str] | None = None, presses: int = 5, edition: str = "") -> list[dict]:
    """Every chapter of the English site, or of the edition in folder ``edition`` ("zh")."""
    order = [f"{edition}/{p}" for p in chapters(SITE / edition)] if edition else chapters()
    pages = [p for p in order if not only or any(o in p for o in only)]
    results = []
    with serve() as base, chromium() as browser:
        for path in pages:
            following = order[(order.index(path) + 1) % len(order)]
            result = visit(browser, base, path, following)
            if "aqa-explorer" in (SITE / path).read_text():
                result["key_press_ms"] = key_press_latency(browser, base, path, presses)
            results.append(result)
    return results


def median(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[len(ordered) // 2]


def table(results: list[dict]) -> str:
    """Per page: bytes transferred, of which images inlined in its HTML, the next page's
    bytes, and the key-press time."""
    rows = [
        "| page | first visit | of which inlined images | next page (cache warm) "
        "| key press → frame, median |",
        "|---|---|---|---|---|",
    ]
    for r in results:
        press = f"{median(r['key_press_ms']):.1f} ms" if r.get("key_press_ms") else ""
        rows.append(
            f"| {r['page']} | {r['first_visit_bytes'] / KB:.0f} kB "
            f"| {r['inline_data_bytes'] / KB:.0f} kB "
            f"| {r.get('next_page_bytes', 0) / KB:.0f} kB | {press} |"
        )
    return "\n".join(rows) + "\n"


def summary_rows(site: list[dict]) -> list[tuple[str, str, str]]:
    """The heaviest first visit and next page, and the slowest key press, in the summary."""
    first = max(site, key=lambda r: r["first_visit_bytes"])
    after = max(site, key=lambda r: r.get("next_page_bytes", 0))
    presses = [(median(r["key_press_ms"]), r["page"]) for r in site if r.get("key_press_ms")]
    rows = [
        (
            "first visit, heaviest chapter (empty cache)",
            f"{first['first_visit_bytes'] / 1e6:.2f} MB ({first['page']})",
            f"≤ {ROOM * FIRST_VISIT_BUDGET / 1e6:.2f} MB ({ROOM:.0%} of the 1.5 MB budget)",
        ),
        (
            "next chapter, heaviest (cache warm)",
            f"{after['next_page_bytes'] / KB:.0f} kB ({after['next_page']})",
            f"≤ {ROOM * NEXT_PAGE_BUDGET / KB:.0f} kB ({ROOM:.0%} of the 500 kB budget)",
        ),
    ]
    if presses:
        slowest, page = max(presses)
        rows.append(
            ("key press → new frame shown, slowest page (median)", f"{slowest:.1f} ms ({page})", "")
        )
    return rows


def assets(result: dict) -> str:
    sizes = sorted(result["first_visit"].items(), key=lambda kv: -kv[1])
    return "\n".join(f"  {size / KB:8.1f} kB  {name}" for name, size in sizes)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", help="pages whose path contains one of these")
    parser.add_argument("--presses", type=int, default=5)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    if not (SITE / "index.html").exists():
        sys.exit(f"no built site at {SITE}: run `make book` first")
    results = measure(args.only, args.presses)
    print(table(results))
    heaviest = max(results, key=lambda r: r["first_visit_bytes"])
    print(f"first visit to {heaviest['page']}, per file:\n{assets(heaviest)}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
