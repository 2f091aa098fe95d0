"""Quick chat (issue #47.3): a phrase goes out as its id and each reader sees it in their own
language, as a bubble on the sender's seat and a log line, on the phones and on the TV; the host
mutes a player from the lobby's seats and the player sees why."""

from __future__ import annotations

from playwright.sync_api import expect

from .test_flows import seat_browser


def test_a_phrase_is_read_in_each_readers_language_and_the_host_mutes(pages, web_server, artifacts):
    made = web_server.create("Ann", rules={"turn_timer_s": 0})
    bob_seat = web_server.join(made["code"], "Bob")
    code = made["code"]
    ann = pages.new(phone=True, viewport={"width": 390, "height": 844})
    seat_browser(ann, web_server, code, made)
    bob = pages.new(locale="nl-NL", viewport={"width": 1280, "height": 860})
    seat_browser(bob, web_server, code, bob_seat)
    bob.locator("select.lang").first.select_option("nl")
    expect(bob.locator("html")).to_have_attribute("lang", "nl")
    tv = pages.new(viewport={"width": 1920, "height": 1080})
    tv.goto(f"/tv/{code}")
    expect(tv.locator(".tv-seat")).to_have_count(2)

    # the host mutes Bob from the lobby's seats: Bob sees the tag, and his menu says why
    bob_id = bob_seat["player_id"]
    ann.get_by_role("button", name="Mute Bob’s chat").click()
    expect(bob.locator(f".seat[data-player='{bob_id}'] .badge-muted")).to_have_text("gedempt")
    expect(ann.locator(f".seat[data-player='{bob_id}'] .badge-muted")).to_have_text("muted")
    ann.screenshot(path=str(artifacts / "quick-chat-host-lobby-phone.png"))
    expect(bob.locator("#log")).to_contain_text("Ann heeft je chat gedempt")
    bob.locator(".chat-menu summary").click()
    expect(bob.locator(".chat-muted-note")).to_have_text("De host heeft je chat gedempt")
    expect(bob.locator(".chat-phrase:visible")).to_have_count(0)
    bob.screenshot(path=str(artifacts / "quick-chat-muted-nl.png"))
    ann.get_by_role("button", name="Unmute Bob’s chat").click()
    expect(bob.locator(f".seat[data-player='{bob_id}'] .badge-muted")).to_have_count(0)
    expect(bob.get_by_role("button", name="Mooi zo!")).to_be_enabled()
    bob.locator(".chat-menu summary").click()  # closed again

    ann.get_by_role("button", name="Start the game").click()
    ann.wait_for_selector(".table .hand-card")
    ann.locator(".mine-row .chat-menu summary").click()
    phrase = ann.get_by_role("button", name="Nice one!")
    expect(phrase).to_be_visible()
    ann.screenshot(path=str(artifacts / "quick-chat-phone.png"))
    phrase.click()
    # Bob reads it in Dutch over Ann's seat and in his log; the TV in its own language
    ann_id = made["player_id"]
    expect(bob.locator(f".opp[data-player='{ann_id}'] .chat-bubble")).to_have_text("Mooi zo!")
    expect(bob.locator("#log")).to_contain_text("Ann: “Mooi zo!”")
    expect(ann.locator(".mine .chat-bubble")).to_have_text("Nice one!")
    expect(tv.locator(f".tv-seat[data-player='{ann_id}'] .chat-bubble")).to_have_text("Nice one!")
    expect(tv.locator(".tv-latest")).to_contain_text("Ann: “Nice one!”")
    tv.screenshot(path=str(artifacts / "quick-chat-tv.png"))
