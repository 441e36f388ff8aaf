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
