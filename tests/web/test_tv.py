"""The big screen (/tv/CODE): a spectator made for a TV. It joins with a screen token of its own
(never a player's), follows a whole round patch by patch, and never receives a hand card."""

from __future__ import annotations

import json

from playwright.sync_api import expect

from .test_csp import RECORD_VIOLATIONS, violations
from .test_flows import play_a_match, seat_browser
from .test_game import play_until_over
from .test_motion import SocketPlayer
from .ui import add_bot

QUICK = {"hand_size": 3, "turn_timer_s": 0}


def frames_of(page) -> list[dict]:
    """Every frame the page's sockets receive, parsed."""
    got: list[dict] = []
    page.on("websocket", lambda ws: ws.on("framereceived", lambda payload: got.append(json.loads(payload))))
    return got


def test_the_tv_follows_a_whole_round_and_never_holds_a_hand_card(pages, web_server, artifacts):
    made = web_server.create("Ann", rules=QUICK)
    code = made["code"]
    host = pages.new()
    seat_browser(host, web_server, code, made)
    tv = pages.new(viewport={"width": 1280, "height": 800})
    tv.add_init_script(RECORD_VIOLATIONS)
    frames = frames_of(tv)
    tv.goto(f"/tv/{code}")
    # in the lobby: the room's seat, the code to join and its QR code (the invite link)
    expect(tv.locator(".tv-seat")).to_have_count(1)
    expect(tv.locator(".tv-code")).to_have_text(code)
    invite = f"http%3A%2F%2F127.0.0.1%3A{web_server.port}%2Fr%2F{code}"
    expect(tv.locator(".tv-qr")).to_have_attribute("src", f"/api/qr.svg?text={invite}")
    expect(tv.locator(".tv-wait")).to_contain_text("Waiting for Ann")
    # the screen is a spectator, not a seat: the host's lobby lists it as watching
    expect(host.locator(".spectator-list .spectator")).to_have_count(1)
    expect(host.locator("#log")).to_contain_text("TV shows the table on a big screen")  # not "plays from…"
    add_bot(host, "easy")
    add_bot(host, "easy")
    expect(tv.locator(".tv-seat")).to_have_count(3)
    # each seat's badge: its name's letter on its own colour, a bot's square (as on the phones),
    # not "?" on one colour for all
    seats = tv.locator(".tv-seat").evaluate_all("""els => els.map((li) => {
      const a = li.querySelector('.avatar');
      return [li.querySelector('.tv-name').textContent, a.textContent, a.style.getPropertyValue('--hue'),
              a.classList.contains('is-bot')]; })""")
    assert [letter for name, letter, _, _ in seats] == [name[0].upper() for name, _, _, _ in seats], seats
    assert len({hue for _, _, hue, _ in seats}) == 3, seats
    assert [bot for *_, bot in seats] == [False, True, True], seats
    host.get_by_role("button", name="Start the game").click()
    expect(tv.locator(".tv-discard .card")).to_be_visible()
    expect(tv.locator(".tv-seat.turn")).to_have_count(1)
    play_until_over([host], limit_s=60)
    # it followed every version the host saw, and shows the winner
    host_version = host.evaluate("() => Number(document.body.dataset.version)")
    tv.wait_for_function("v => Number(document.body.dataset.version) === v", arg=host_version)
    expect(tv.locator(".tv-winner")).to_contain_text("wins the round")
    expect(tv.locator(".tv-latest li").last).to_contain_text("wins the round")
    tv.screenshot(path=str(artifacts / "tv-round-over.png"))
    assert violations(tv) == []  # the strict CSP (test_csp.py)
    # never a hand: no hand card on the page, none in any frame it received
    assert tv.locator(".hand-card").count() == 0
    welcomes = [f for f in frames if f["type"] == "welcome"]
    assert welcomes and all(f["state"]["hand"] == [] for f in welcomes)
    patches = [f for f in frames if f["type"] == "patch"]
    assert len(patches) >= 5
    for f in patches:
        for op in f["ops"]:
            assert not op["path"].startswith(("/hand", "/game/legal", "/game/drawn")), op
        for ev in f["events"]:
            assert "cards" not in ev or ev["kind"] in ("discarded", "roulette", "round_over"), ev
    # its token is its own: no player's seat is kept in the screen's browser
    stored = tv.evaluate("() => ['mercyless.rooms', 'mercyless.screens'].map((k) => localStorage.getItem(k))")
    assert stored[0] is None
    screen = json.loads(stored[1])[code]
    assert screen["token"] != made["token"] and screen["player_id"] != made["player_id"]
    assert screen["player_id"] in {s["id"] for s in welcomes[0]["state"]["room"]["spectators"]}


def test_the_tv_on_a_phone_and_the_show_on_tv_link(pages, web_server, artifacts):
    made = web_server.create("Ann", rules=QUICK)
    code = made["code"]
    host = pages.new()
    seat_browser(host, web_server, code, made)
    link = host.get_by_role("link", name="Show on TV")
    expect(link).to_have_attribute("href", f"/tv/{code}")
    add_bot(host, "easy")
    host.get_by_role("button", name="Start the game").click()
    tv = pages.new(phone=True, viewport={"width": 390, "height": 844})
    tv.goto(f"/tv/{code}")
    expect(tv.locator(".tv-discard .card")).to_be_visible()
    assert tv.evaluate("() => document.scrollingElement.scrollWidth <= window.innerWidth")
    tv.screenshot(path=str(artifacts / "tv-phone.png"))


def test_the_tv_keeps_the_nights_matches_won_past_the_match(pages, web_server, artifacts):
    """The TV's scores are the match's; beside them, the matches each player won tonight, from
    the night's record, still there once the next match starts."""
    made = web_server.create("Ann", rules={**QUICK, "target_score": 100})
    code = made["code"]
    host = pages.new()
    seat_browser(host, web_server, code, made)
    tv = pages.new(viewport={"width": 1280, "height": 800})
    tv.goto(f"/tv/{code}")
    add_bot(host, "easy")
    host.get_by_role("button", name="Start the game").click()
    expect(tv.locator(".tv-discard .card")).to_be_visible()
    play_a_match(host)
    winner = tv.locator(".tv-scores li.win")
    expect(winner).to_have_count(1)
    expect(winner.locator(".tv-won")).to_have_text("★ 1")
    expect(tv.locator(".tv-won")).to_have_count(1)
    expect(tv.locator(".tv-legend")).to_have_text("★ matches won tonight")
    expect(tv.locator(".tv-turn")).to_have_text("Match over")  # as the middle says, not "Round over"
    won_by = winner.get_attribute("data-player")
    host.get_by_role("button", name="New match").click()
    host.wait_for_function("() => document.body.dataset.status === 'playing'")
    tv.wait_for_function("() => document.body.dataset.status === 'playing'")
    tv.reload()  # and from the record alone, as a screen that comes back
    expect(tv.locator(f'.tv-scores li[data-player="{won_by}"] .tv-won')).to_have_text("★ 1")
    tv.screenshot(path=str(artifacts / "tv-night.png"))


LONG_LINE = """() => {
  const face = document.querySelector('.tv-latest .log-cards .card');
  const li = document.createElement('li');
  li.className = 'bad';
  const cards = document.createElement('span');
  cards.className = 'log-cards';
  for (let i = 0; i < 12; i++) cards.append(face.cloneNode(true));
  const text = document.createElement('span');
  text.className = 'log-text';
  text.textContent = 'Roulette: Pip dug for Red and got 12: Wild Draw 6, Blue 3, Blue Skip Everyone, '
    + 'Green Discard All, Green 3, Wild Colour Roulette, Green 9, Wild Draw 4, Yellow 2, Blue 4, Red 1.';
  li.append(cards, text);
  for (let i = 0; i < 3; i++) document.querySelector('.tv-latest').append(li.cloneNode(true));
  const box = (el) => { const r = el.getBoundingClientRect();
    return {top: r.top, bottom: r.bottom, width: r.width}; };
  const at = (sel) => box(document.querySelector(sel).closest('.tv-box, .tv-join'));
  const lines = [...document.querySelectorAll('.tv-latest li')];
  return {latest: at('.tv-latest'), scores: at('.tv-scores'),
          join: at('.tv-join'), text: box(lines.at(-1).querySelector('.log-text')), last: box(lines.at(-1))};
}"""


def test_a_roulettes_long_line_stays_in_the_tvs_latest_box(pages, web_server, artifacts):
    """A roulette that turned up a dozen cards wrapped its words into a column one word wide, which
    ran down over the scores and the QR code: the line now takes the box's width under its cards,
    and the box gives up its oldest lines rather than its neighbours' room."""
    made = web_server.create("Ann", rules={"turn_timer_s": 0})
    web_server.join(made["code"], "Bob")
    ann = SocketPlayer(web_server, made["code"], made["token"])
    assert ann.send({"type": "start"})["type"] == "ack"
    tv = pages.new(viewport={"width": 1920, "height": 1080})
    tv.goto(f"/tv/{made['code']}")
    expect(tv.locator(".tv-latest .log-cards .card").first).to_be_visible()
    got = tv.evaluate(LONG_LINE)
    tv.screenshot(path=str(artifacts / "tv-long-roulette-line.png"))
    ann.close()
    assert got["latest"]["bottom"] <= got["scores"]["top"], got
    assert got["scores"]["bottom"] <= got["join"]["top"], got
    assert got["text"]["width"] >= got["last"]["width"] * 0.6, got   # not a column one word wide
    assert got["last"]["bottom"] <= got["latest"]["bottom"] + 0.5, got  # the newest line shows


HEADS_JS = """() => {
  const box = (el) => { const r = el.getBoundingClientRect();
    return {left: r.left, top: r.top, right: r.right, bottom: r.bottom}; };
  return {heads: [...document.querySelectorAll('.tv-arrows .ring-heads path')].map(box),
          seats: [...document.querySelectorAll('.tv-seat')].map(box)};
}"""


def test_no_arrowhead_of_the_direction_of_play_hides_behind_a_seat(pages, web_server, artifacts):
    """Four seats sit at the very angles the four arrowheads were drawn at: each head poked out
    from behind a seat. The heads now go where no seat covers them."""
    made = web_server.create("Ann", rules=QUICK)
    for name in ("Bob", "Cy", "Dee"):
        web_server.join(made["code"], name)
    host = pages.new()
    seat_browser(host, web_server, made["code"], made)
    tv = pages.new(viewport={"width": 1280, "height": 800})
    tv.goto(f"/tv/{made['code']}")
    expect(tv.locator(".tv-seat")).to_have_count(4)
    host.get_by_role("button", name="Start the game").click()
    expect(tv.locator(".tv-discard .card")).to_be_visible()
    tv.evaluate("() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))")
    tv.screenshot(path=str(artifacts / "tv-four-seats.png"))
    got = tv.evaluate(HEADS_JS)
    assert len(got["heads"]) >= 2, got
    for head in got["heads"]:
        for seat in got["seats"]:
            clear = min(head["right"], seat["right"]) <= max(head["left"], seat["left"]) \
                or min(head["bottom"], seat["bottom"]) <= max(head["top"], seat["top"])
            assert clear, (head, seat)


def test_a_screen_the_host_removed_stays_out_and_other_screens_come_in(pages, web_server):
    """A screen is barred by its own token: the removed one keeps asking and is refused (it
    names the token it held), while another screen at the same address, called "TV" too, joins."""
    made = web_server.create("Ann", rules=QUICK)
    code = made["code"]
    host = SocketPlayer(web_server, code, made["token"])
    try:
        tv = pages.new(viewport={"width": 1280, "height": 800})
        tv.goto(f"/tv/{code}")
        expect(tv.locator(".tv-code")).to_have_text(code)
        screen = next(s for s in host.fresh()["room"]["spectators"])
        assert host.send({"type": "remove_seat", "player_id": screen["id"]})["type"] == "ack"
        expect(tv.locator("#tv-status")).to_contain_text("removed", timeout=10_000)
        assert host.fresh()["room"]["spectators"] == []
        other = pages.new(viewport={"width": 1280, "height": 800})
        other.goto(f"/tv/{code}")
        expect(other.locator(".tv-code")).to_have_text(code)
        names = [s["name"] for s in host.fresh()["room"]["spectators"]]
        assert names == ["TV"], names
        tv.reload()  # the removed screen, reloaded, still names its token and stays out
        expect(tv.locator("#tv-status")).to_contain_text("removed", timeout=10_000)
        assert [s["name"] for s in host.fresh()["room"]["spectators"]] == ["TV"]
    finally:
        host.close()
