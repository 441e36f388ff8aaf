"""Browser tests of the built site: Playwright driving Debian's Chromium, site on 127.0.0.1.

They need the site built first (`make book`); `make test` builds it before running them.
"""

import functools
import http.server
import os
import shutil
import threading
from pathlib import Path

import pytest

SITE = Path(__file__).resolve().parents[2] / "_build" / "html"
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


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="session")
def site_url():
    if not (SITE / "index.html").exists():
        pytest.fail(f"no built site at {SITE}: run `make book` first")
    handler = functools.partial(QuietHandler, directory=str(SITE))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

    if not Path(CHROMIUM).exists():
        pytest.fail(f"Chromium not found at {CHROMIUM}: install Debian's chromium package")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def page(browser, site_url):
    """A page that records console errors, every request that leaves 127.0.0.1, every
    request the site answers with an error (a missing file), and every URL requested."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.console_errors = []
    page.outside_requests = []
    page.failed_responses = []
    page.requested = []
    page.on("console", lambda msg: msg.type == "error" and page.console_errors.append(msg.text))
    page.on("request", lambda request: page.requested.append(request.url))
    page.on(
        "response",
        lambda r: r.status >= 400 and page.failed_responses.append(f"{r.status} {r.url}"),
    )
    page.on("pageerror", lambda err: page.console_errors.append(str(err)))

    def route(route):
        url = route.request.url
        if url.startswith(site_url) or url.startswith("data:"):
            route.continue_()
        else:
            page.outside_requests.append(url)
            route.abort()

    page.route("**/*", route)
    yield page
    context.close()


def built_pages() -> list[str]:
    """Every page of the book proper, as a path relative to the site root."""
    return sorted(
        str(p.relative_to(SITE))
        for p in SITE.rglob("*.html")
        if p.parent.name not in ("_static", "_sources")
        and p.name not in ("genindex.html", "search.html")
    )
