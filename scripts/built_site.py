"""The built site and the browser that reads it, shared by the site tests, the handouts
and the page-weight benchmark: where the site is, which Chromium, and a local server."""

import contextlib
import functools
import http.server
import os
import shutil
import socket
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SITE = ROOT / "_build" / "html"
CHROMIUM = os.environ.get("CHROMIUM", shutil.which("chromium") or "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@contextlib.contextmanager
def serve(site: Path = SITE):
    """The built site on http://127.0.0.1:<free port>, for as long as the block runs."""
    handler = functools.partial(_QuietHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()


@contextlib.contextmanager
def chromium():
    """Headless Chromium (Debian's), closed when the block ends.

    Nothing it asks for leaves the machine: its proxy is a port of 127.0.0.1 held here and
    never listened on, so a request to another host is refused at once (Chromium sends
    loopback addresses past a proxy) — a page that asks for something outside is seen asking
    (the site tests record it) and never waits for an answer."""
    from playwright.sync_api import sync_playwright

    if not Path(CHROMIUM).exists():
        raise SystemExit(f"Chromium not found at {CHROMIUM}: install Debian's chromium package")
    with socket.socket() as closed, sync_playwright() as p:
        closed.bind(("127.0.0.1", 0))  # bound, never listening: a connection is refused
        proxy = f"--proxy-server=http://127.0.0.1:{closed.getsockname()[1]}"
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True,
                                    args=[*CHROMIUM_ARGS, proxy])
        try:
            yield browser
        finally:
            browser.close()
