"""Crowded tables on a desktop: many seats, a player to catch, a big hand, a short window."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from .test_flows import seat_browser
from .test_layout import BIG_HAND_DECK, HAND_JS, assert_hand_in_view, draw_until

LAPTOP = {"width": 1280, "height": 720}
# an element wholly inside the window, and the one a click in its middle reaches
IN_VIEW_JS = """sel => {
  const el = document.querySelector(sel);
  const r = el.getBoundingClientRect();
  const hit = document.elementFromPoint((r.left + r.right) / 2, (r.top + r.bottom) / 2);
  return r.width > 0 && r.top >= 0 && r.left >= 0 && r.bottom <= innerHeight && r.right <= innerWidth
    && !!hit && el.contains(hit);
}"""


NAMES = ("Bob", "Cy", "Dee", "Eve", "Fay", "Gus", "Hal", "Ivy", "Jo")


def crowded_table(pages, web_server, viewport, seats: int, hand: int):
    rules = {"hand_size": 7, "mercy_limit": 60, "turn_timer_s": 0, "draw": "voluntary",
             "first_card": "redraw", "deck": {code: 3 * n for code, n in BIG_HAND_DECK.items()}}
    made = web_server.create("Ann", rules=rules)
    for name in NAMES[:seats - 1]:  # seated, never play: Ann (seat 0) keeps the turn
        web_server.join(made["code"], name)
    page = pages.new(viewport=viewport)
    seat_browser(page, web_server, made["code"], made)
    page.get_by_role("button", name="Start the game").click()
    expect(page.locator(".opponents .opp")).to_have_count(seats - 1)
    expect(page.locator(".table")).to_have_attribute("data-turn", "me")
    draw_until(page, hand)
    return page


def test_ten_seats_and_sixteen_cards_fit_a_short_laptop_window(pages, web_server, artifacts):
    # two rows of opponents even as compact chips; every earlier step together was 6 px short
    page = crowded_table(pages, web_server, {"width": 1100, "height": 640}, 10, 16)
    got = page.evaluate(HAND_JS)
    page.screenshot(path=str(artifacts / "ten-seats-1100x640.png"))
    assert_hand_in_view(got)
    assert page.evaluate(IN_VIEW_JS, "button[data-key=draw]"), "the Draw button is out of reach"
    # a taller window undoes the last step: the turn line has its own row again
    page.set_viewport_size({"width": 1100, "height": 900})
    expect(page.locator(".table")).not_to_have_class(re.compile(r"\bsnug-row\b"))
    assert page.evaluate(HAND_JS)["hintBottom"] <= 900


# Each opponent's name reads in full, and a badge (the bot's level) shows whole or not at all: in the
# compact chips the name and the badge share one line, where both were cut to a letter ("B." "m.").
CHIP_TEXT_JS = """() => [...document.querySelectorAll('.opponents .opp')].flatMap((li) => {
  const who = li.querySelector('.opp-top').getBoundingClientRect();
  const name = li.querySelector('.opp-name');
  const out = [];
  if (name.scrollWidth > name.clientWidth + 0.5) out.push(`${name.textContent}: the name is cut`);
  for (const b of li.querySelectorAll('.badge')) {
    const r = b.getBoundingClientRect();
    if (!b.offsetParent || r.width <= 1) continue;  // not shown (the dealer's: for screen readers only)
    const box = b.parentElement.getBoundingClientRect();
    const gone = r.top >= who.bottom - 0.5;
    const whole = r.top >= who.top - 0.5 && r.bottom <= who.bottom + 0.5 && r.right <= box.right + 0.5
      && b.scrollWidth <= b.clientWidth + 0.5;
    if (!gone && !whole) out.push(`${name.textContent}: "${b.textContent}" is cut`);
  }
  return out;
})"""


@pytest.mark.parametrize("locale", ["en-US", "nl-NL"])
def test_compact_opponent_chips_keep_the_names_whole(pages, web_server, locale, artifacts):
    made = web_server.create("Ann", rules={"hand_size": 15, "turn_timer_s": 0})
    page = pages.new(viewport=LAPTOP, locale=locale)
    seat_browser(page, web_server, made["code"], made)
    for seats, level in enumerate(("easy", "normal", "hard", "easy", "normal", "hard", "easy"), start=2):
        page.select_option("#bot-level", level)
        page.click("button[data-key=addbot]")
        expect(page.locator(".seatlist .seat")).to_have_count(seats)
    page.click("button[data-key=start]")
    expect(page.locator(".hand .hand-card")).to_have_count(15)
    expect(page.locator(".table")).to_have_class(re.compile(r"\bsnug-opps\b"))
    page.screenshot(path=str(artifacts / f"compact-chips-{locale}.png"))
    assert page.evaluate(CHIP_TEXT_JS) == []
    # a narrower window: the chips at their narrowest (the table fits itself on the next frame)
    page.set_viewport_size({"width": 1100, "height": 640})
    page.evaluate("() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))")
    assert page.evaluate(CHIP_TEXT_JS) == []


# Reverses and red numbers only (and one card of each other colour): the first card is a red
# number, so a red Reverse is playable on it, and everyone is dealt one or two.
REVERSE_DECK = {"r-reverse": 200, "r-5": 6, "y-reverse": 1, "g-reverse": 1, "b-reverse": 1}


def test_a_player_to_catch_at_a_full_table_keeps_the_hand_and_controls_in_view(pages, web_server, artifacts):
    # Ann (seat 0) plays a Reverse to Bob (the last seat), who plays one back with his second-last
    # card and no UNO call: it is Ann's turn, with a big hand, while Bob can be caught
    rules = {"hand_size": 2, "mercy_limit": 60, "turn_timer_s": 0, "draw": "voluntary",
             "catch_window_s": 30, "uno_penalty": 2, "deck": REVERSE_DECK}
    made = web_server.create("Ann", rules=rules)
    for name in ("Cy", "Dee", "Eve", "Fay", "Gus", "Hal"):
        web_server.join(made["code"], name)
    bob_seat = web_server.join(made["code"], "Bob")
    ann = pages.new(viewport=LAPTOP)
    bob = pages.new(viewport=LAPTOP)
    seat_browser(ann, web_server, made["code"], made)
    seat_browser(bob, web_server, made["code"], bob_seat)
    ann.get_by_role("button", name="Start the game").click()
    expect(ann.locator(".opponents .opp")).to_have_count(7)
    expect(ann.locator(".table")).to_have_attribute("data-turn", "me")
    draw_until(ann, 31)
    ann.locator(".hand-card.playable[data-card='r-reverse']").first.click(position={"x": 6, "y": 40})
    expect(bob.locator(".table")).to_have_attribute("data-turn", "me")
    bob.locator(".hand-card.playable[data-card$='-reverse']").first.click()
    expect(ann.locator(".table")).to_have_attribute("data-turn", "me")
    catch = ann.get_by_role("button", name="Catch Bob!")
    expect(catch).to_be_visible()
    expect(ann.locator("button[data-key=draw]")).to_be_visible()
    # one row of cards, then two (while the window to catch Bob is open: Ann may go on drawing)
    for n in (30, 45):
        draw_until(ann, n)
        got = ann.evaluate(HAND_JS)
        ann.screenshot(path=str(artifacts / f"catch-eight-seats-{n}.png"))
        assert got["n"] == n
        assert_hand_in_view(got)  # the whole box: turn, buttons, hand, hints
        assert ann.evaluate(IN_VIEW_JS, "button[data-key=draw]"), "the Draw button is out of reach"
        assert ann.evaluate(IN_VIEW_JS, f"button[data-key='catch:{bob_seat['player_id']}']")
    # the button does what it says: Bob draws the penalty
    catch.click()
    expect(ann.locator(".opp", has_text="Bob").locator(".opp-count b")).to_have_text("3")
    expect(catch).to_be_hidden()
