"""A deal played again (issue #47): on a phone, the host's "Play this deal again" deals the same
hand once more, and the night's scores show the two results side by side."""

from __future__ import annotations

from playwright.sync_api import expect

from .test_flows import seat_browser
from .test_game import play_until_over
from .ui import add_bot, hand

FIVES = {"r-5": 20, "y-5": 20, "g-5": 20, "b-5": 20}  # every card plays on every other
QUICK = {"deck": FIVES, "hand_size": 4, "turn_timer_s": 0}
PHONE = {"width": 390, "height": 844}
OVER = "() => ['round_over', 'match_over'].includes(document.body.dataset.status)"


def test_play_this_deal_again_deals_the_same_hand_and_the_history_compares_both(pages, web_server, artifacts):
    made = web_server.create("Ann", rules=QUICK)
    ann = pages.new(phone=True, viewport=PHONE)
    seat_browser(ann, web_server, made["code"], made)
    add_bot(ann, "easy")
    ann.get_by_role("button", name="Start the game").click()
    ann.wait_for_selector(".table .hand-card")
    first = sorted(hand(ann))
    assert len(first) == 4
    play_until_over([ann])
    ann.get_by_role("button", name="Play this deal again").click()
    ann.wait_for_function("() => document.body.dataset.status === 'playing'")
    ann.wait_for_selector(".table .hand-card")
    assert sorted(hand(ann)) == first  # the seat's hand, dealt again
    expect(ann.locator("#log li").filter(has_text="The deal of round 1 again")).to_have_count(1)
    play_until_over([ann])
    ann.wait_for_function(OVER)
    compare = ann.locator(".hist-round .hr-compare")
    expect(compare).to_have_count(1, timeout=15_000)  # once the two rounds are written
    expect(ann.locator(".hist-round .hr-deal-of")).to_have_text("deal of round 1 (match 1)")
    compare.click()
    dialog = ann.locator("dialog.dlg-compare")
    expect(dialog).to_be_visible()
    expect(dialog.locator("thead th")).to_have_text(["Seat", "Round 1 (match 1)", "Round 2 (match 1)"])
    expect(dialog.locator("tbody tr")).to_have_count(2)
    expect(dialog.locator("tfoot .cmp-points td")).to_have_count(2)
    assert ann.evaluate("() => document.scrollingElement.scrollWidth") <= PHONE["width"]
    ann.screenshot(path=str(artifacts / "deal-compare.png"))
