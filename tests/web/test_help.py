"""Card help: what a card does under this room's rules, by keyboard (? on a focused card), by a
long press on a touch screen (the press plays nothing) and by hovering a card in the log; and the
"How to play" panel, written from rules.md and the room's options, in English and Dutch."""

from __future__ import annotations

import json
import re
import time

from playwright.sync_api import expect

from .test_csp import RECORD_VIOLATIONS, violations
from .test_flows import seat_browser
from .ui import add_bot

# a deck of Reverse +4s with a few numbers (one of each colour at least): every hand holds one
REVERSE4 = {"r-5": 3, "y-5": 3, "g-5": 3, "b-5": 3, "w-reverse4": 40}


def _table(pages, web_server, rules: dict, **new):
    made = web_server.create("Ann", rules={"turn_timer_s": 0, "deck": REVERSE4, **rules})
    page = pages.new(**new)
    seat_browser(page, web_server, made["code"], made)
    add_bot(page, "easy")
    page.get_by_role("button", name="Start the game").click()
    page.wait_for_selector(".table .hand-card[data-card='w-reverse4']")
    return page


def test_card_help_opens_by_keyboard_and_follows_the_rooms_rules(pages, web_server, artifacts):
    page = _table(pages, web_server, {"stacking": "ladder", "reverse4_two_players": "opponent"},
                  viewport={"width": 1280, "height": 800})
    tip = page.locator("#card-tip")
    page.locator(".hand-card[data-card='w-reverse4']").first.focus()
    page.keyboard.press("?")
    expect(tip).to_be_visible()
    expect(tip).to_contain_text("Wild Reverse Draw 4")
    expect(tip).to_contain_text("Reverses play, you choose a colour, and the next player in the new"
                                " direction draws 4; stackable only with a draw card of 4 or more")
    expect(tip).to_contain_text("With two players left the +4 goes to your opponent.")
    card = page.locator(".hand-card[data-card='w-reverse4']").first
    assert card.get_attribute("aria-describedby") == "card-tip"
    page.screenshot(path=str(artifacts / "card-help-desktop.png"))
    page.keyboard.press("Escape")
    expect(tip).to_be_hidden()
    # the pile's top card (a number: the first card is flipped again until one shows)
    page.locator(".discard .card").focus()
    page.keyboard.press("?")
    expect(tip).to_contain_text("Plays on")
    expect(tip).to_contain_text("or on any 5")


def test_card_help_opens_by_long_press_and_the_press_plays_nothing(pages, web_server, artifacts):
    page = _table(pages, web_server, {"stacking": "off"}, phone=True, viewport={"width": 390, "height": 844})
    sent: list[dict] = []
    page.on("websocket", lambda ws: ws.on("framesent", lambda p: sent.append(json.loads(p))))
    card = page.locator(".hand-card[data-card='w-reverse4']").first
    card.scroll_into_view_if_needed()
    box = card.bounding_box()
    at = {"pointerType": "touch", "isPrimary": True, "bubbles": True,
          "clientX": box["x"] + 10, "clientY": box["y"] + 20}
    card.dispatch_event("pointerdown", at)
    tip = page.locator("#card-tip")
    expect(tip).to_be_visible()                        # held: the help shows
    expect(tip).to_contain_text("no stacking in this room: they draw at once and lose their turn")
    page.screenshot(path=str(artifacts / "card-help-phone.png"))
    card.dispatch_event("pointerup", at)
    card.dispatch_event("click")                       # the tap that ends the press
    assert page.locator("#dlg[open]").count() == 0     # no colour asked: nothing was played
    assert [m for m in sent if m.get("type") == "play"] == []
    # a short tap still plays (a wild asks its colour first)
    card.dispatch_event("pointerdown", at)
    card.dispatch_event("pointerup", at)
    card.dispatch_event("click")
    expect(page.locator("#dlg[open]")).to_be_visible()


def test_a_card_in_the_log_shows_its_help_on_hover(pages, web_server):
    page = _table(pages, web_server, {})
    chip = page.locator("#log .log-cards .card").first
    chip.hover()
    expect(page.locator("#card-tip")).to_be_visible()
    expect(page.locator("#card-tip")).to_contain_text("Plays on")


def test_how_to_play_is_written_from_the_rooms_rules_in_both_languages(pages, web_server, artifacts):
    made = web_server.create("Ann", rules={"mercy_limit": 30, "uno_penalty": 4, "catch_window_s": 7,
                                           "target_score": 500, "roulette_chooser": "player"})
    page = pages.new(viewport={"width": 1280, "height": 800})
    page.add_init_script(RECORD_VIOLATIONS)
    seat_browser(page, web_server, made["code"], made)
    page.get_by_role("button", name="How to play").click()
    dialog = page.get_by_role("dialog", name="How to play No Mercy")
    expect(dialog).to_be_visible()
    expect(dialog).to_contain_text("Whoever holds 30 cards or more is out of the round")
    expect(dialog).to_contain_text("any other player may catch you within 7 s: you draw 4 cards")
    expect(dialog).to_contain_text("The match goes to 500 points")
    expect(dialog.locator("[data-card-kind=roulette]")).to_contain_text("You name a colour")
    expect(dialog.locator("[data-card-kind=skipall]")).to_contain_text("Every other player is skipped")
    for kind in ("draw2", "draw4", "skip", "reverse", "discard", "reverse4", "draw6", "draw10", "7", "0"):
        expect(dialog.locator(f"[data-card-kind='{kind}']")).to_have_count(1)
    page.screenshot(path=str(artifacts / "how-to-play-desktop.png"))
    dialog.get_by_role("button", name="Close").click()
    expect(dialog).to_be_hidden()
    # in Dutch
    page.select_option("select.lang", "nl")
    page.get_by_role("button", name="Zo speel je").click()
    dialog = page.get_by_role("dialog", name="Zo speel je No Mercy")
    expect(dialog).to_contain_text("Wie 30 kaarten of meer heeft")
    expect(dialog.locator("[data-card-kind=roulette]")).to_contain_text("Jij noemt een kleur")
    assert violations(page) == []


def test_a_card_clicked_before_its_help_shows_leaves_no_help_behind(pages, web_server):
    """Bug: a card clicked within the hover's wait was played, and its help then showed at the
    page's top-left corner (the card gone) and stayed there, turn after turn."""
    made = web_server.create("Ann", rules={"turn_timer_s": 0, "hand_size": 5,
                                           "deck": {"r-5": 10, "y-5": 10, "g-5": 10, "b-5": 10}})
    page = pages.new(viewport={"width": 1280, "height": 800})
    page.clock.install()  # the page's timers, on a clock that runs until paused below
    seat_browser(page, web_server, made["code"], made)
    add_bot(page, "easy")
    page.get_by_role("button", name="Start the game").click()
    expect(page.locator(".table")).to_have_attribute("data-turn", "me", timeout=15_000)
    cards = page.locator(".hand .hand-card")
    held = cards.count()
    page.clock.pause_at(page.evaluate("() => Date.now()") + 50)  # the hover's wait, moved on by hand
    cards.first.hover()
    page.mouse.down()
    page.mouse.up()
    expect(cards).to_have_count(held - 1)  # played (every five plays on a five)
    page.clock.run_for(2000)
    expect(page.locator("#card-tip")).to_be_hidden()


def test_how_to_play_opened_before_the_rooms_state_arrives_follows_it(pages, web_server):
    """The "?" button is there before the room's first state: a panel opened then is rewritten when
    the rules arrive (a slow phone once read the default mercy limit in a room that plays 30)."""
    made = web_server.create("Ann", rules={"mercy_limit": 30})
    page = pages.new(viewport={"width": 1280, "height": 800})
    held: list = []
    route: dict = {}

    def hold(ws):
        server = ws.connect_to_server()
        route["page"] = ws
        server.on_message(lambda message: held.append(message))   # the server's messages wait here

    page.route_web_socket(re.compile(r".*/ws/.*"), hold)
    seat_browser(page, web_server, made["code"], made)
    page.get_by_role("button", name="How to play").click()
    dialog = page.get_by_role("dialog", name="How to play No Mercy")
    expect(dialog).to_contain_text("Whoever holds 25 cards or more")   # nothing known yet: the defaults
    deadline = time.monotonic() + 10
    while not held and time.monotonic() < deadline:
        page.evaluate("0")                          # lets the proxy's handlers run
    assert held, "the room's first state did not come"
    for message in held:
        route["page"].send(message)
    expect(dialog).to_contain_text("Whoever holds 30 cards or more is out of the round")
    expect(dialog).to_be_visible()


SHOWN_JS = """(el) => { const r = el.getBoundingClientRect();
  const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
  return {top: r.top, bottom: r.bottom, vh: innerHeight, hit: !!hit && el.contains(hit),
          scrolled: el.closest('.dlg-body').scrollTop}; }"""
STILL_IN_ROOM_JS = """() => document.getElementById('stage') === window.roomStage
  && !history.state?.mercylessHowto && document.body.dataset.screen === 'room'"""


def test_how_to_play_closes_on_a_phone_by_its_x_esc_a_tap_beside_it_and_back(pages, web_server, artifacts):
    """On a phone the panel is 2,750 px long: its one Close button was at its foot, a tap beside it
    did nothing and the back button left the room. Each way closes it now, and the room stays."""
    made = web_server.create("Ann")
    page = pages.new(phone=True, viewport={"width": 390, "height": 844})
    seat_browser(page, web_server, made["code"], made)
    page.wait_for_selector(".lobby .seat")
    page.evaluate("() => { window.roomStage = document.getElementById('stage'); }")
    url = page.url
    dialog = page.get_by_role("dialog", name="How to play No Mercy")
    close = dialog.get_by_role("button", name="Close")

    def reopen():
        page.get_by_role("button", name="How to play").click()
        expect(dialog).to_be_visible()

    def closed():
        expect(dialog).to_be_hidden()
        page.wait_for_function(STILL_IN_ROOM_JS)   # no new room page: the same stage, the history back
        assert page.url == url

    reopen()
    expect(dialog).to_contain_text("Hold a card to see what it does.")  # no ? key on a touch screen
    expect(dialog).not_to_contain_text("press ?")
    for at in ("el.scrollHeight / 2", "el.scrollHeight"):   # read half way, and to the end
        dialog.locator(".dlg-body").evaluate(f"(el) => {{ el.scrollTop = {at}; }}")
        got = close.evaluate(SHOWN_JS)   # the × is still in view, uncovered
        assert got["scrolled"] > 1000 and got["hit"] and got["top"] >= 0 and got["bottom"] <= got["vh"], got
    page.screenshot(path=str(artifacts / "how-to-play-phone-scrolled.png"))
    close.click()
    closed()
    reopen()
    page.keyboard.press("Escape")
    closed()
    reopen()
    page.touchscreen.tap(5, 5)    # beside the panel: its backdrop
    closed()
    reopen()
    page.go_back()                # the phone's back button closes the panel, not the room
    closed()
    expect(page.locator(".lobby .seat")).to_have_count(1)
