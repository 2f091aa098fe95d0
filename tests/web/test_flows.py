"""Joining errors, reloading mid-game, spectators, the colour dialog and the phone layout."""

from __future__ import annotations

import json
import re

import httpx
from playwright.sync_api import expect

from tests.app.harness import ROOT

from .test_game import play_until_over
from .ui import add_bot, create_room, hand, join_by_link, no_horizontal_scroll

# a deck that is almost all plain wilds: the host surely holds one (every colour needs one card)
WILD_DECK = {"w-wild": 40, "r-5": 1, "y-5": 1, "g-5": 1, "b-5": 1}


#: Run before each load of the page: the seat's token in localStorage, once (a reload finds what
#: the page itself left there)
SEAT_SCRIPT = """(() => {
  const [code, seat] = %s;
  if (sessionStorage.getItem(`test.seated.${code}`)) return;
  sessionStorage.setItem(`test.seated.${code}`, '1');
  localStorage.setItem('mercyless.rooms', JSON.stringify(
    {[code]: {token: seat.token, player_id: seat.player_id, at: Date.now()}}));
})()"""


def seat_browser(page, server, code: str, seat: dict) -> None:
    """Give a browser the token of a seat made over HTTP (as if it had created or joined itself),
    written before the room's page first runs: that page is the only load of the app."""
    page.add_init_script(SEAT_SCRIPT % json.dumps([code, seat]))
    page.goto(f"/r/{code}")


def test_wrong_code_full_room_and_code_format(pages, web_server):
    page = pages.new()
    page.goto("/")
    page.get_by_label("Your name").fill("Cat")
    # a code in the right format that names no room: the server says 404 room_not_found
    page.get_by_label("Join a room").fill("zzzz22")
    page.get_by_role("button", name="Join", exact=True).click()
    expect(page.get_by_role("alert")).to_contain_text("There is no room with code ZZZZ22")
    expect(page.get_by_label("Join a room")).to_have_attribute("aria-invalid", "true")
    expect(page.get_by_label("Join a room")).to_have_value("ZZZZ22")  # a typo is fixed, not retyped
    # look-alike letters are refused before any request, exactly as the server would
    page.get_by_label("Join a room").fill("ABC10O")
    page.get_by_label("Join a room").press("Enter")
    expect(page.get_by_role("alert")).to_contain_text("6 characters")
    # a full room: 409 room_full
    made = web_server.create("Host")
    for i in range(9):
        web_server.join(made["code"], f"P{i}")
    page.get_by_label("Join a room").fill(made["code"].lower())
    page.get_by_role("button", name="Join", exact=True).click()
    expect(page.get_by_role("alert")).to_contain_text(f"Room {made['code']} is full")
    # an invite link to a room that does not exist
    page.goto("/r/QQQQQQ")
    page.get_by_role("button", name="Join room QQQQQQ").click()
    expect(page.get_by_role("alert")).to_contain_text("There is no room with code QQQQQQ")


def test_a_full_rooms_lobby_offers_to_watch(pages, web_server):
    made = web_server.create("Host")
    for i in range(9):
        web_server.join(made["code"], f"P{i}")
    page = pages.new(phone=True)
    page.goto("/")
    page.get_by_label("Your name").fill("Cat")
    page.get_by_label("Join a room").fill(made["code"])
    page.get_by_role("button", name="Join", exact=True).click()
    expect(page.get_by_role("alert")).to_contain_text("or watch: you take the next free seat")
    page.get_by_role("button", name=f"Watch {made['code']}").click()
    expect(page).to_have_url(re.compile(f"/r/{made['code']}$"))
    expect(page.locator(".spectator.is-you")).to_contain_text("Cat")
    expect(page.locator(".seatlist .seat")).to_have_count(10)


def test_reload_mid_game_returns_to_the_same_seat_and_hand(pages, web_server):
    host = pages.new()
    guest = pages.new()
    code = create_room(host, "Ann")
    join_by_link(guest, code, "Bob")
    expect(host.locator(".seatlist .seat")).to_have_count(2)
    host.get_by_role("button", name="Start the game").click()
    guest.wait_for_selector(".table .hand-card")
    expect(guest.locator(".table")).to_have_attribute("data-turn", "other")  # Ann (seat 0) plays first
    before = hand(guest)
    assert len(before) == 7
    # a reaction shows over the sender's seat for everyone, and in the log
    host.get_by_text("React", exact=True).click()
    host.get_by_role("button", name="good game").click()
    expect(guest.locator(".opp", has_text="Ann").locator(".bubble")).to_have_text("good game")
    expect(guest.locator("#log")).to_contain_text("Ann: good game")
    guest.reload()
    guest.wait_for_selector(".table .hand-card")
    assert hand(guest) == before
    # the ticker (a phone's last line of the log) shows the last move, not "Connected to room"
    expect(guest.locator("#ticker")).to_have_text("Ann: good game")
    expect(guest.locator(".mine")).to_contain_text("Bob")
    expect(guest.locator(".opponents .opp")).to_have_count(1)
    expect(guest.locator(".opponents")).to_contain_text("Ann")
    expect(host.locator(".opp", has_text="Bob").locator(".dot.on")).to_have_count(1)
    # a newcomer during the round watches (spectator) and sees no hand
    watcher = pages.new()
    join_by_link(watcher, code, "Cy")
    expect(watcher.locator(".table-note")).to_contain_text("watching")
    expect(watcher.locator(".hand .hand-card")).to_have_count(0)
    expect(watcher.locator(".opponents .opp")).to_have_count(2)
    # a dropped connection shows the reconnecting state, then recovers by itself: the guest's
    # socket now goes through a proxy that the test can cut, and refuse while "offline"
    net = {"block": False, "live": []}

    def proxy(ws):
        if net["block"]:
            ws.close(code=1013)
            return
        net["live"].append((ws, ws.connect_to_server()))

    guest.route_web_socket(re.compile(r".*/ws/.*"), proxy)
    guest.reload()
    guest.wait_for_selector(".table .hand-card")
    assert net["live"], "the socket did not go through the proxy"
    net["block"] = True
    page_side, server_side = net["live"][-1]
    page_side.close(code=1012)
    server_side.close()
    expect(guest.locator("#conn")).to_contain_text("Reconnecting")
    expect(guest.locator("body")).to_have_attribute("data-conn", "reconnecting")
    # a drop that lasts past DROP_DELAY_MS is told to the others (a blip that ends sooner is not)
    expect(host.locator("#log")).to_contain_text("Bob lost connection")
    net["block"] = False
    expect(guest.locator("#conn")).to_be_hidden(timeout=15_000)
    assert hand(guest) == before
    # the same seat opened in a second tab takes the seat over; the first tab says so and can take it back
    second = guest.context.new_page()
    second.goto(f"/r/{code}")
    second.wait_for_selector(".table .hand-card")
    assert hand(second) == before
    expect(guest.get_by_role("alert")).to_contain_text("open in another tab")
    guest.get_by_role("button", name="Play here instead").click()
    guest.wait_for_selector(".table .hand-card")
    expect(second.get_by_role("alert")).to_contain_text("open in another tab")


def wild_table(pages, web_server):
    """Ann's page at her first turn, a hand of wilds, against an easy bot."""
    made = web_server.create("Ann", rules={"deck": WILD_DECK})
    page = pages.new()
    seat_browser(page, web_server, made["code"], made)
    page.wait_for_selector(".lobby")
    add_bot(page, "easy")
    page.get_by_role("button", name="Start the game").click()
    page.wait_for_selector(".table .hand-card")
    expect(page.locator(".table")).to_have_attribute("data-turn", "me")
    return page


def test_colour_dialog_cancel_keeps_the_card_and_a_choice_sets_the_colour(pages, web_server, artifacts):
    page = wild_table(pages, web_server)
    wild = page.locator(".hand-card.playable[data-card='w-wild']").first
    count = page.locator(".hand-card[data-card='w-wild']").count()
    version = page.evaluate("() => document.body.dataset.version")
    wild.click()
    dialog = page.get_by_role("dialog", name="Choose a colour")
    expect(dialog).to_be_visible()
    expect(dialog.get_by_role("button")).to_have_count(5)  # four colours and "keep the card"
    page.screenshot(path=str(artifacts / "colour-choice.png"))
    dialog.get_by_role("button", name="Keep the card").click()
    expect(dialog).to_be_hidden()
    assert page.evaluate("() => document.body.dataset.version") == version  # nothing was sent
    expect(page.locator(".hand-card[data-card='w-wild']")).to_have_count(count)
    # keyboard: focus the card, Enter opens the dialog, Escape cancels it
    wild.focus()
    page.keyboard.press("Enter")
    expect(dialog).to_be_visible()
    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()
    wild.click()
    dialog.get_by_role("button", name="Blue").click()
    expect(page.locator("#log")).to_contain_text("Ann played Wild")
    expect(page.locator("#log")).to_contain_text("Ann picked Blue")
    expect(page.locator(".hand-card[data-card='w-wild']")).to_have_count(count - 1)


def test_phone_shows_the_whole_table_without_horizontal_scrolling(pages, artifacts):
    page = pages.new(phone=True)
    create_room(page, "Dee")
    for level in ("easy", "normal", "hard", "easy", "normal"):
        add_bot(page, level)
    assert no_horizontal_scroll(page)[0] <= 360
    page.get_by_role("button", name="Start the game").click()
    page.wait_for_selector(".table .hand-card")
    expect(page.locator(".opponents .opp")).to_have_count(5)
    width, inner = no_horizontal_scroll(page)
    assert inner == 360 and width <= 360, (width, inner)
    # every part of the table is inside the viewport's width
    overflow = page.evaluate("""() => [...document.querySelectorAll('.table *')].filter(el => {
        const r = el.getBoundingClientRect(); return r.width && (r.right > 361 || r.left < -1);
    }).map(el => el.className).slice(0, 5)""")
    assert overflow == []
    # the log starts closed below the table on a phone: its last line shows above the hand
    expect(page.locator("#ticker")).to_be_visible()
    # read in one go in the page: bots may add lines meanwhile
    page.wait_for_function("""() => {
        const text = document.getElementById('ticker').textContent;
        const last = [...document.querySelectorAll('#log li .log-text')].pop();
        return !!text && !!last && last.firstChild.textContent === text; }""", timeout=5000)
    page.screenshot(path=str(artifacts / "table-phone.png"), full_page=True)


def test_dutch_follows_the_browser_language_and_can_be_switched(pages):
    page = pages.new(locale="nl-NL")
    page.goto("/")
    expect(page.locator("html")).to_have_attribute("lang", "nl")
    expect(page.get_by_role("button", name="Kamer maken")).to_be_visible()
    page.get_by_label("Taal").select_option("en")
    expect(page.get_by_role("button", name="Create a room")).to_be_visible()
    page.reload()
    expect(page.locator("html")).to_have_attribute("lang", "en")


def test_static_client_has_no_outside_assets(web_server):
    html = httpx.get(f"{web_server.url}/r/ABCDEF").text
    assert '<script type="module" src="/js/app.js">' in html
    web = ROOT / "web"
    for path in web.rglob("*"):
        if path.suffix in (".html", ".js", ".css", ".svg"):
            text = path.read_text().replace('xmlns="http://www.w3.org/2000/svg"', "")
            assert "://" not in text.replace("${proto}//", ""), path  # no CDN, no web font, no remote asset
            assert httpx.get(f"{web_server.url}/{path.relative_to(web).as_posix()}").status_code == 200, path


def test_roulette_target_names_the_colour_in_a_dialog_the_server_asked_for(pages, web_server, artifacts):
    rules = {"deck": {"w-roulette": 30, "r-5": 4, "y-5": 4, "g-5": 4, "b-5": 4}, "roulette_chooser": "target"}
    made = web_server.create("Ann", rules=rules)
    joined = web_server.join(made["code"], "Bob")
    host = pages.new()
    guest = pages.new(phone=True)
    seat_browser(host, web_server, made["code"], made)
    seat_browser(guest, web_server, made["code"], joined)
    host.get_by_role("button", name="Start the game").click()
    host.wait_for_selector(".table .hand-card")
    expect(host.locator(".table")).to_have_attribute("data-turn", "me")
    host.locator(".hand-card.playable[data-card='w-roulette']").first.click()
    # no colour is asked of the player: the target names it, in a dialog that cannot be cancelled
    expect(host.get_by_role("dialog")).to_have_count(0)
    dialog = guest.get_by_role("dialog", name="Colour Roulette!")
    expect(dialog).to_be_visible()
    expect(dialog).to_contain_text("Ann spun the roulette on you")
    expect(dialog.get_by_role("button", name="Keep the card")).to_have_count(0)
    # opened by a patch, it takes the focus with the next frame: the keyboard answers it at once
    expect(dialog.get_by_role("button").first).to_be_focused()
    expect(host.locator(".turnline")).to_contain_text("Bob is choosing")
    guest.keyboard.press("Escape")
    expect(dialog).to_be_visible()
    guest.screenshot(path=str(artifacts / "roulette-choice-phone.png"))
    dialog.get_by_role("button", name="Green").click()
    expect(dialog).to_be_hidden()
    expect(host.locator("#log")).to_contain_text("Roulette: Bob dug for Green")
    expect(host.locator(".reveal")).to_be_visible()
    expect(host.locator(".reveal")).to_contain_text("Bob")
    host.screenshot(path=str(artifacts / "roulette-reveal.png"))
    expect(guest.locator(".color-chip")).to_contain_text("Green")
    assert no_horizontal_scroll(guest)[0] <= 360


def test_scores_tonight_lists_the_round_and_its_replay_steps(pages, web_server, artifacts):
    made = web_server.create("Ann", rules={"hand_size": 3})
    page = pages.new()
    seat_browser(page, web_server, made["code"], made)
    page.wait_for_selector(".lobby")
    panel = page.locator(".history")
    expect(panel).to_contain_text("Scores tonight")
    expect(panel).to_contain_text("No rounds finished yet")  # an empty history is fine
    add_bot(page, "easy")
    page.get_by_role("button", name="Start the game").click()
    page.wait_for_selector(".table .hand-card")
    play_until_over([page], limit_s=25)
    # the round is written a moment after it ends: the panel fetches again until it is there
    panel = page.locator(".over-panel .history")
    row = panel.locator(".hist-round")
    expect(row).to_have_count(1)
    expect(row).to_contain_text("Round 1")
    expect(row).to_contain_text("points")
    expect(panel.locator(".hist-standings .score-row")).to_have_count(2)
    # the table grows to hold the whole panel: nothing of it hides in a box that scrolls
    page.wait_for_function("""() => { const o = document.querySelector('.overlay');
        return o.scrollHeight <= o.clientHeight + 1; }""", timeout=5000)
    panel.scroll_into_view_if_needed()
    panel.screenshot(path=str(artifacts / "scores-tonight.png"))
    row.get_by_role("button", name="Replay round 1").click()
    dialog = page.get_by_role("dialog", name="Replay of round 1")
    expect(dialog).to_be_visible()
    expect(dialog.locator(".replay-count")).to_contain_text("Step 0 of")
    expect(dialog.locator(".replay-events")).to_contain_text("Round")  # "Round … begins"
    expect(dialog.locator(".replay-player")).to_have_count(2)
    expect(dialog.locator(".replay-table .card").first).to_be_visible()
    expect(dialog.get_by_role("button", name="‹ Previous")).to_be_disabled()
    dialog.get_by_role("button", name="Next ›").click()
    expect(dialog.locator(".replay-count")).to_contain_text("Step 1 of")
    expect(dialog.locator(".replay-events li").first).not_to_have_text("Nothing to see in this step.")
    dialog.get_by_role("button", name="Next ›").click()
    expect(dialog.locator(".replay-count")).to_contain_text("Step 2 of")
    dialog.screenshot(path=str(artifacts / "replay.png"))
    dialog.get_by_role("button", name="‹ Previous").click()
    expect(dialog.locator(".replay-count")).to_contain_text("Step 1 of")
    dialog.get_by_role("button", name="Play", exact=True).click()
    expect(dialog.get_by_role("button", name="Pause")).to_be_visible()
    expect(dialog.locator(".replay-count")).not_to_contain_text("Step 1 of")
    dialog.get_by_role("button", name="Pause").click()
    dialog.get_by_role("button", name="Close").click()
    expect(dialog).to_be_hidden()


def test_a_card_that_cannot_be_played_says_why(pages, web_server):
    made = web_server.create("Ann", rules={"deck": WILD_DECK})
    web_server.join(made["code"], "Bob")  # seated, never plays: his turn waits for his timer
    page = pages.new()
    seat_browser(page, web_server, made["code"], made)
    page.wait_for_selector(".lobby")
    page.get_by_role("button", name="Start the game").click()
    page.wait_for_selector(".table .hand-card")
    if page.locator(".table").get_attribute("data-turn") == "me":
        page.locator(".hand-card.playable[data-card='w-wild']").first.click()
        page.get_by_role("dialog", name="Choose a colour").get_by_role("button", name="Blue").click()
    expect(page.locator(".table")).not_to_have_attribute("data-turn", "me")
    page.locator(".hand-card").first.click(force=True)  # aria-disabled: a tap still reaches it
    expect(page.locator("#toasts")).to_contain_text("It is not your turn.")


STILL_FOR_TEN_FRAMES = """async (el) => {
  const rects = [];
  for (let i = 0; i < 10; i++) {
    await new Promise((done) => requestAnimationFrame(done));
    const r = el.getBoundingClientRect();
    rects.push(`${r.top},${r.bottom}`);
  }
  return new Set(rects).size === 1;
}"""


def test_a_dialog_option_under_a_resting_pointer_keeps_still(pages, web_server):
    """A pointer left on the bottom edge of a colour (a player who lets go of the mouse there):
    the option used to rise 2 px on hover, out from under the pointer, sink back and rise again
    for as long as the pointer stayed, and a click on it waited for it to hold still."""
    page = wild_table(pages, web_server)
    page.locator(".hand-card.playable[data-card='w-wild']").first.click()
    option = page.get_by_role("dialog", name="Choose a colour").get_by_role("button", name="Red")
    expect(option).to_be_visible()
    box = option.bounding_box()
    assert box is not None
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] - 1)
    assert option.evaluate(STILL_FOR_TEN_FRAMES)


def play_a_match(host) -> None:
    """The host plays the match's rounds ("Next round" after each) until one wins it."""
    for _ in range(12):  # rounds until one wins the match (a round's points reach 100)
        play_until_over([host], limit_s=60)
        if host.evaluate("() => document.body.dataset.status") == "match_over":
            return
        # every status the page takes is kept: with three cards a bot can end the next round on
        # its own (skips, two players) before a poll of the page ever reads "playing"
        host.evaluate(SEEN_STATUSES)
        host.get_by_role("button", name="Next round").click()
        host.wait_for_function("() => window.seenStatuses.includes('playing')")
    raise AssertionError("no match won in 12 rounds")


SEEN_STATUSES = """() => {
  const watched = window.seenStatuses !== undefined;
  window.seenStatuses = [];
  if (watched) return;
  new MutationObserver(records => {
    for (const r of records) window.seenStatuses.push(r.oldValue, document.body.dataset.status);
  }).observe(document.body, {attributes: true, attributeFilter: ['data-status'], attributeOldValue: true});
}"""


def test_scores_tonight_lists_a_second_match_once_it_is_won(pages, web_server):
    """Bug: "Scores tonight" named the round that ended by its number alone; a second match's
    first round had the number of the first match's, and the panel kept the first match only."""
    made = web_server.create("Ann", rules={"hand_size": 3, "turn_timer_s": 0, "target_score": 100})
    host = pages.new()
    seat_browser(host, web_server, made["code"], made)
    add_bot(host, "easy")
    host.get_by_role("button", name="Start the game").click()
    play_a_match(host)
    blocks = host.locator(".over-panel .history .hist-match-block")
    expect(blocks).to_have_count(1)
    host.get_by_role("button", name="Back to lobby").click()
    host.get_by_role("button", name="Start a new match").click()
    host.wait_for_function("() => document.body.dataset.status === 'playing'")
    play_a_match(host)
    expect(blocks).to_have_count(2)
    expect(blocks.first.locator(".hist-match")).to_contain_text("Match 2")
    # and from the record (the round's replay button comes with it), not only the view's copy
    expect(blocks.first.locator(".hr-replay")).not_to_have_count(0)
