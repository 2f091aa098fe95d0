"""Seats around the table: the opponents sit in seat order from the player's point of view (on a
wide screen a ring from their left over the top to their right, the piles in the middle; on a phone
one row across the top, the others beside the piles), with the direction of play drawn as arrows
that flip on a reverse.
Measured for 2, 4, 6 and 10 seats on a phone and a desktop: no seat, pile or hand lies over
another, and nothing is outside the window's width (nor, on a desktop, its height)."""

from __future__ import annotations

import itertools

import pytest
from playwright.sync_api import expect

from .test_flows import seat_browser
from .test_motion import SocketPlayer

DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}
NAMES = ("Bob", "Cy", "Dee", "Eve", "Fay", "Gus", "Hal", "Ivy", "Jo")

BOXES_JS = """() => {
  const box = (el) => { const r = el.getBoundingClientRect();
    return {left: r.left, top: r.top + scrollY, right: r.right, bottom: r.bottom + scrollY}; };
  const center = document.querySelector('.center .piles');
  const c = center.getBoundingClientRect();
  return {
    seats: [...document.querySelectorAll('.opponents .opp')].map((li) => {
      const r = li.getBoundingClientRect();
      const dy = r.top + r.height / 2 - (c.top + c.height / 2);
      const dx = r.left + r.width / 2 - (c.left + c.width / 2);
      return {id: li.dataset.player, ...box(li), angle: Math.atan2(dy, dx) * 180 / Math.PI};
    }),
    piles: box(center), hand: box(document.querySelector('.hand')),
    signs: [...document.querySelectorAll('.center .tableinfo > *')].map(box),
    heads: [...document.querySelectorAll('.ring-dir .ring-heads path')].map(box),
    vw: document.documentElement.clientWidth, vh: innerHeight,
    docWidth: document.scrollingElement.scrollWidth,
    arrows: document.querySelector('.ring-dir .ring-arrows')?.dataset.direction ?? null,
  };
}"""


def overlap(a: dict, b: dict) -> bool:
    return min(a["right"], b["right"]) - max(a["left"], b["left"]) > 0.5 \
        and min(a["bottom"], b["bottom"]) - max(a["top"], b["top"]) > 0.5


def table_of(pages, web_server, viewport, seats: int):
    made = web_server.create("Ann", rules={"turn_timer_s": 0})
    ids = [web_server.join(made["code"], name)["player_id"] for name in NAMES[:seats - 1]]
    page = pages.new(viewport=viewport, phone=viewport is PHONE)
    seat_browser(page, web_server, made["code"], made)
    page.get_by_role("button", name="Start the game").click()
    expect(page.locator(".opponents .opp")).to_have_count(seats - 1)
    page.wait_for_selector(".hand .hand-card")
    return page, ids


@pytest.mark.parametrize("seats", [2, 4, 6, 10])
@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_the_seats_sit_around_the_table_in_seat_order_and_overlap_nothing(pages, web_server, artifacts,
                                                                           viewport, seats):
    page, ids = table_of(pages, web_server, viewport, seats)
    page.evaluate("() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))")
    got = page.evaluate(BOXES_JS)
    name = f"ring-{seats}-{'phone' if viewport is PHONE else 'desktop'}"
    page.screenshot(path=str(artifacts / f"{name}.png"))
    # in seat order from Ann's left (the seat after hers plays next, clockwise)
    assert [s["id"] for s in got["seats"]] != [] and sorted(s["id"] for s in got["seats"]) == sorted(ids)
    order = {pid: i for i, pid in enumerate(ids)}
    by_seat = sorted(got["seats"], key=lambda s: order[s["id"]])
    boxes = [*by_seat, got["piles"], got["hand"]]
    for a, b in itertools.combinations(boxes, 2):
        assert not overlap(a, b), (name, a, b)
    for b in boxes:
        assert b["left"] >= 0 and b["right"] <= got["vw"], (name, b)
    assert got["docWidth"] <= got["vw"], name
    if viewport is DESKTOP:
        assert all(b["bottom"] <= got["vh"] for b in boxes), (name, got)
    # clockwise as seen from above: from the left, over the top, to the right (on a phone too: one
    # row across the top, the others up the left and down the right of the piles; rows read left
    # to right once sent play from the top row's right end to the next row's left)
    angles = [a if a > 90 else a + 360 for a in (s["angle"] % 360 for s in by_seat)]
    assert angles == sorted(angles), (name, angles)
    assert all(90 < a < 450 for a in angles)
    assert got["arrows"] == "1"  # the direction of play, clockwise at the deal
    # its arrowheads show where nothing hides them: half a head poking out from behind a seat (the
    # lower two at 6 and 10 seats) read as a glitch; a table with room shows at least two
    for head in got["heads"]:
        for b in [*by_seat, got["piles"], *got["signs"]]:
            assert not overlap(head, b), (name, head, b)
    if seats <= 4:
        assert len(got["heads"]) >= 2, (name, got["heads"])


def test_the_arrows_flip_on_a_reverse_and_the_stack_target_is_marked(pages, web_server):
    # red Reverses and Draw 2s on red fives (the only numbers: the first card is one of them)
    deck = {"r-reverse": 60, "r-5": 6, "y-reverse": 1, "g-reverse": 1, "b-reverse": 1, "r-draw2": 30}
    made = web_server.create("Ann", rules={"turn_timer_s": 0, "hand_size": 6, "deck": deck})
    bob = web_server.join(made["code"], "Bob")
    web_server.join(made["code"], "Cy")
    page = pages.new(viewport=DESKTOP)
    seat_browser(page, web_server, made["code"], made)
    page.get_by_role("button", name="Start the game").click()
    expect(page.locator(".table")).to_have_attribute("data-turn", "me")
    arrows = page.locator(".ring-dir .ring-arrows")
    expect(arrows).to_have_attribute("data-direction", "1")
    expect(page.locator(".opp .badge-dealer")).to_have_count(1)  # the dealer: the last seat
    card = page.locator(".hand-card.playable[data-card='r-reverse']")
    if card.count():
        card.first.click()
        expect(arrows).to_have_attribute("data-direction", "-1")
    else:  # no Reverse dealt to Ann: a Draw 2 aims a stack at the next seat instead
        page.locator(".hand-card.playable[data-card='r-draw2']").first.click()
        expect(page.locator(f".opp.target[data-player='{bob['player_id']}']")).to_have_count(1)


@pytest.mark.parametrize("viewport", [{"width": 844, "height": 390}, {"width": 768, "height": 1024},
                                      {"width": 980, "height": 700}, {"width": 601, "height": 900}],
                         ids=["phone-landscape", "tablet", "980", "601"])
def test_no_width_between_phone_and_desktop_scrolls_sideways(pages, web_server, viewport):
    """The oval's arrows stayed inside the ring at 390 and 1280 px but reached past the window's
    right edge at every width from 600 to 980 px (a landscape phone, a tablet)."""
    page, _ = table_of(pages, web_server, viewport, 6)
    page.evaluate("() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))")
    got = page.evaluate(BOXES_JS)
    assert got["docWidth"] <= got["vw"], (viewport, got["docWidth"], got["vw"])
    for b in [*got["seats"], got["piles"], got["hand"]]:
        assert b["left"] >= 0 and b["right"] <= got["vw"], (viewport, b)


SHOWN_JS = """() => {
  const bar = document.querySelector('.topbar').getBoundingClientRect().bottom;
  const r = (sel) => document.querySelector(sel).getBoundingClientRect();
  const piles = r('.center .piles'), hand = r('.hand'), card = r('.hand .hand-card');
  return {bar, h: document.documentElement.clientHeight, y: scrollY,
          piles: [piles.top, piles.bottom], hand: [hand.top, hand.bottom], card: [card.top, card.bottom]};
}"""


@pytest.mark.parametrize(("viewport", "seats"), [(PHONE, 10), ({"width": 844, "height": 390}, 6),
                                               ({"width": 844, "height": 390}, 10)],
                         ids=["phone-10", "phone-landscape-6", "phone-landscape-10"])
def test_the_turn_scrolls_to_the_hand_and_keeps_the_pile_clear_of_the_top_bar(pages, web_server, artifacts,
                                                                             viewport, seats):
    """The page scrolled the player's box to the screen's end: ten seats on a phone put the rows
    above under the sticky top bar, and a phone on its side showed the hand without the pile."""
    page, _ = table_of(pages, web_server, viewport, seats)
    expect(page.locator(".table")).to_have_attribute("data-turn", "me")
    page.wait_for_function("""() => new Promise((done) => { let y = -1;
      const still = () => (y === scrollY ? done(true) : (y = scrollY, setTimeout(still, 150)));
      still(); })""")
    got = page.evaluate(SHOWN_JS)
    page.screenshot(path=str(artifacts / f"turn-scroll-{seats}-{viewport['width']}.png"))
    assert got["bar"] <= got["card"][0] and got["card"][1] <= got["h"], got     # a hand card shows
    if seats < 10 or viewport is PHONE:  # (ten seats on a phone on its side: no room for both)
        assert got["bar"] <= got["piles"][0] and got["piles"][1] <= got["h"], got   # the pile shows
    if viewport is PHONE:
        assert got["hand"][1] <= got["h"], got                                  # the whole hand


def test_the_dealer_is_marked_on_a_phone_and_on_the_players_own_seat(pages, web_server):
    """The dealer's badge was hidden with the other badges on a phone (a chip has no room for the
    word beside the bot's level), and the player's own seat never showed it."""
    made = web_server.create("Bob", rules={"turn_timer_s": 0})
    ann = web_server.join(made["code"], "Ann")  # the last seat: the first round's dealer
    page = pages.new(phone=True, viewport=PHONE)
    seat_browser(page, web_server, made["code"], ann)
    bob = SocketPlayer(web_server, made["code"], made["token"])
    assert bob.send({"type": "start"})["type"] == "ack"
    expect(page.locator(".mine .badge-dealer")).to_be_visible()
    expect(page.locator(".opp .badge-dealer")).to_have_count(0)
    bob.close()

    made = web_server.create("Ann", rules={"turn_timer_s": 0})
    for name in NAMES[:3]:
        web_server.join(made["code"], name)
    page = pages.new(phone=True, viewport=PHONE)
    seat_browser(page, web_server, made["code"], made)
    page.get_by_role("button", name="Start the game").click()
    # on a phone's narrow chip, a disc with the word's initial on the dealer's avatar
    dealer = page.locator(".opp .avatar[data-dealer]")
    expect(dealer).to_have_count(1)
    expect(dealer).to_have_attribute("data-dealer", "D")
    assert dealer.evaluate("(el) => getComputedStyle(el, '::after').display") == "grid"
    expect(page.locator(".mine .badge-dealer")).to_have_count(0)


@pytest.mark.parametrize("seats", [6, 10])
def test_a_roulettes_strip_on_a_phone_keeps_to_the_piles_column(pages, web_server, artifacts, seats):
    """With seats beside the piles the strip spanned the table's width at the piles' height and
    hid the side seats' names and counts (often the player receiving the cards)."""
    page, _ = table_of(pages, web_server, PHONE, seats)
    page.evaluate("""async () => {
      const m = await import('/js/table/effects.js');
      m.applyFx({roulette: {player: 'x', color: 'red',
        cards: ['b-1', 'g-2', 'y-3', 'b-4', 'g-5', 'y-6', 'b-7', 'g-8', 'y-9', 'b-1', 'g-2', 'r-5']}});
    }""")
    expect(page.locator(".table .reveal")).to_be_visible()
    got = page.evaluate("""() => { const box = (el) => { const r = el.getBoundingClientRect();
        return {left: r.left, top: r.top, right: r.right, bottom: r.bottom}; };
      return {reveal: box(document.querySelector('.reveal')),
              seats: [...document.querySelectorAll('.opponents .opp')].map(box)}; }""")
    page.screenshot(path=str(artifacts / f"roulette-strip-phone-{seats}.png"))
    for seat in got["seats"]:
        assert not overlap(got["reveal"], seat), (got["reveal"], seat)


def test_the_table_opens_at_its_top_after_the_lobby(pages, web_server):
    """Start sits at the lobby's foot: the table kept the lobby's scroll, and at 360x780 with seven
    seats the top row stayed under the sticky bar while another player had the turn."""
    made = web_server.create("Bob", rules={"turn_timer_s": 0})
    names = ["Ann", *NAMES[1:6]]
    seats = [web_server.join(made["code"], name) for name in names]
    page = pages.new(phone=True, viewport={"width": 360, "height": 780})
    seat_browser(page, web_server, made["code"], seats[0])  # Ann, the second seat: Bob plays first
    expect(page.locator(".seatlist .seat")).to_have_count(7)
    page.evaluate("() => scrollTo(0, document.scrollingElement.scrollHeight)")
    page.wait_for_function("() => scrollY > 0")
    bob = SocketPlayer(web_server, made["code"], made["token"])
    assert bob.send({"type": "start"})["type"] == "ack"
    expect(page.locator(".table")).to_be_visible()
    expect(page.locator(".table")).not_to_have_attribute("data-turn", "me")
    page.wait_for_function("() => scrollY === 0")
    bob.close()


CHIPS_JS = """() => Object.fromEntries([...document.querySelectorAll('.opponents .opp')].map((li) => {
  const box = (r) => ({left: r.left, top: r.top, right: r.right, bottom: r.bottom});
  const name = li.querySelector('.opp-name');
  const av = li.querySelector('.avatar');
  const a = av.getBoundingClientRect();
  const after = getComputedStyle(av, '::after');
  const disc = av.dataset.dealer === undefined ? null : box(new DOMRect(a.left + parseFloat(after.left),
    a.top + parseFloat(after.top), parseFloat(after.width), parseFloat(after.height)));
  const line = parseFloat(getComputedStyle(name).lineHeight);
  const words = [...name.querySelectorAll('.w')].map((w) => w.getBoundingClientRect())
    .map((r) => ({top: r.top, lines: Math.round(r.height / line)}));
  const badges = [...li.querySelectorAll('.badges .badge')].map((b) => box(b.getBoundingClientRect()))
    .filter((b) => b.right > b.left + 1);
  return [name.textContent, {height: li.getBoundingClientRect().height, bot: !!li.querySelector('.badge-bot'),
    words, lines: Math.round(name.getBoundingClientRect().height / line), disc,
    name: box(name.getBoundingClientRect()), badges}];
}))"""

TWO_WORDS = "Alexandria Montgomery"


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_every_seat_is_as_tall_as_a_bot_seat_and_a_long_name_takes_two_lines(pages, web_server, artifacts,
                                                                             viewport):
    """A bot's chip carries its level on a second line, a human's had none: a human's chip was
    shorter than the bot's beside it (phone and desktop), and a long name was cut to a few letters
    ("Barth…") though the line below it stood empty. Then, reported from a friends' night: a long
    name broke inside a word ("Alexa / ndri…"), the dealer's chip stood taller on a desktop (its
    "Dealer" badge took a second badge line), and on a phone the dealer's disc covered the start of
    the name and of the level badge."""
    made = web_server.create("Ann", rules={"turn_timer_s": 0})
    for name in (TWO_WORDS, "Cy"):
        web_server.join(made["code"], name)
    page = pages.new(viewport=viewport, phone=viewport is PHONE)
    seat_browser(page, web_server, made["code"], made)
    for level in ("hard", "easy"):  # the last seat deals: a bot, with its level badge
        page.select_option("#bot-level", level)
        page.click("button[data-key=addbot]")
    expect(page.locator(".seatlist .seat")).to_have_count(5)
    page.click("button[data-key=start]")
    page.wait_for_selector(".table .hand-card")
    page.screenshot(path=str(artifacts / f"ring-names-{'phone' if viewport is PHONE else 'desktop'}.png"))
    chips = page.evaluate(CHIPS_JS)
    heights = {name: round(c["height"]) for name, c in chips.items()}
    assert max(heights.values()) - min(heights.values()) <= 1, heights
    long = chips[TWO_WORDS]
    assert long["lines"] == 2 and chips["Cy"]["lines"] == 1, chips
    # a word to a line, none broken inside
    assert [w["lines"] for w in long["words"]] == [1, 1], long
    assert long["words"][0]["top"] < long["words"][1]["top"], long
    dealer = [c for c in chips.values() if c["disc"]]
    assert len(dealer) == 1 and dealer[0]["bot"], chips
    for b in [dealer[0]["name"], *dealer[0]["badges"]]:
        assert not overlap(dealer[0]["disc"], b), (dealer[0]["disc"], b)
