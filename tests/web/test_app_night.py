"""A night with one phone as an installed app (issue #44): the shell opens from the service
worker's cache with the server's static files cut, the screen is kept on while seated in the round,
the phone is put away (hidden and frozen) while the others play and a friend's closed tab is
played by its bot after the short grace, the phone is current the moment it wakes, hears of its
turn by a notification while still out of sight, and plays on once shown.

The phone is a page of this module's own Chromium (test_app_shell.py's ``own_chromium``: its pages
hide and freeze as a phone's do)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import expect

from tests.app.harness import ServerProcess

from .app_shell_kit import (
    ALL_FIVES,
    CAPTURE_NOTIFICATIONS,
    FAKE_WAKE_LOCK,
    RECORD_VERSIONS,
    Watcher,
    cut_static_files,
    watch_errors,
)
from .test_app_shell import own_chromium  # noqa: F401 - the fixture
from .test_motion import SocketPlayer
from .ui import add_bot, take_turn

GRACE_MS = 1_500  # AWAY_TURN_GRACE_MS here: a closed tab's turn goes to its bot this soon


@pytest.fixture(scope="module")
def night_server() -> Iterator[ServerProcess]:
    # a server heartbeat of a second: the phone stays frozen past it
    proc = ServerProcess(bot_delay_ms=300, away_turn_grace_ms=GRACE_MS, reconnect_grace_ms=600_000,
                         ws_ping_interval_s=1, ws_ping_timeout_s=1).start()
    yield proc
    err = proc.stop()
    assert "Traceback" not in err, err[-3000:]


def test_a_night_with_the_phone_as_an_app(own_chromium, night_server):  # noqa: F811
    server = night_server
    made = server.create("Ann", rules={"turn_timer_s": 0, "deck": ALL_FIVES})
    code, ann = made["code"], made["player_id"]
    bob_seat = server.join(code, "Bob")
    ctx = own_chromium.contexts[0]
    ctx.grant_permissions(["notifications"], origin=server.url)
    phone = ctx.new_page()
    errors: list[str] = []
    watch_errors(phone, errors)
    for script in (FAKE_WAKE_LOCK, CAPTURE_NOTIFICATIONS, RECORD_VERSIONS):
        phone.add_init_script(script)
    phone.set_viewport_size({"width": 390, "height": 844})
    phone.goto(f"{server.url}/")
    phone.evaluate("""([code, seat]) => localStorage.setItem('mercyless.rooms', JSON.stringify(
        {[code]: {token: seat.token, player_id: seat.player_id, at: Date.now()}}))""", [code, made])
    phone.goto(f"{server.url}/r/{code}")
    phone.wait_for_selector(".lobby .bigcode")
    phone.wait_for_function("() => !!navigator.serviceWorker.controller")

    # installed: from now on only /api/ and /ws/ reach the server
    cut: list[str] = []
    phone.route("**/*", cut_static_files(cut))
    phone.reload()
    phone.wait_for_selector(".lobby .bigcode")
    assert cut == [], cut

    # the turn notification, asked for by a tap in the settings
    phone.locator("button.settings-btn").click()
    phone.locator("input[data-key=notify]").check()
    expect(phone.locator("input[data-key=notify]")).to_be_checked()
    phone.get_by_role("button", name="Done").click()

    bob = SocketPlayer(server, code, bob_seat["token"])
    add_bot(phone, "easy")
    assert phone.evaluate("() => window.__held()") == 0           # no lock in the lobby
    phone.get_by_role("button", name="Start the game").click()
    watcher = Watcher(server, code)
    bob.close()                                                   # Bob closes his tab
    cdp = ctx.new_cdp_session(phone)
    try:
        expect(phone.locator(".table")).to_have_attribute("data-turn", "me", timeout=20_000)
        phone.wait_for_function("() => window.__held() === 1")   # seated in a round: the screen stays on
        assert take_turn(phone)
        seen = phone.evaluate("() => Number(document.body.dataset.version)")
        cdp.send("Page.setWebLifecycleState", {"state": "frozen"})   # put away: hidden, then frozen
        # Bob's turn waits the short grace, then his seat's bot plays it; the round comes back to Ann
        def saw(kind: str) -> bool:
            return any(e["kind"] == kind and e.get("player") == bob.you for e in watcher.events)

        watcher.until(lambda: watcher.version > seen and watcher.waits_for(ann)
                      and saw("replaced_by_bot") and saw("played"), timeout=30)
        assert next(p for p in watcher.view["players"] if p["id"] == bob.you)["away"] is True
        target = watcher.version
        cdp.send("Page.setWebLifecycleState", {"state": "active"})  # woken, still out of sight
        phone.wait_for_function("v => Number(document.body.dataset.version) >= v", arg=target, polling=50)
        phone.wait_for_function("() => window.__notes.length > 0")
        notes = phone.evaluate("() => window.__notes")
        assert [n["title"] for n in notes] == [f"Your turn in room {code}"]
        assert phone.evaluate("() => window.__held()") == 0          # hidden: the lock let go
        cdp.send("Emulation.setFocusEmulationEnabled", {"enabled": True})  # in sight again
        phone.wait_for_function("() => window.__held() === 1")      # and taken again
        expect(phone.locator(f".opp[data-player='{bob.you}'] .flag-away")).to_have_text("away")
        before = len(watcher.events)
        assert take_turn(phone)
        watcher.until(lambda: any(e.get("player") == ann and e["kind"] in ("played", "drew")
                                  for e in watcher.events[before:]))
        assert cut == [], cut                                        # every file from the app's cache
    finally:
        cdp.detach()
        watcher.close()
        phone.close()
    assert [e for e in errors if "Page entered Back-Forward Cache" not in e] == [], errors


def test_the_host_is_told_what_a_guests_phone_gets_on_each_kind_of_link(pages, web_server):
    page = pages.new()
    page.goto("/")
    lines = page.evaluate("""async () => {
      const { linkFeaturesLine } = await import('/js/pwa.js');
      return ['http://192.168.1.20:8000/r/ABCDEF', 'https://uno.example.org/r/ABCDEF',
              'http://127.0.0.1:8000/r/ABCDEF'].map(linkFeaturesLine);
    }""")
    assert lines == [
        "Phones on this http link play fully and keep the screen on; installing the app and turn "
        "notifications need an https link.",
        "Phones on this link can also install the app and get a notification when their turn comes.",
        "",  # the server's own computer: the host's, not a guest's
    ]
