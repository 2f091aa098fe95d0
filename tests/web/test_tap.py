"""A tapped card leaves the hand for the pile at once, before the server answers (issue #44, 9):
the server's patch then settles it without a second flight, and a refusal puts the card back
where it was, says why, and leaves nothing half-done. The phone's socket goes through a proxy
that can hold the server's messages back and rewrite the page's play."""

from __future__ import annotations

import json
import re
import time

from playwright.sync_api import expect

from .test_flows import seat_browser

# every card plays on any other
FIVES = {"r-5": 10, "y-5": 10, "g-5": 10, "b-5": 10}

RECORD_PILE_ANIMATIONS = """
window.__pileAnims = 0;
const animate = Element.prototype.animate;
Element.prototype.animate = function (frames, options) {
  if (this.parentElement && this.parentElement.classList.contains('discard')) window.__pileAnims += 1;
  return animate.call(this, frames, options);
};
"""

HAND = "() => [...document.querySelectorAll('.hand .hand-card')].map((c) => c.dataset.card)"
TOP = "() => document.querySelector('.discard .card').dataset.card"
STILL = "() => !document.getAnimations().some((a) => a.playState === 'running')"


class Proxy:
    """The page's room socket through the test: ``hold`` keeps the server's messages back until
    ``release``; ``rewrite`` changes the card of the page's next play."""

    def __init__(self, page) -> None:
        self.page = page
        self.hold = False
        self.held: list[str] = []
        self.plays: list[dict] = []
        self.rewrite: str | None = None
        self.to_page = None
        page.route_web_socket(re.compile(r".*/ws/.*"), self._route)

    def _route(self, ws) -> None:
        server = ws.connect_to_server()
        self.to_page = ws

        def from_page(message: str | bytes) -> None:
            msg = json.loads(message)
            if msg.get("type") == "play":
                if self.rewrite:
                    msg["card"] = self.rewrite
                    message = json.dumps(msg)
                    self.rewrite = None
                self.plays.append(msg)
            server.send(message)

        def from_server(message: str | bytes) -> None:
            if self.hold:
                self.held.append(message)
            else:
                ws.send(message)

        ws.on_message(from_page)
        server.on_message(from_server)

    def wait_answer(self) -> dict:
        """The server's answer to the page's last play, held back (the proxy's handlers run while
        the page is asked something)."""
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            for message in self.held:
                msg = json.loads(message)
                if self.plays and msg.get("id") == self.plays[-1]["id"]:
                    return msg
            self.page.evaluate("0")
        raise AssertionError(f"no answer to {self.plays[-1:]}; held {self.held}")

    def release(self) -> None:
        self.hold = False
        for message in self.held:
            self.to_page.send(message)
        self.held.clear()


def _table(pages, web_server):
    """Ann's phone at her first turn. Bob is seated but never plays: nothing moves but Ann's play."""
    made = web_server.create("Ann", rules={"turn_timer_s": 0, "deck": FIVES, "hand_size": 7})
    web_server.join(made["code"], "Bob")
    page = pages.new(phone=True, viewport={"width": 390, "height": 844}, reduced_motion="no-preference")
    page.add_init_script(RECORD_PILE_ANIMATIONS)
    net = Proxy(page)
    seat_browser(page, web_server, made["code"], made)
    page.get_by_role("button", name="Start the game").click()
    expect(page.locator(".table")).to_have_attribute("data-turn", "me", timeout=15_000)
    page.wait_for_function(STILL)
    return page, net


def test_a_tapped_card_leaves_the_hand_before_the_server_answers(pages, web_server):
    page, net = _table(pages, web_server)
    before = page.evaluate(HAND)
    version = page.evaluate("() => document.body.dataset.version")
    card = page.locator(".hand .hand-card.playable").first
    code = card.get_attribute("data-card")
    page.evaluate("() => { window.__pileAnims = 0; }")
    net.hold = True
    card.tap()
    answer = net.wait_answer()          # the server has answered; the page has not heard it
    assert answer["type"] == "ack", answer
    assert page.evaluate("() => document.body.dataset.version") == version
    # shown already: out of the hand, on the pile, flying there from the hand
    expect(page.locator(".hand .hand-card")).to_have_count(len(before) - 1)
    expect(page.locator(".discard .card")).to_have_attribute("data-card", code)
    expect(page.locator(".hand-h")).to_contain_text(str(len(before) - 1))
    assert page.evaluate("() => window.__pileAnims") == 1
    net.release()
    page.wait_for_function("v => document.body.dataset.version !== v", arg=version)
    page.wait_for_function(STILL)
    # settled by the server's patch: the same hand, no card twice or lost, no second flight
    after = page.evaluate(HAND)
    rest = list(before)
    rest.remove(code)
    assert sorted(after) == sorted(rest), (before, after)
    assert page.evaluate(TOP) == code
    assert page.evaluate("() => window.__pileAnims") == 1
    expect(page.locator(".toast-error")).to_have_count(0)


def test_a_refused_play_goes_back_where_it_was_and_says_why(pages, web_server):
    page, net = _table(pages, web_server)
    before = page.evaluate(HAND)
    top = page.evaluate(TOP)
    version = page.evaluate("() => document.body.dataset.version")
    card = page.locator(".hand .hand-card.playable").nth(2)
    code = card.get_attribute("data-card")
    # the play reaches the server as a card Ann does not hold: refused, `not_in_hand`
    net.rewrite = "r-7"
    net.hold = True
    card.tap()
    answer = net.wait_answer()
    assert answer["type"] == "error" and answer["code"] == "not_in_hand", answer
    expect(page.locator(".hand .hand-card")).to_have_count(len(before) - 1)
    expect(page.locator(".discard .card")).to_have_attribute("data-card", code)
    net.release()
    expect(page.get_by_role("alert")).to_contain_text("That card is no longer in your hand.")
    page.wait_for_function(STILL)
    # back in its place, nothing else moved, the pile as it was, the turn still Ann's
    assert page.evaluate(HAND) == before
    assert page.evaluate(TOP) == top
    assert page.evaluate("() => document.body.dataset.version") == version
    expect(page.locator(".table")).to_have_attribute("data-turn", "me")
    expect(page.locator(".hand .hand-card.playable")).to_have_count(len(before))
    # and it can be played again, for real this time
    page.locator(".hand .hand-card.playable").nth(2).tap()
    expect(page.locator(".hand .hand-card")).to_have_count(len(before) - 1)
    page.wait_for_function("v => document.body.dataset.version !== v", arg=version)
    assert net.plays[-1]["card"] == code
    rest = list(before)
    rest.remove(code)
    assert sorted(page.evaluate(HAND)) == sorted(rest)
