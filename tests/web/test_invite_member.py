"""The invite's addresses are for the room's members (GET /api/invite takes the room's code and a
member's token, tests/app/test_edge_guard.py): the lobby and the big screen, opened on loopback,
ask with their own token and show the server's PUBLIC_URL link."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import expect

from tests.app.harness import ServerProcess

from .conftest import Pages
from .ui import create_room

PUBLIC = "https://uno.example.org"


@pytest.fixture(scope="module")
def public_server() -> Iterator[ServerProcess]:
    proc = ServerProcess(public_url=PUBLIC).start()
    yield proc
    err = proc.stop()
    assert "Traceback" not in err, err[-3000:]


@pytest.fixture
def public_pages(browser: object, public_server: ServerProcess) -> Iterator[Pages]:
    p = Pages(browser, public_server.url)
    yield p
    p.close()
    assert not p.errors, p.errors  # a 401 or 403 from /api/invite is a console error


def test_the_lobby_and_the_big_screen_ask_for_the_invite_as_members(public_pages):
    asked: list[dict[str, str]] = []
    page = public_pages.new()
    page.on("request", lambda r: asked.append(r.headers) if "/api/invite" in r.url else None)
    code = create_room(page, "Ann")
    expect(page.locator(".invite-link")).to_have_text(f"{PUBLIC}/r/{code}")
    expect(page.locator(".invite-local")).to_be_hidden()
    assert asked and asked[0].get("authorization", "").startswith("Bearer ")
    tv = public_pages.new(viewport={"width": 1280, "height": 800})
    tv.goto(f"/tv/{code}")
    expect(tv.locator(".tv-url")).to_have_text(f"uno.example.org/r/{code}")
