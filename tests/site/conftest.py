"""Browser tests of the built site: Playwright driving Debian's Chromium, site on 127.0.0.1.

They need the site built first (`make book`); `make test` builds it before running them.
"""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
from built_site import CHROMIUM, SITE, chromium, serve  # noqa: E402


@pytest.fixture(scope="session")
def site_url():
    if not (SITE / "index.html").exists():
        pytest.fail(f"no built site at {SITE}: run `make book` first")
    with serve(SITE) as url:
        yield url


@pytest.fixture(scope="session")
def browser():
    if not Path(CHROMIUM).exists():
        pytest.fail(f"Chromium not found at {CHROMIUM}: install Debian's chromium package")
    with chromium() as browser:
        yield browser


def watch(page, site_url: str) -> None:
    """Record on ``page`` its console errors, every request its browser context makes outside
    the site (none gets out of the machine: ``built_site.chromium``), web sockets included,
    every request the site answers with an error (a missing file), and every URL requested;
    ``forget`` empties the records."""
    forget(page)

    def outside(url: str) -> bool:
        return not url.startswith((f"{site_url}/", "data:"))

    def on_request(request):
        page.requested.append(request.url)
        if outside(request.url):
            page.outside_requests.append(request.url)

    page.on("console", lambda msg: msg.type == "error" and page.console_errors.append(msg.text))
    page.context.on("request", on_request)  # the page's, and any worker's or popup's
    page.on("websocket", lambda ws: outside(ws.url) and page.outside_requests.append(ws.url))
    page.on(
        "response",
        lambda r: r.status >= 400 and page.failed_responses.append(f"{r.status} {r.url}"),
    )
    page.on("pageerror", lambda err: page.console_errors.append(str(err)))
    page.crashed = False
    page.on("crash", lambda _: setattr(page, "crashed", True))


def forget(page) -> None:
    page.console_errors = []
    page.outside_requests = []
    page.failed_responses = []
    page.requested = []


def _new_page(browser, site_url):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    watch(page, site_url)
    return context, page


@pytest.fixture
def page(browser, site_url):
    """A page of its own (a new browser context) that records what ``watch`` records."""
    context, page = _new_page(browser, site_url)
    yield page
    context.close()


@pytest.fixture(scope="module")
def _tabs(browser, site_url):
    """The module's open tab (``tab``) and every context opened for one."""
    tabs = {"page": None, "contexts": []}
    yield tabs
    for context in tabs["contexts"]:
        context.close()


@pytest.fixture
def tab(_tabs, browser, site_url):
    """One tab for a module's pages, each loaded in turn as a reader goes from page to page,
    recording what ``watch`` records. Opening a tab costs Chromium about as much processor
    time again as loading a page in it. The cache and the fonts already drawn carry over
    from page to page, as they do for a reader (a first visit, nothing cached, is what
    ``test_weight`` measures); the test ends its page with ``leave``, which empties the
    page's storage. A page whose test did not reach ``leave`` (it failed), or whose tab
    crashed, leaves its tab behind: the next page gets a new one."""
    page = _tabs["page"]
    if page is None or not page.left or page.crashed:
        context, page = _new_page(browser, site_url)
        _tabs["contexts"].append(context)
        _tabs["page"] = page
    page.left = False
    yield page


def leave(page) -> None:
    """End a page's visit in ``tab``: empty its storage (so the next page starts as a first
    one would), which also takes in every event the page has sent so far, and mark the tab
    fit for the next page."""
    page.evaluate("() => { localStorage.clear(); sessionStorage.clear(); }")
    page.left = True


def built_pages(site: Path = SITE) -> list[str]:
    """Every page of the book proper, as a path relative to ``site`` (the English site
    leaves out the Chinese one inside it, ``zh/``)."""
    return sorted(
        str(p.relative_to(site))
        for p in site.rglob("*.html")
        if p.parent.name not in ("_static", "_sources")
        and p.name not in ("genindex.html", "search.html")
        and p.relative_to(site).parts[0] != "zh"
    )


ZH_SITE = SITE / "zh"


def zh_pages() -> list[str]:
    """Every page of the Chinese edition, as a path relative to the English site's root."""
    return [f"zh/{path}" for path in built_pages(ZH_SITE)] if ZH_SITE.exists() else []
