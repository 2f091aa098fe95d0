"""A closed tab on the table (issue #44.1): the host sees "Bot plays" on the dropped player's seat
and hands it to its bot at once; the phones and the TV then label the seat "away"; the player's
return takes it back."""

from __future__ import annotations

from playwright.sync_api import expect

from .test_flows import seat_browser
from .test_motion import SocketPlayer

FIVES = {"r-5": 20, "y-5": 20, "g-5": 20, "b-5": 20}


def test_the_host_hands_a_closed_tabs_seat_to_its_bot_and_every_screen_says_away(pages, web_server,
                                                                                 artifacts):
    made = web_server.create("Ann", rules={"turn_timer_s": 0, "deck": FIVES})
    bob_seat = web_server.join(made["code"], "Bob")
    cat_seat = web_server.join(made["code"], "Cat")
    ann = pages.new(viewport={"width": 1440, "height": 900})
    seat_browser(ann, web_server, made["code"], made)
    cat = pages.new(phone=True, viewport={"width": 390, "height": 844})
    seat_browser(cat, web_server, made["code"], cat_seat)
    bob = SocketPlayer(web_server, made["code"], bob_seat["token"])
    tv = pages.new(viewport={"width": 1920, "height": 1080})
    tv.goto(f"/tv/{made['code']}")
    expect(tv.locator(".tv-seat")).to_have_count(3)
    ann.get_by_role("button", name="Start the game").click()
    expect(ann.locator(".table")).to_be_visible()
    bob.close()  # Bob closes his tab
    chip = ann.locator(f".opp[data-player='{bob.you}']")
    offer = chip.get_by_role("button", name="Let a bot play for Bob now (they take their seat back when they "
                             "return)")
    expect(offer).to_be_visible(timeout=10_000)  # shown once Bob is seen gone (DROP_DELAY_MS)
    expect(cat.locator(f".opp[data-player='{bob.you}'] .bot-plays")).to_have_count(0)  # the host's only
    ann.screenshot(path=str(artifacts / "bot-plays-host.png"))
    offer.click()
    expect(chip.locator(".flag-away")).to_have_text("away")
    expect(cat.locator(f".opp[data-player='{bob.you}'] .flag-away")).to_have_text("away")
    expect(tv.locator(".tv-seat.away .flag-away")).to_have_text("away")
    expect(chip.locator(".bot-plays")).to_have_count(0)
    tv.screenshot(path=str(artifacts / "tv-away-seat.png"))
    cat.screenshot(path=str(artifacts / "away-seat-phone.png"))
    # Bob is back: the seat is his again, and nobody says away
    back = SocketPlayer(web_server, made["code"], bob_seat["token"])
    expect(chip.locator(".flag-away")).to_have_count(0)
    expect(tv.locator(".tv-seat.away")).to_have_count(0)
    back.close()
