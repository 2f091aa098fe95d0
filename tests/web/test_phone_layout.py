"""What a game night showed on phones, a desktop and the big screen (issue #44): a phone on its side
shows the pile, the hand and the turn in one screen; names of eight letters and the room's code
show whole at 360 px in Dutch; a guest reads which rule the host changed, is spared the host's
warning and a QR code filling the first screen; a reaction leaves its sender's name readable; the
big screen's latest events are whole lines."""

from __future__ import annotations

from playwright.sync_api import expect

from .test_flows import seat_browser
from .test_motion import SocketPlayer

LANDSCAPE = {"width": 844, "height": 390}
PHONE = {"width": 390, "height": 844}
NARROW = {"width": 360, "height": 740}

FRAMES = "() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))"

# each part's box, and whether the element drawn at its centre is the part (nothing covers it)
ONE_SCREEN_JS = """() => {
  const part = (el) => { const r = el.getBoundingClientRect();
    const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
    return {top: r.top, bottom: r.bottom, left: r.left, right: r.right, shown: !!hit && el.contains(hit)}; };
  const cards = [...document.querySelectorAll('.hand .hand-card')];
  const firstRow = cards.filter((c) => Math.abs(c.offsetTop - cards[0].offsetTop) < 2);
  return {bar: document.querySelector('.topbar').getBoundingClientRect().bottom,
          vw: document.documentElement.clientWidth, vh: document.documentElement.clientHeight, y: scrollY,
          pile: part(document.querySelector('.pile-draw')), discard: part(document.querySelector('.discard')),
          draw: part(document.querySelector('button[data-key=draw]')),
          turn: part(document.querySelector('.turnline .turn-text')), row: firstRow.map(part)};
}"""


def test_a_phone_on_its_side_shows_the_pile_the_hand_and_the_turn_in_one_screen(pages, web_server, artifacts):
    """At 844x390 the deal left the hand below the fold, and "Your turn" showed the hand's top row
    alone or, with the hand in view, the pile and the seats under the sticky top bar."""
    made = web_server.create("Ann", rules={"turn_timer_s": 0})
    for name in ("Bob", "Cy", "Dee", "Eve", "Fay"):
        web_server.join(made["code"], name)
    page = pages.new(phone=True, viewport=LANDSCAPE)
    seat_browser(page, web_server, made["code"], made)
    page.get_by_role("button", name="Start the game").click()
    expect(page.locator(".table")).to_have_attribute("data-turn", "me")
    expect(page.locator("button[data-key=draw]")).to_be_visible()
    page.evaluate(FRAMES)  # the turn's scroll, if any, is asked for on the next frame
    page.evaluate(FRAMES)
    got = page.evaluate(ONE_SCREEN_JS)
    page.screenshot(path=str(artifacts / "table-landscape-phone.png"))
    assert got["y"] == 0, got  # all of it in the first screen: nothing scrolled to
    for what in ("pile", "discard", "draw", "turn"):
        box = got[what]
        assert got["bar"] <= box["top"] and box["bottom"] <= got["vh"], (what, got)
        assert box["left"] >= 0 and box["right"] <= got["vw"], (what, got)
        assert box["shown"], (what, got)  # not under the top bar, nor under anything else
    assert got["row"], got
    for card in got["row"]:
        assert got["bar"] <= card["top"] and card["bottom"] <= got["vh"], got
        assert card["left"] >= 0 and card["right"] <= got["vw"] and card["shown"], got
    # a touch screen has no keys to press
    expect(page.locator(".keys-hint")).to_be_hidden()


NAMES_JS = """() => {
  // a name's words are spans of their own, each cut with an ellipsis where it does not fit
  const cut = (el) => [el, ...el.querySelectorAll('*')].some((e) => e.scrollWidth > e.clientWidth + 0.5);
  return [...document.querySelectorAll('.opp-name, .seat-name')].filter((el) => el.offsetParent)
    .map((el) => ({name: el.textContent, cut: cut(el)}));
}"""

CHIP_JS = """() => {
  const box = (sel) => { const r = document.querySelector(sel).getBoundingClientRect();
    return {left: r.left, right: r.right, top: r.top, bottom: r.bottom}; };
  return {chip: box('.room-chip'), code: box('.room-code'), help: box('.topbar .howto-btn'),
          docWidth: document.scrollingElement.scrollWidth, vw: innerWidth};
}"""


def _whole_names(page) -> None:
    names = page.evaluate(NAMES_JS)
    assert names and not [n for n in names if n["cut"]], names


def _code_in_its_chip(page) -> None:
    got = page.evaluate(CHIP_JS)
    chip, code, help_btn = got["chip"], got["code"], got["help"]
    assert chip["left"] <= code["left"] and code["right"] <= chip["right"] + 0.5, got
    assert chip["top"] <= code["top"] and code["bottom"] <= chip["bottom"] + 0.5, got
    assert chip["right"] <= help_btn["left"], got  # not under the "?" button
    assert got["docWidth"] <= got["vw"], got


def test_names_of_eight_letters_and_the_code_show_whole_at_360_px_in_dutch(pages, web_server, artifacts):
    """At 360 px a human's name beside bots read "Jero…" and "San…" on the table, a bot's "M…" in
    the host's lobby after a round, and in Dutch the room's code ran out of its chip under "?"."""
    # every card a five: the first play ends the round (one card each)
    made = web_server.create("Noor", rules={"turn_timer_s": 0, "hand_size": 1,
                                            "deck": {"r-5": 60, "y-5": 1, "g-5": 1, "b-5": 1}})
    for name in ("Jeroen", "Sanne", "Marieke", "Karolien"):
        web_server.join(made["code"], name)
    page = pages.new(phone=True, viewport=NARROW, locale="nl-NL")
    seat_browser(page, web_server, made["code"], made)
    for seats in (6, 7):
        page.get_by_role("button", name="Bot toevoegen").click()
        page.wait_for_function("n => document.querySelectorAll('.seatlist .seat').length === n", arg=seats)
    _code_in_its_chip(page)
    page.get_by_role("button", name="Spel starten").click()
    expect(page.locator(".opponents .opp")).to_have_count(6)
    page.evaluate(FRAMES)
    page.screenshot(path=str(artifacts / "names-360-nl-table.png"))
    _whole_names(page)
    _code_in_its_chip(page)
    # Noor leads: her five ends the round; then the lobby with the scores and the bots' pickers
    page.locator(".hand-card.playable").first.click()
    page.get_by_role("button", name="Terug naar de lobby").click()
    expect(page.locator(".seatlist .badge-score").first).to_be_visible()
    page.locator(".seatlist").scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts / "names-360-nl-lobby.png"))
    _whole_names(page)


def test_a_guest_reads_the_rule_changed_and_gets_no_host_warning_nor_a_big_qr(pages, web_server, artifacts):
    """A guest read "The host changed the rules ×2" and not what changed; the warning to start the
    server with --host 0.0.0.0 (the host's to act on) and a QR code filled a guest's first screen."""
    made = web_server.create("Ann", rules={"turn_timer_s": 0})
    bob = web_server.join(made["code"], "Bob")
    cy = web_server.join(made["code"], "Cy")
    host = pages.new(phone=True, viewport=PHONE)
    seat_browser(host, web_server, made["code"], made)
    guest = pages.new(phone=True, viewport=PHONE)
    seat_browser(guest, web_server, made["code"], bob)
    desk = pages.new(viewport={"width": 1440, "height": 900})
    seat_browser(desk, web_server, made["code"], cy)
    # the test server listens on this computer only: the host is told, with the QR code shown
    expect(host.locator(".invite-local")).to_be_visible()
    expect(host.locator(".invite-qr .qr")).to_be_visible()
    expect(desk.locator(".invite-qr .qr")).to_be_visible()      # a guest's desktop keeps it open
    expect(desk.locator(".invite-local")).to_be_hidden()
    fold = guest.locator(".qr-fold")
    expect(fold).to_be_visible()
    expect(guest.locator(".invite-qr")).to_be_hidden()          # folded on a guest's phone
    expect(guest.locator(".invite-local")).to_be_hidden()
    guest.screenshot(path=str(artifacts / "lobby-guest-phone.png"))
    fold.locator("summary").click()
    expect(guest.locator(".invite-qr .qr")).to_be_visible()     # one tap opens it
    # the host changes one rule, then a preset changes several
    host.get_by_label("Hand size").fill("5")
    host.get_by_label("Hand size").press("Enter")
    log = guest.locator("#log li")
    expect(log.last).to_have_text("Ann changed Hand size from 7 to 5 cards")
    host.locator("button[data-key='preset:printed']").click()
    expect(log.last).to_contain_text("Ann changed the rules: ")
    expect(log.last).to_contain_text("Hand size 5 → 7 cards")
    expect(log.last).to_contain_text("Drawing “Draw any time, keep playing” → ")
    guest.locator("#logdetails summary").click()
    log.last.scroll_into_view_if_needed()
    guest.screenshot(path=str(artifacts / "rules-changed-guest-phone.png"))


LATEST_JS = """async () => {
  const m = await import('/js/tv-view.js');
  const cards = ['b-1', 'g-2', 'y-3', 'b-4', 'g-5', 'y-6', 'b-7', 'g-8', 'y-9', 'b-1', 'g-2', 'r-5'];
  const first = m.tvView();
  m.tvEvents([], first.players.concat(first.players, first.players).slice(0, 7)
    .map((p) => ({kind: 'roulette', player: p.id, color: 'red', cards})), first);
  // the box is drawn here, then read two frames later, once the page has fitted it; when the
  // page draws the box again in between (a patch: a closed socket's player dropped, the TV's own
  // arrival; the night's record coming back), it fits the new lines in a frame callback that runs
  // after the reading's, so the box is drawn and read again, until a reading nothing drew it before.
  // A redraw may put a new box in the old one's place (the side rebuilt), so the whole page is
  // watched for lines or a box that came, not the box that was there
  const latestCame = (record) => record.target.closest?.('.tv-latest')
    || [...record.addedNodes].some((node) => node.nodeType === 1
      && (node.matches('.tv-latest') || node.querySelector('.tv-latest')));
  let tries = 0;
  for (; ; tries++) {
    m.renderTv(m.tvView());
    const drawn = new MutationObserver(() => {});
    drawn.observe(document.body, {childList: true, subtree: true});
    await new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)));
    const again = drawn.takeRecords().some(latestCame);
    drawn.disconnect();
    if (!again || tries === 10) break;
  }
  const list = document.querySelector('.tv-latest').getBoundingClientRect();
  const lines = [...document.querySelectorAll('.tv-latest li')].filter((li) => !li.hidden)
    .map((li) => li.getBoundingClientRect());
  // what a failure needs: how many drawings it took, the side column's parts, the lines in all
  const side = [...document.querySelectorAll('.tv-side > *')].map((el) =>
    [el.className, Math.round(el.getBoundingClientRect().height), el.hidden]);
  return {list: [list.top, list.bottom], lines: lines.map((r) => [r.top, r.bottom]),
          context: {tries, side,
                    all: document.querySelectorAll('.tv-latest li').length}};
}"""


def test_a_reaction_leaves_the_name_readable_and_the_tv_shows_whole_lines(pages, web_server, artifacts):
    """On a desktop a reaction's bubble sat over the top of its sender's seat, on the name; the big
    screen's "Latest" box kept its newest lines at its foot and cut the top one in half."""
    made = web_server.create("Ann", rules={"turn_timer_s": 0})
    for name in ("Cy", "Dee"):
        web_server.join(made["code"], name)
    roberta = web_server.join(made["code"], "Roberta")
    page = pages.new(viewport={"width": 1440, "height": 900})
    seat_browser(page, web_server, made["code"], made)
    page.get_by_role("button", name="Start the game").click()
    page.wait_for_selector(".hand .hand-card")
    sender = SocketPlayer(web_server, made["code"], roberta["token"])
    try:
        assert sender.send({"type": "react", "reaction": "thumbs_up"})["type"] == "ack"
    finally:
        sender.close()
    chip = page.locator(f".opp[data-player='{roberta['player_id']}']")
    bubble = chip.locator(".bubble")
    expect(bubble).to_be_visible()
    name, said = chip.locator(".opp-name").bounding_box(), bubble.bounding_box()
    page.screenshot(path=str(artifacts / "reaction-desktop.png"))
    apart = (said["y"] >= name["y"] + name["height"] or said["y"] + said["height"] <= name["y"]
             or said["x"] >= name["x"] + name["width"] or said["x"] + said["width"] <= name["x"])
    assert apart, (said, name)

    tv = pages.new(viewport={"width": 1920, "height": 1080})
    tv.goto(f"/tv/{made['code']}")
    expect(tv.locator(".tv-latest li").first).to_be_visible()
    got = tv.evaluate(LATEST_JS)
    tv.screenshot(path=str(artifacts / "tv-latest-whole-lines.png"))
    top, bottom = got["list"]
    assert got["lines"], got
    for line_top, line_bottom in got["lines"]:
        assert top - 0.5 <= line_top and line_bottom <= bottom + 0.5, got
