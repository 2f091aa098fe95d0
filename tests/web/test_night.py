"""A night of play with friends, tried as they would: the landing form, the invite (link, QR code,
a link only this computer can open), the points explained at round over, the night's scores and
the log at once, the turn noticed from another tab, and the smaller defects found on the way."""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import expect

from .test_crowded import NAMES
from .test_flows import seat_browser
from .test_game import play_until_over
from .ui import create_room, take_turn

PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1440, "height": 900}
# every card matches every other: a round is a few plays
FIVES = {"r-5": 20, "y-5": 20, "g-5": 20, "b-5": 20}
LONG = "Wwwwwwwwwwwwwwwwwwwwwww"  # 23: with a last letter, the longest name allowed (24)


def new_page(pages, viewport, **kw):
    return pages.new(phone=viewport is PHONE, viewport=viewport, **kw)


def started_with_a_bot(pages, web_server, viewport, name="Ann", rules=None, **kw):
    made = web_server.create(name, rules={"turn_timer_s": 0, **(rules or {})})
    page = new_page(pages, viewport, **kw)
    seat_browser(page, web_server, made["code"], made)
    page.select_option("#bot-level", "easy")
    page.click("button[data-key=addbot]")
    expect(page.locator(".seatlist .seat")).to_have_count(2)
    page.click("button[data-key=start]")
    page.wait_for_selector(".table .hand-card")
    return page, made


# -- 1, 2: the landing form ----------------------------------------------------------------------


def test_enter_in_the_name_field_joins_when_a_code_is_filled_in_and_creates_otherwise(pages, web_server):
    made = web_server.create("Ann")
    page = pages.new(phone=True, viewport=PHONE)
    page.goto("/")
    page.get_by_label("Join a room").fill(made["code"].lower())
    page.get_by_label("Your name").fill("Bob")
    page.get_by_label("Your name").press("Enter")  # a phone keyboard's "Go"
    page.wait_for_selector(".lobby .bigcode")
    assert page.evaluate("() => location.pathname") == f"/r/{made['code']}"
    expect(page.locator(".seatlist .seat")).to_have_count(2)

    other = pages.new(phone=True, viewport=PHONE)
    other.goto("/")
    other.get_by_label("Your name").fill("Cy")
    other.get_by_label("Your name").press("Enter")
    other.wait_for_selector(".lobby .bigcode")
    assert other.evaluate("() => location.pathname") != f"/r/{made['code']}"
    expect(other.locator(".seatlist .seat")).to_have_count(1)


def test_the_landing_fields_keep_what_was_typed_on_an_error(pages, web_server):
    page = pages.new()
    page.goto("/")
    name = page.get_by_label("Your name")
    code = page.get_by_label("Join a room")
    alert = page.get_by_role("alert")
    # no name: the code stays
    name.fill("")
    code.fill("ZZZZ22")
    page.get_by_role("button", name="Join", exact=True).click()
    expect(alert).to_contain_text("Enter a name")
    expect(code).to_have_value("ZZZZ22")
    # a code that names no room: the name stays, and so does the code (to fix one letter)
    name.fill("Cat")
    page.get_by_role("button", name="Join", exact=True).click()
    expect(alert).to_contain_text("There is no room with code ZZZZ22")
    expect(name).to_have_value("Cat")
    expect(code).to_have_value("ZZZZ22")
    # fixed, then another mistake: the fixed code stays, the old wrong one does not come back
    code.fill("ZZZZ33")
    name.fill("")
    page.get_by_role("button", name="Join", exact=True).click()
    expect(alert).to_contain_text("Enter a name")
    expect(code).to_have_value("ZZZZ33")
    # a badly formed code: the name stays
    name.fill("Cat")
    code.fill("OOO")
    page.get_by_role("button", name="Join", exact=True).click()
    expect(alert).to_contain_text("A room code has 6 characters")
    expect(name).to_have_value("Cat")
    expect(code).to_have_value("OOO")


def test_a_name_of_only_an_invisible_character_says_what_is_wrong(pages, web_server):
    page = pages.new()
    page.goto("/")
    page.get_by_label("Your name").fill("\u200b")
    page.get_by_role("button", name="Create a room").click()
    expect(page.get_by_role("alert")).to_contain_text("only invisible or control characters")
    expect(page.get_by_label("Your name")).to_have_value("\u200b")


# -- 3: the invite -------------------------------------------------------------------------------


@pytest.mark.parametrize("viewport", [PHONE, DESKTOP], ids=["phone", "desktop"])
def test_the_lobby_shows_the_invite_link_its_qr_code_and_a_local_only_warning(pages, web_server, viewport,
                                                                              artifacts):
    # the test server listens on 127.0.0.1 only: /api/invite has no url, the link only works here
    page = new_page(pages, viewport)
    code = create_room(page, "Ann")
    link = f"{web_server.url}/r/{code}"
    expect(page.locator(".invite-link")).to_have_text(link)
    qr = page.locator(".invite-qr img")
    expect(qr).to_have_attribute("src", "/api/qr.svg?text=" + link.replace(":", "%3A").replace("/", "%2F"))
    # the <img>, or (the server's SVG lacks its xmlns, which an <img> refuses) the same drawing inline
    drawn = page.locator(".invite-qr img:not([hidden]), .invite-qr svg.qr-inline")
    expect(drawn).to_be_visible()
    page.wait_for_function("""() => { const img = document.querySelector('.invite-qr img');
      return (!img.hidden && img.naturalWidth > 0)
        || !!document.querySelector('.invite-qr svg.qr-inline path'); }""")
    assert drawn.bounding_box()["width"] >= 120
    warn = page.locator(".invite-local")
    expect(warn).to_have_text("This link only works on this computer: start the server with --host 0.0.0.0 "
                              "to let friends on your Wi-Fi join")
    page.screenshot(path=str(artifacts / f"night-invite-{viewport['width']}.png"), full_page=True)
    assert page.evaluate("() => document.scrollingElement.scrollWidth") <= viewport["width"]
    page.select_option("select.lang", "nl")
    expect(page.locator(".invite-local")).to_contain_text("Deze link werkt alleen op deze computer")


def test_on_a_loopback_address_the_invite_uses_the_servers_first_reachable_url(pages, web_server):
    page = pages.new()
    page.route("**/api/invite?*", lambda route: route.fulfill(
        status=200, content_type="application/json",
        body=json.dumps({"urls": ["http://192.168.1.20:8000/", "http://10.0.0.5:8000"],
                         "local_only": False})))
    code = create_room(page, "Ann")
    expect(page.locator(".invite-link")).to_have_text(f"http://192.168.1.20:8000/r/{code}")
    expect(page.locator(".invite-qr img")).to_have_attribute(
        "src", f"/api/qr.svg?text=http%3A%2F%2F192.168.1.20%3A8000%2Fr%2F{code}")
    expect(page.locator(".invite-local")).to_be_hidden()
    # a page opened on a real address shares that address, whatever the server lists
    got = page.evaluate("""async () => {
      const m = await import('/js/invite.js');
      return [m.pickBase('http://192.168.1.7:8000', '192.168.1.7', {urls: ['http://10.0.0.5:8000']}),
              m.pickBase('http://[::1]:8000', '[::1]', {urls: [], local_only: true}),
              m.pickBase('http://127.0.1.1:8000', '127.0.1.1', {urls: ['http://10.0.0.5:8000']})];
    }""")
    assert got == [{"base": "http://192.168.1.7:8000", "localOnly": False},
                   {"base": "http://[::1]:8000", "localOnly": True},
                   {"base": "http://10.0.0.5:8000", "localOnly": False}]


# -- 4, 5: round over ----------------------------------------------------------------------------

# each counted row: its cards' points add up to its sum; the rows and the bonus add up to the total
POINTS_JS = """() => {
  const rows = [...document.querySelectorAll('.over-panel .pts-row')];
  const num = (el) => Number((el?.textContent || '').replace(/[^0-9]/g, ''));
  const out = {rows: [], total: num(document.querySelector('.pts-total .pts-sum')), winnerCounted: false};
  for (const r of rows) {
    if (r.classList.contains('pts-total')) continue;
    const values = [...r.querySelectorAll('.pts-value')].map(num);
    out.rows.push({cls: r.className, sum: num(r.querySelector('.pts-sum')),
                   cards: values.reduce((a, b) => a + b, 0), text: r.textContent});
    if (r.classList.contains('pts-winner') && values.length) out.winnerCounted = true;
  }
  return out;
}"""


def test_round_over_explains_the_points_and_the_nights_scores_show_the_round_at_once(pages, web_server,
                                                                                    artifacts):
    page, made = started_with_a_bot(pages, web_server, DESKTOP, rules={"hand_size": 2, "deck": FIVES})
    # the night's record is written a moment after the round: here it never comes
    page.route("**/api/rooms/*/history", lambda route: route.fulfill(
        status=200, content_type="application/json", body=json.dumps({"code": made["code"], "matches": []})))
    play_until_over([page], limit_s=30)
    panel = page.locator(".over-panel")
    expect(panel.locator(".pts h3")).to_have_text("How the points were counted")
    got = page.evaluate(POINTS_JS)
    assert not got["winnerCounted"], got
    assert all(r["sum"] == r["cards"] for r in got["rows"] if "pts-winner" not in r["cls"]), got
    assert sum(r["sum"] for r in got["rows"]) == got["total"], got
    expect(panel.locator(".over-reason")).to_contain_text(f"+{got['total']} points")
    assert "Cards left" not in panel.inner_text()
    # "Scores tonight" has the round from the view, without waiting for the history
    row = panel.locator(".hist-round")
    expect(row).to_have_count(1)
    expect(row).to_contain_text("Round 1")
    expect(panel.locator(".history")).not_to_contain_text("No rounds finished yet")
    page.screenshot(path=str(artifacts / "night-points.png"), full_page=True)


def test_the_points_count_knocked_out_players_and_not_the_winners_hand(pages, web_server):
    page, _ = started_with_a_bot(pages, web_server, DESKTOP)
    got = page.evaluate("""async () => {
      const m = await import('/js/table/points.js');
      const view = {room: {rules: {target_score: 1000}}, players: [
          {id: 'a', name: 'Ann', eliminated: false, score: 1020}, {id: 'b', name: 'Bob', eliminated: false},
          {id: 'c', name: 'Cy', eliminated: true}, {id: 'd', name: 'Dee', eliminated: true}],
        game: {winner: 'a', points: 575, revealed: {a: ['r-9'], b: ['g-7', 'y-skip', 'w-draw6']}}};
      const b = m.breakdown(view);
      const el = m.pointsExplained(view);
      return {total: b.total, bonus: b.bonus, rows: b.rows.map((r) => r.points), text: el.textContent,
              why: m.matchReason(view)};
    }""")
    assert got["rows"] == [0, 77, 0, 0] and got["bonus"] == 500 and got["total"] == 577, got
    assert "+250 × 2 knocked out" in got["text"], got
    assert "winner: own cards not counted" in got["text"], got
    assert got["why"] == "Ann reached 1020 points: the match is played to 1000."


def test_a_reload_fills_what_happened_from_the_rooms_recent_events(pages, web_server):
    page, _ = started_with_a_bot(pages, web_server, DESKTOP)
    log = page.locator("#log")
    expect(log).to_contain_text("Round 1")
    page.reload()
    page.wait_for_selector(".table .hand-card")
    expect(log).to_contain_text("Round 1")
    expect(log.locator("li").last).to_contain_text("Connected to room")


# -- 6: the turn, noticed from elsewhere ---------------------------------------------------------

AUDIO_SPY = """(() => {
  window.__tones = 0;
  window.__buzz = [];
  class FakeNode { connect(x) { return x || this; } }
  class FakeParam { setValueAtTime() {} exponentialRampToValueAtTime() {} }
  class FakeOsc extends FakeNode { constructor() { super(); this.frequency = new FakeParam(); }
    start() { window.__tones += 1; } stop() {} }
  class FakeGain extends FakeNode { constructor() { super(); this.gain = new FakeParam(); } }
  window.AudioContext = class {
    constructor() { this.state = 'running'; this.currentTime = 0; this.destination = {}; }
    resume() {} createOscillator() { return new FakeOsc(); } createGain() { return new FakeGain(); } };
  navigator.vibrate = (p) => { window.__buzz.push(p); return true; };
})()"""


@pytest.mark.parametrize("sound", [False, True], ids=["sound-off", "sound-on"])
def test_the_turn_shows_in_the_tab_title_buzzes_and_sounds_when_turned_on(pages, web_server,
                                                                          sound):
    made = web_server.create("Ann", rules={"turn_timer_s": 0})
    web_server.join(made["code"], "Bob")  # seated, never plays: Ann (seat 0) keeps the turn
    page = pages.new(phone=True, viewport=PHONE)
    page.add_init_script(AUDIO_SPY)
    seat_browser(page, web_server, made["code"], made)
    page.wait_for_selector(".lobby")
    assert page.evaluate("() => localStorage.getItem('mercyless.sound')") is None
    expect(page.locator("button.sound")).to_have_attribute("aria-pressed", "false")  # off until turned on
    if sound:
        page.locator("button.sound").click()
        expect(page.locator("button.sound")).to_have_attribute("aria-pressed", "true")
        assert page.evaluate("() => localStorage.getItem('mercyless.sound')") == "on"
    assert "Your turn" not in page.title()
    before = page.evaluate("() => window.__tones")
    page.get_by_role("button", name="Start the game").click()
    expect(page.locator(".table")).to_have_attribute("data-turn", "me")
    expect(page).to_have_title("Your turn — Mercyless")
    page.wait_for_function("() => window.__buzz.length > 0")
    tones = page.evaluate("() => window.__tones") - before
    assert (tones > 0) == sound, tones
    # the turn played: the title goes back to the room. With two players a skip, a reverse or a
    # draw card gives Ann the turn again (one CI deal kept it for six plays in a row, Bob at 24
    # cards): she plays until it is Bob's, or until he is out and the round over
    for _ in range(40):
        if page.evaluate("() => document.querySelector('.table').dataset.turn") != "me":
            break
        take_turn(page)
    expect(page).to_have_title(f"{made['code']} · Mercyless")
    # the setting is remembered
    page.reload()
    expect(page.locator("button.sound")).to_have_attribute("aria-pressed", "true" if sound else "false")


# -- 7: smaller defects --------------------------------------------------------------------------


def test_avatars_have_their_own_colours(pages, web_server):
    made = web_server.create("Ann")
    for n in NAMES[:4]:
        web_server.join(made["code"], n)
    page = pages.new()
    seat_browser(page, web_server, made["code"], made)
    expect(page.locator(".seatlist .avatar")).to_have_count(5)
    colours = page.eval_on_selector_all(".seatlist .avatar",
                                        "els => els.map(e => getComputedStyle(e).backgroundColor)")
    assert len(set(colours)) >= 4, colours


def test_the_longest_names_never_widen_a_phone_page(pages, web_server, artifacts):
    made = web_server.create(LONG + "A", rules={"turn_timer_s": 0, "hand_size": 2, "deck": FIVES})
    for c in "BCDE":
        web_server.join(made["code"], LONG + c)
    page = pages.new(phone=True, viewport=PHONE)
    seat_browser(page, web_server, made["code"], made)
    expect(page.locator(".seatlist .seat")).to_have_count(5)
    width = "() => document.scrollingElement.scrollWidth"
    assert page.evaluate(width) <= 390
    page.get_by_role("button", name="Start the game").click()
    page.wait_for_selector(".table .hand-card")
    assert page.evaluate(width) <= 390
    assert page.evaluate("() => innerWidth") == 390
    last = page.locator(".hand .hand-card").last.bounding_box()
    assert last["x"] + last["width"] <= 390, last


def test_ten_seats_on_a_phone_scroll_to_the_hand_when_the_turn_comes(pages, web_server, artifacts):
    made = web_server.create("Ann", rules={"turn_timer_s": 0})
    for n in NAMES:
        web_server.join(made["code"], n)  # seated, never play: Ann (seat 0) keeps the turn
    page = pages.new(phone=True, viewport=PHONE)
    seat_browser(page, web_server, made["code"], made)
    expect(page.locator(".seatlist .seat")).to_have_count(10)
    page.evaluate("() => scrollTo(0, 0)")
    page.get_by_role("button", name="Start the game").click()
    expect(page.locator(".table")).to_have_attribute("data-turn", "me")
    page.wait_for_function("""() => { const r = document.querySelector('.hand').getBoundingClientRect();
      return r.top >= 0 && r.bottom <= innerHeight; }""")
    page.screenshot(path=str(artifacts / "night-ten-seats-phone.png"))


def test_a_roulette_reveal_on_a_phone_leaves_the_opponents_in_view(pages, web_server):
    page, _ = started_with_a_bot(pages, web_server, PHONE)
    page.evaluate("""async () => {
      const m = await import('/js/table/effects.js');
      m.applyFx({roulette: {player: 'x', color: 'red', cards: ['b-1', 'g-2', 'y-3', 'b-4', 'r-5']}});
    }""")
    reveal = page.locator(".table .reveal")
    expect(reveal).to_be_visible()
    # the seats (the piles share their ring now: the reveal lies over the piles, never a seat)
    overlap = page.evaluate("""() => { const a = document.querySelector('.reveal').getBoundingClientRect();
      const seats = [...document.querySelectorAll('.opponents .opp')].map((el) => el.getBoundingClientRect());
      return Math.max(0, ...seats.map((b) => Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top))); }""")
    assert overlap == 0
    expect(reveal).to_be_hidden(timeout=3000)


def test_after_switching_to_dutch_the_connected_line_is_dutch(pages, web_server):
    page = pages.new()
    create_room(page, "Ann")
    expect(page.locator("#log")).to_contain_text("Connected to room")
    page.select_option("select.lang", "nl")
    expect(page.locator("#log")).to_contain_text("Verbonden met kamer")
    expect(page.locator("#log")).not_to_contain_text("Connected to room")


def test_add_bot_is_disabled_at_ten_seats(pages, web_server):
    made = web_server.create("Ann")
    for n in NAMES[:8]:
        web_server.join(made["code"], n)
    page = pages.new()
    seat_browser(page, web_server, made["code"], made)
    expect(page.locator(".seatlist .seat")).to_have_count(9)
    add = page.locator("button[data-key=addbot]")
    expect(add).to_be_enabled()
    add.click()
    expect(page.locator(".seatlist .seat")).to_have_count(10)
    expect(add).to_be_disabled()
    expect(add).to_have_attribute("title", "The room is full (10 seats)")


def test_an_invite_path_with_a_slash_says_the_code_is_wrong(pages, web_server):
    # the server answers /r/ABC/DEF with a JSON 404 today (app/main.py routes /r/{code} only):
    # here the client is reached by navigating inside the page, as it will be once served
    page = pages.new()
    page.goto("/")
    page.evaluate("""() => { history.pushState(null, '', '/r/ABC/DEF');
      dispatchEvent(new PopStateEvent('popstate')); }""")
    expect(page.get_by_role("alert")).to_contain_text("A room code has 6 characters")
    expect(page.get_by_label("Join a room")).to_have_value("ABC/DEF")


@pytest.mark.parametrize("blank", ["\u3164", "\u2800\u2800"], ids=["hangul-filler", "braille-blank"])
def test_a_name_that_draws_nothing_is_refused_in_the_page_before_any_request(pages, web_server, blank):
    page = pages.new()
    page.goto("/")
    page.get_by_label("Your name").fill(blank)
    page.get_by_role("button", name="Create a room").click()
    expect(page.get_by_role("alert")).to_contain_text("only invisible or control characters")


def test_a_name_taken_in_the_room_says_so_and_keeps_what_was_typed(pages, web_server):
    host = web_server.create("Sanne")
    page = pages.new(phone=True)
    page.goto(f"/r/{host['code']}")
    name = page.get_by_label("Your name")
    name.fill("sanne ")
    page.get_by_role("button", name=f"Join room {host['code']}").click()
    alert = page.get_by_role("alert")
    expect(alert).to_contain_text("already called sanne")
    expect(name).to_have_value("sanne ")
    name.fill("Sanne B")
    page.get_by_role("button", name=f"Join room {host['code']}").click()
    expect(page.locator("body[data-screen=room]")).to_be_visible()
