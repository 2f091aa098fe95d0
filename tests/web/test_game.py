"""Two people and a bot play a whole round through the browser UI, then rematch."""

from __future__ import annotations

import time

from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import expect

from .ui import CODE_RE, add_bot, create_room, join_by_link, no_horizontal_scroll, state, take_turn

SOMETHING_TO_DO = """s => Number(document.body.dataset.version) !== s.version
    || (document.querySelector('.table') || {dataset: {}}).dataset.turn === 'me'
    || !!document.querySelector('#dlg[open]')
    || !!document.querySelector('.opp .catch:not([hidden])')"""


def play_until_over(pages_: list, limit_s: float = 120) -> None:
    """Play the pages' turns until the round is over. It fails when the round stops moving:
    no page sees a new version for ``limit_s`` (on a loaded machine a round that moves can take
    longer than that in all; the engine ends a round that never would: MAX_ROUND_MOVES)."""
    deadline = time.monotonic() + limit_s
    seen = -1
    while True:
        states = [state(p) for p in pages_]
        if all(s["status"] in ("round_over", "match_over") for s in states):
            return
        newest = max(s["version"] or 0 for s in states)
        if newest > seen:
            seen, deadline = newest, time.monotonic() + limit_s
        assert time.monotonic() < deadline, f"the round stood still for {limit_s}s: {states}"
        acted = False
        for p in pages_:
            acted = take_turn(p) or acted
        if not acted:
            # a bot (or the server) is to move: wait for the next version on any page
            for p in pages_:
                s = state(p)
                try:
                    p.wait_for_function(SOMETHING_TO_DO, arg=s, timeout=1500)
                    break
                except PlaywrightError:
                    continue


def test_two_players_and_a_bot_play_a_round_then_rematch(pages, artifacts):
    host = pages.new()
    guest = pages.new(phone=True)
    code = create_room(host, "Ann")
    assert CODE_RE.match(code)
    expect(host.locator(".bigcode")).to_have_attribute("aria-label", " ".join(code))

    join_by_link(guest, code, "Bob")
    guest.wait_for_selector(".lobby")
    expect(host.locator(".seatlist .seat")).to_have_count(2)
    expect(host.locator(".seatlist")).to_contain_text("Bob")

    add_bot(host, "hard")
    expect(host.locator(".seatlist .seat").nth(2).locator(".level-pick select")).to_have_value("hard")
    expect(guest.locator(".seatlist .seat")).to_have_count(3)
    expect(guest.locator(".seatlist .seat").nth(2).locator(".badge-bot")).to_have_text("Bot · hard")

    host.evaluate("() => window.scrollTo(0, 0)")
    host.screenshot(path=str(artifacts / "lobby.png"))
    # the host changes rules from the UI: a smaller hand keeps the round short
    host.get_by_label("Hand size").fill("5")
    host.get_by_label("Hand size").press("Tab")
    expect(guest.locator("#rule-hand_size")).to_have_value("5")
    expect(guest.locator("#rule-hand_size")).to_be_disabled()
    host.get_by_role("button", name="Printed").click()
    expect(guest.locator("#rule-draw")).to_have_value("until_playable")
    host.get_by_role("button", name="Mercyless").click()
    expect(guest.locator("#rule-draw")).to_have_value("voluntary")
    expect(host.locator("#rule-hand_size")).to_have_value("7")  # a preset sets every option
    host.get_by_label("Hand size").fill("5")
    host.get_by_label("Hand size").press("Enter")
    expect(guest.locator("#rule-hand_size")).to_have_value("5")
    guest.screenshot(path=str(artifacts / "lobby-phone.png"))
    assert no_horizontal_scroll(guest)[0] <= 360

    host.get_by_role("button", name="Start the game").click()
    for p in (host, guest):
        p.wait_for_selector(".table .hand-card")
        expect(p.locator(".hand .hand-card")).to_have_count(5)
        expect(p.locator(".opponents .opp")).to_have_count(2)
    expect(host.locator(".table")).to_have_attribute("data-turn", "me")  # seat 0 starts
    expect(host.locator(".turnline")).to_contain_text("Your turn")
    expect(host.locator(".opp .badge-bot")).to_contain_text("hard")
    expect(host.locator("#log")).to_contain_text("Round 1 begins")
    host.screenshot(path=str(artifacts / "table.png"))
    assert no_horizontal_scroll(guest)[0] <= 360

    play_until_over([host, guest])

    for p in (host, guest):
        expect(p.locator(".overlay .over-panel")).to_be_visible()
    expect(host.locator(".over-title")).to_contain_text("win")
    expect(host.locator(".score-list .score-row")).to_have_count(3)
    expect(guest.locator(".over-actions")).to_contain_text("Waiting for Ann")
    host.screenshot(path=str(artifacts / "round-over.png"))
    guest.screenshot(path=str(artifacts / "round-over-phone.png"))
    assert no_horizontal_scroll(guest)[0] <= 360
    # the log told the story in words
    expect(host.locator("#log")).to_contain_text("wins the round")

    rematch = host.get_by_role("button", name="Next round").or_(host.get_by_role("button", name="New match"))
    rematch.click()
    for p in (host, guest):
        p.wait_for_function("() => document.body.dataset.status === 'playing'")
        expect(p.locator(".overlay")).to_be_hidden()
        # (the bot may already have played a 7 or a 0 that moved hands: count loosely)
        p.wait_for_function("() => document.querySelectorAll('.hand .hand-card').length >= 4")
        expect(p.locator("#log")).to_contain_text("Round 2 begins")

