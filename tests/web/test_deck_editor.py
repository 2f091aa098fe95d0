"""The lobby's deck editor lists the kinds of the deck the server serves (GET /api/rules), not a
list of its own (issue #46.4: a new card shows up there without touching the client), in the
hand's order, and a count the host sets becomes the room's deck."""

from __future__ import annotations

import httpx
from playwright.sync_api import expect

from .test_flows import seat_browser

HAND_ORDER = ["0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "skip", "skipall", "reverse",
              "discard", "draw2", "draw4", "roulette", "wild", "reverse4", "draw6", "draw10"]


def test_the_deck_editor_shows_the_servers_kinds_and_sets_the_deck(pages, web_server, artifacts):
    codes = httpx.get(f"{web_server.url}/api/rules", timeout=10).json()["options"]["deck"]["codes"]
    colored = {c.split("-")[1] for c in codes if not c.startswith("w-")}
    wild = {c.split("-")[1] for c in codes if c.startswith("w-")}
    made = web_server.create("Ann")
    host = pages.new()
    seat_browser(host, web_server, made["code"], made)
    editor = host.locator("details.deck")
    editor.locator("summary").click()
    inputs = editor.locator("input.deck-num")
    expect(inputs).to_have_count(len(colored) + len(wild))
    shown = [i.removeprefix("deck-") for i in inputs.evaluate_all("(els) => els.map((e) => e.id)")]
    assert shown == sorted(colored, key=HAND_ORDER.index) + sorted(wild, key=HAND_ORDER.index), shown
    host.screenshot(path=str(artifacts / "deck-editor-desktop.png"), full_page=True)

    def deck() -> dict[str, int]:
        return httpx.get(f"{web_server.url}/api/rooms/{made['code']}", timeout=10).json()["rules"]["deck"]

    before = deck()
    expected = sum(before.values()) - sum(n for c, n in before.items() if c.endswith("-draw2")) + 12
    host.locator("#deck-draw2").fill("3")
    host.locator("#deck-draw2").dispatch_event("change")
    # the summary's total is drawn from the room as the server committed it
    expect(editor.locator("summary")).to_contain_text(f"{expected} cards")
    assert {c: n for c, n in deck().items() if c.endswith("-draw2")} == {f"{c}-draw2": 3 for c in "rygb"}
