"""Browser tests: Debian's Chromium driven by Playwright's sync API against a real server process.

No browser download ever happens: Playwright launches Debian's build of Chromium as the old headless
shell (/usr/bin/chromium-headless-shell, the build Playwright itself runs headless tests on), and
the full browser (/usr/bin/chromium) for what only it does (`full_pages`: a service worker's
notifications; tests/web/test_app_shell.py's own browsers). The shell costs a page about a third
of the full browser's CPU (python -m bench.page_load), and the suite is CPU-bound. Without the
shell, every test runs on the full browser. One server and one browser serve the whole module set;
every test opens its own browser contexts (separate localStorage, so separate players).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.app.harness import ROOT, ServerProcess

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMIUM_SHELL = os.environ.get("CHROMIUM_SHELL", "/usr/bin/chromium-headless-shell")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]
ARTIFACTS = ROOT / "artifacts"

import playwright.sync_api as playwright_sync  # noqa: E402 - in the dev extra: a missing one fails

# Playwright's expect() waits 5 s for a page to come to what it asserts, its actions and waits the
# context's 10 s (Pages.new): on a loaded machine a table took longer than 5 s to appear after a
# start (a clean clone's test_ring), so every wait gets the one limit. A test that times something
# measures it against a baseline of its own; this is only how long a page may take to get there.
playwright_sync.expect.set_options(timeout=10_000)


@pytest.fixture(scope="session")
def artifacts() -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS


@pytest.fixture(scope="session")
def web_server() -> Iterator[ServerProcess]:
    # every browser joins from 127.0.0.1: the per-address limits on new rooms and joins are off
    proc = ServerProcess(bot_delay_ms=25, rooms_per_min=0, joins_per_min=0).start()
    yield proc
    err = proc.stop()
    assert "Traceback" not in err, err[-3000:]


def installed(path: str) -> bool:
    """Whether the browser at `path` (a command or a file) is on this machine."""
    return bool(shutil.which(path)) or Path(path).exists()


@pytest.fixture(scope="session")
def playwright_driver() -> Iterator[object]:
    with playwright_sync.sync_playwright() as pw:
        yield pw


@pytest.fixture(scope="session")
def full_browser(playwright_driver) -> Iterator[object]:
    """The full Chromium, for the few tests that need what the headless shell lacks."""
    if not installed(CHROMIUM):
        pytest.fail(f"Chromium not found at {CHROMIUM} (apt-get install chromium)")
    b = playwright_driver.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
    yield b
    b.close()


@pytest.fixture(scope="session")
def browser(playwright_driver, request) -> Iterator[object]:
    if not installed(CHROMIUM_SHELL):
        yield request.getfixturevalue("full_browser")
        return
    b = playwright_driver.chromium.launch(executable_path=CHROMIUM_SHELL, headless=True, args=CHROMIUM_ARGS)
    yield b
    b.close()


class Pages:
    """Opens browser contexts (one per player) and closes them after the test."""

    def __init__(self, browser: object, base: str) -> None:
        self.browser = browser
        self.base = base
        self.contexts: list[object] = []
        self.errors: list[str] = []

    def new(self, *, phone: bool = False, locale: str = "en-US", **kwargs: object):
        if phone:
            opts = {"viewport": {"width": 360, "height": 740}, "device_scale_factor": 2, "is_mobile": True,
                    "has_touch": True}
        else:
            opts = {"viewport": {"width": 1280, "height": 860}}
        opts["reduced_motion"] = "reduce"  # a test that looks at the motion asks for "no-preference"
        # a page on 127.0.0.1 installs the service worker, which fetches the whole shell again: the
        # tests of the app shell ask for it ("allow"), the others keep the machine for themselves
        opts["service_workers"] = "block"
        opts.update(kwargs)
        ctx = self.browser.new_context(locale=locale, base_url=self.base, **opts)
        ctx.set_default_timeout(10_000)
        self.contexts.append(ctx)
        page = ctx.new_page()
        page.on("pageerror", lambda exc: self.errors.append(f"pageerror: {exc}"))
        page.on("console", self._console)
        return page

    def _console(self, msg: object) -> None:
        if msg.type == "error":
            self.errors.append(f"console: {msg.text}")

    def close(self) -> None:
        for ctx in self.contexts:
            # a route's handler still running (the page fetched as the test ended) fails once its
            # page is closed, and the driver raised that error in this worker's next test
            for page in ctx.pages:
                page.unroute_all(behavior="ignoreErrors")
            ctx.unroute_all(behavior="ignoreErrors")
            ctx.close()


@pytest.fixture
def pages(browser: object, web_server: ServerProcess) -> Iterator[Pages]:
    yield from _opened_pages(browser, web_server)


@pytest.fixture
def full_pages(full_browser: object, web_server: ServerProcess) -> Iterator[Pages]:
    """`pages` on the full Chromium."""
    yield from _opened_pages(full_browser, web_server)


def _opened_pages(browser: object, web_server: ServerProcess) -> Iterator[Pages]:
    p = Pages(browser, web_server.url)
    yield p
    p.close()
    # a refused join (404 no such room, 403 locked or barred, 409 full) is expected in the browser
    # console; anything else is a bug
    unexpected = [e for e in p.errors if not any(status in e for status in ("403", "404", "409"))]
    assert not unexpected, unexpected
