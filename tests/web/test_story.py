"""The night's story at match over: on the host's phone (under the scores, with "Save as image"
giving a PNG) and over the big screen's table, with the players' names and the matches won."""

from __future__ import annotations

from pathlib import Path

from playwright.sync_api import expect

from .test_flows import play_a_match, seat_browser
from .test_game import play_until_over
from .ui import add_bot

PHONE = {"width": 390, "height": 844}
TV = {"width": 1920, "height": 1080}
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def test_the_nights_story_shows_on_the_phone_and_the_tv_at_match_over(pages, web_server, artifacts):
    made = web_server.create("Ann", rules={"hand_size": 3, "turn_timer_s": 0, "target_score": 100})
    code = made["code"]
    host = pages.new(phone=True, viewport=PHONE)
    seat_browser(host, web_server, code, made)
    tv = pages.new(viewport=TV)
    tv.goto(f"/tv/{code}")
    add_bot(host, "easy")
    host.get_by_role("button", name="Start the game").click()
    expect(tv.locator(".tv-discard .card")).to_be_visible()
    play_a_match(host)

    names = sorted(host.locator(".over-panel .scores .score-row .sr-name").all_inner_texts())
    winner = host.locator(".over-panel .scores .score-row.win").get_attribute("data-player")
    # the phone: the story opens by itself at match over, once the record has the last round
    story = host.locator(".over-panel .story")
    players = story.locator(".story-player")
    expect(players).to_have_count(2)
    assert sorted(players.locator(".story-name").all_inner_texts()) == names
    expect(story.locator(f'.story-player[data-player="{winner}"] .story-stars')).to_have_text("★ 1")
    expect(story.locator(".story-summary")).to_contain_text("1 match won")
    expect(story.locator(".story-award").first).to_be_visible()
    expect(story.locator(".story-vs")).to_contain_text("Rounds won, bots against people: ")
    for award in story.locator(".story-award").all():  # each names a player of the night
        assert award.get_attribute("data-player") in {p.get_attribute("data-player") for p in players.all()}
    story.evaluate("el => { el.scrollIntoView({block: 'start'}); window.scrollBy(0, -64); }")
    host.screenshot(path=str(artifacts / "story-phone.png"))
    assert host.evaluate("() => document.scrollingElement.scrollWidth") <= PHONE["width"]

    # saved as an image: a PNG file named after the room
    with host.expect_download() as got:
        story.get_by_role("button", name="Save as image").click()
    download = got.value
    assert download.suggested_filename == f"mercyless-night-{code}.png"
    assert Path(download.path()).read_bytes()[:8] == PNG_MAGIC
    download.save_as(artifacts / "story-image.png")

    # the big screen: the story over the table, the scores beside it
    board = tv.locator(".tv-story")
    expect(board.locator("h2")).to_have_text("The night's story")
    expect(board.locator(".story-player")).to_have_count(2)
    assert sorted(board.locator(".story-name").all_inner_texts()) == names
    expect(board.locator(f'.story-player[data-player="{winner}"] .story-stars')).to_have_text("★ 1")
    expect(tv.locator(".tv-scores li")).to_have_count(2)
    tv.screenshot(path=str(artifacts / "story-tv.png"))

    # a new match: the screen's table comes back
    host.get_by_role("button", name="New match").click()
    tv.wait_for_function("() => document.body.dataset.status === 'playing'")
    expect(board).to_have_count(0)


MOMENTS = [  # each event's player and the hands are the round's first player's
    {"step": 4, "player": None, "swing": 12, "events": [{"kind": "took_stack", "count": 12}]},
    {"step": 9, "player": None, "swing": 25, "events": [{"kind": "eliminated"}]},
]


def test_the_tv_replays_a_rounds_key_moments_between_rounds_and_anyone_can_skip(pages, web_server, artifacts):
    made = web_server.create("Ann", rules={"hand_size": 2, "turn_timer_s": 0,
                                           "deck": {"r-5": 20, "y-5": 20, "g-5": 20, "b-5": 20}})
    code = made["code"]
    host = pages.new()
    seat_browser(host, web_server, code, made)
    tv = pages.new(viewport=TV)

    def with_moments(route):
        # the round's real story, with two made-up swings of its first player (a round of fives
        # has none: every card matches, nobody draws)
        answer = route.fetch()
        story = answer.json()
        if story.get("players"):
            pid = story["players"][0]["id"]
            story["moments"] = [{**m, "hands": {pid: 13},
                                 "events": [{**e, "player": pid} for e in m["events"]]} for m in MOMENTS]
        route.fulfill(response=answer, json=story)

    tv.route("**/api/rooms/*/story", with_moments)
    tv.goto(f"/tv/{code}")
    add_bot(host, "easy")
    host.get_by_role("button", name="Start the game").click()
    play_until_over([host], limit_s=30)
    moments = tv.locator(".tv-moments")
    expect(moments.locator("h2")).to_have_text("Round 1: the key moments")
    expect(moments.locator(".tv-moment-count")).to_have_text("Moment 1 of 2")
    expect(moments.locator(".tv-moment-events")).to_contain_text("12")
    expect(moments.locator(".tv-moment-hands li")).to_have_count(1)
    tv.screenshot(path=str(artifacts / "story-moments-tv.png"))
    moments.get_by_role("button", name="Skip").click()
    expect(moments).to_have_count(0)
    expect(tv.locator(".tv-winner")).to_be_visible()  # the table's round over again

    # the host ends the night after this round (no match is over): every screen shows its story
    host.get_by_role("button", name="End the night").click()
    expect(tv.locator(".tv-story h2")).to_have_text("The night's story")
    expect(host.locator(".over-panel .story .story-player")).to_have_count(2)
    expect(host.locator("#log")).to_contain_text("Ann ended the night: here is its story")
    expect(host.get_by_role("button", name="End the night")).to_have_count(0)
