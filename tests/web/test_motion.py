"""Cards that move (Web Animations API, web/js/table/motion.js): a played card flies from its player
to the pile and a drawn one from the deck to the hand; with prefers-reduced-motion they only fade."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from .test_flows import seat_browser
from .ui import add_bot

RECORD_ANIMATIONS = """
window.__anims = [];
const animate = Element.prototype.animate;
Element.prototype.animate = function (frames, options) {
  window.__anims.push({card: this.dataset.card || null, cls: String(this.className),
    where: this.parentElement ? String(this.parentElement.className) : '',
    moves: JSON.stringify(frames).includes('translate')});
  return animate.call(this, frames, options);
};
"""

# red fives: every card plays on the first one
FIVES = {"r-5": 40, "y-5": 1, "g-5": 1, "b-5": 1}


@pytest.mark.parametrize("motion", ["no-preference", "reduce"])
def test_a_played_card_flies_to_the_pile_unless_motion_is_reduced(pages, web_server, motion):
    made = web_server.create("Ann", rules={"turn_timer_s": 0, "deck": FIVES, "hand_size": 5})
    page = pages.new(reduced_motion=motion)
    page.add_init_script(RECORD_ANIMATIONS)
    seat_browser(page, web_server, made["code"], made)
    add_bot(page, "easy")
    page.get_by_role("button", name="Start the game").click()
    expect(page.locator(".table")).to_have_attribute("data-turn", "me")
    page.evaluate("() => { window.__anims = []; }")
    page.locator(".hand-card.playable").first.click()
    expect(page.locator(".hand .hand-card")).to_have_count(4)
    page.wait_for_function("() => window.__anims.some((a) => a.where.includes('discard'))")
    anims = page.evaluate("() => window.__anims")
    played = [a for a in anims if "discard" in a["where"]]
    if motion == "reduce":
        assert not any(a["moves"] for a in anims), anims   # fades only
        assert page.locator(".fx-layer .flying").count() == 0
    else:
        assert played[0]["moves"], anims                    # it travels to the pile
    # a drawn card comes from the deck into the hand (the bot plays; then Ann draws)
    expect(page.locator(".table")).to_have_attribute("data-turn", "me", timeout=15_000)
    page.evaluate("() => { window.__anims = []; }")
    page.get_by_role("button", name="Draw", exact=True).click()
    page.wait_for_function("() => window.__anims.some((a) => a.cls.includes('hand-card'))")
    drawn = [a for a in page.evaluate("() => window.__anims") if "hand-card" in a["cls"]]
    assert drawn[0]["moves"] is (motion != "reduce"), drawn
