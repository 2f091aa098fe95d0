"""Layout checks measured in the page: rule choices read in full, a big hand stays in view."""

from __future__ import annotations

import json
import re

import pytest
from playwright.sync_api import expect

from .test_flows import seat_browser

DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}

# The width a <select>'s chosen text needs on one line, and the room its content box has.
SELECT_TEXT_FIT_JS = """
  const selectTextFit = (sel, label) => {
    const cs = getComputedStyle(sel);
    const probe = document.createElement('span');
    probe.style.cssText = 'position:absolute;visibility:hidden;white-space:pre';
    probe.style.font = cs.font;
    probe.style.letterSpacing = cs.letterSpacing;
    probe.textContent = label;
    document.body.append(probe);
    const need = probe.getBoundingClientRect().width;
    probe.remove();
    return {need, room: sel.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight)};
  };
"""

# Every rule <select> in the lobby: is the chosen option's whole text on screen? A select draws its
# text on one line and cuts what does not fit, so a visible select must hold the text in its content
# box; a transparent select must lie over an element that shows exactly that text, unclipped.
RULE_CHOICES_JS = """() => {""" + SELECT_TEXT_FIT_JS + """
  const problems = [];
  const vw = document.documentElement.clientWidth;
  for (const sel of document.querySelectorAll('.rulegrid select')) {
    const label = sel.selectedOptions[0] ? sel.selectedOptions[0].text : '';
    const cs = getComputedStyle(sel);
    let box;
    if (Number(cs.opacity) > 0.05) {
      const {need, room} = selectTextFit(sel, label);
      if (need > room + 0.5) {
        problems.push(`${sel.id}: "${label}" needs ${need.toFixed(0)}px, has ${room.toFixed(0)}px`);
      }
      box = sel.getBoundingClientRect();
    } else {
      const shown = [...sel.parentElement.children].find((el) => el !== sel
        && Number(getComputedStyle(el).opacity) > 0.05 && el.textContent.trim());
      if (!shown || shown.textContent.trim() !== label.trim()) {
        problems.push(`${sel.id}: shows "${shown ? shown.textContent : ''}" for "${label}"`);
        continue;
      }
      if (shown.scrollWidth > shown.clientWidth + 1 || shown.scrollHeight > shown.clientHeight + 1) {
        problems.push(`${sel.id}: "${label}" is clipped`);
      }
      box = shown.getBoundingClientRect();
      const s = sel.getBoundingClientRect();  // a click or tap on the text must reach the select
      if (s.left > box.left + 1 || s.right < box.right - 1
          || s.top > box.top + 1 || s.bottom < box.bottom - 1) {
        problems.push(`${sel.id}: the select does not cover its text`);
      }
    }
    if (box.left < 0 || box.right > vw) problems.push(`${sel.id}: outside the viewport`);
  }
  return problems;
}"""


@pytest.mark.parametrize("locale", ["en-US", "nl-NL"])
@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_every_rule_choice_reads_in_full(pages, web_server, locale, viewport):
    made = web_server.create("Ann")
    phone = viewport is PHONE
    page = pages.new(locale=locale, phone=phone, viewport=viewport)
    seat_browser(page, web_server, made["code"], made)
    page.wait_for_selector(".lobby .rulegrid select")
    selects = page.locator(".rulegrid select")
    assert selects.count() >= 8
    seen = 0
    for i in range(selects.count()):
        sel = selects.nth(i)
        for value in sel.evaluate("s => [...s.options].map((o) => o.value)"):
            before = page.evaluate("() => Number(document.body.dataset.version)")
            changed = sel.input_value() != value
            sel.select_option(value)
            if changed:  # the server's answer has come back and been drawn
                page.wait_for_function("v => Number(document.body.dataset.version) > v", arg=before)
            expect(sel).to_have_value(value)
            assert page.evaluate(RULE_CHOICES_JS) == [], (locale, viewport, value)
            seen += 1
    assert seen >= 20
    width = page.evaluate("() => document.scrollingElement.scrollWidth")
    assert width <= viewport["width"]


# Where each card of the hand can be reached: the middle of its left edge and its top-left corner
# (colour letter, and value or symbol) must be that card's, not a neighbour's that lies over it.
HAND_JS = """() => {
  window.scrollTo(0, 0);
  const cards = [...document.querySelectorAll('.hand .hand-card')];
  const hint = document.querySelector('.keys-hint').getBoundingClientRect();
  const hidden = [];
  let overlaps = 0;
  cards.forEach((card, i) => {
    const r = card.getBoundingClientRect();
    // the face's top-left corner (its letter and value or symbol, drawn in its image), as fractions
    // of the card's box (cards.js data-corner)
    const f = (card.dataset.corner || '').split(' ').map(Number);
    const bad = f.length !== 4 || f.some((x) => !(x > 0 && x < 1));
    if (bad) hidden.push(`${i} ${card.dataset.card}: no corner`);
    const c = {left: r.left + f[0] * r.width, top: r.top + f[1] * r.height,
               right: r.left + f[2] * r.width, bottom: r.top + f[3] * r.height};
    const points = [[r.left + 3, r.top + r.height / 2], [c.left + 1, c.top + 1], [c.right - 1, c.bottom - 1],
      [(c.left + c.right) / 2, (c.top + c.bottom) / 2]];
    for (const [x, y] of points) {
      const el = document.elementFromPoint(x, y);
      if (!el || el.closest('.hand-card') !== card) {
        hidden.push(`${i} ${card.dataset.card} at ${x.toFixed(0)},${y.toFixed(0)}`);
        break;
      }
    }
    const next = cards[i + 1] && cards[i + 1].getBoundingClientRect();
    if (next && Math.abs(next.top - r.top) < 2 && next.left < r.right - 0.5) overlaps += 1;
  });
  // (what a failure needs to be read: the tightening steps taken, the hand's plan, and the
  // player's box part by part)
  const me = document.querySelector('.me');
  const parts = [...me.children].filter((el) => el.offsetHeight)
    .map((el) => `${el.className || el.tagName}:${Math.round(el.offsetHeight)}`);
  return {n: cards.length, hintShown: hint.height > 0, hintBottom: hint.bottom, vh: innerHeight,
          hidden, overlaps, rows: new Set(cards.map((c) => Math.round(c.offsetTop))).size,
          docWidth: document.scrollingElement.scrollWidth, vw: innerWidth,
          table: document.querySelector('.table').className, hand: document.querySelector('.hand').className,
          meTop: Math.round(me.getBoundingClientRect().top), parts};
}"""


def assert_hand_in_view(got: dict, *context) -> None:
    """HAND_JS's reading: the hints shown and, with the whole hand box, above the window's
    bottom; every card clickable and readable; no sideways scroll."""
    assert got["hintShown"], got
    # nothing of the hand or its hints below the fold (a message of its own: pytest cuts a long
    # dict's repr short, and a failure under load, the hints 80 px below the fold once in many
    # runs, needs the whole reading)
    assert got["hintBottom"] <= got["vh"], json.dumps([*context, got])
    assert got["hidden"] == [], got  # every card can be clicked and its value read
    assert got["docWidth"] <= got["vw"], got


def draw_until(page, n: int) -> None:
    while page.locator(".hand .hand-card").count() < n:
        count = page.locator(".hand .hand-card").count()
        page.click("button[data-key=draw]")
        page.wait_for_function("n => document.querySelectorAll('.hand .hand-card').length > n", arg=count)


# Red numbers, and other colours only on action cards: the first card (flipped until a number) is
# red, so a plain red number is always there to play; the corners include the widest ("+10").
BIG_HAND_DECK = {"r-1": 10, "r-2": 10, "r-3": 10, "r-4": 10, "r-6": 10, "r-9": 10, "r-draw2": 4, "y-skip": 2,
                 "g-reverse": 2, "b-draw2": 2, "w-draw10": 6, "w-reverse4": 4, "w-roulette": 2}


def big_hand_table(pages, web_server, viewport, hand_size: int):
    rules = {"hand_size": hand_size, "mercy_limit": 60, "turn_timer_s": 0, "draw": "voluntary",
             "first_card": "redraw", "deck": BIG_HAND_DECK}
    made = web_server.create("Ann", rules=rules)
    web_server.join(made["code"], "Bob")  # seated, never plays: Ann (seat 0) keeps the turn
    page = pages.new(phone=viewport is PHONE, viewport=viewport)
    seat_browser(page, web_server, made["code"], made)
    page.wait_for_selector(".lobby")
    page.get_by_role("button", name="Start the game").click()
    page.wait_for_selector(".table .hand-card")
    expect(page.locator(".table")).to_have_attribute("data-turn", "me")
    expect(page.locator(".hand .hand-card")).to_have_count(hand_size)
    return page


def test_a_big_hand_on_a_desktop_overlaps_and_keeps_the_hints_in_view(pages, web_server, artifacts):
    page = big_hand_table(pages, web_server, DESKTOP, 12)
    # one row up to the default mercy limit (25: out of the round); a bigger hand may take two
    for n, rows in ((12, 1), (17, 1), (24, 1), (40, 2)):
        draw_until(page, n)
        got = page.evaluate(HAND_JS)
        assert got["n"] == n
        assert_hand_in_view(got)
        assert got["rows"] <= rows, got
        page.screenshot(path=str(artifacts / f"hand-{n}.png"))
    # a real click on the part of a card that shows plays that card: a plain number (a wild would
    # ask for a colour)
    playable = page.eval_on_selector_all(".hand-card.playable", "els => els.map((e) => e.dataset.card)")
    code = next(c for c in playable if re.fullmatch(r"r-\d", c))
    before = page.locator(f".hand-card[data-card='{code}']").count()
    page.locator(f".hand-card[data-card='{code}']").first.click(position={"x": 6, "y": 40})
    expect(page.locator(".hand .hand-card")).to_have_count(40 - 1)
    expect(page.locator(f".hand-card[data-card='{code}']")).to_have_count(before - 1)


def test_a_big_hand_on_a_phone_keeps_its_cards_apart(pages, web_server, artifacts):
    page = big_hand_table(pages, web_server, PHONE, 15)
    got = page.evaluate(HAND_JS)
    assert got["overlaps"] == 0, got  # a phone wraps the hand in rows: every card a whole tap target
    assert got["hidden"] == [], got
    assert got["docWidth"] <= got["vw"], got
    page.screenshot(path=str(artifacts / "hand-15-phone.png"), full_page=True)


def test_a_big_hand_at_a_full_table_with_a_stack_keeps_the_hints_in_view(pages, web_server, artifacts):
    # eight seats: the opponents take two rows on a desktop; the seven others never play, so Ann
    # (seat 0) keeps the turn until she stacks a Draw 2 on the next seat
    deck = {code: 3 * n for code, n in BIG_HAND_DECK.items()} | {"r-draw2": 40}
    rules = {"hand_size": 14, "mercy_limit": 60, "turn_timer_s": 0, "draw": "voluntary",
             "first_card": "redraw", "deck": deck}
    made = web_server.create("Ann", rules=rules)
    for name in ("Bob", "Cy", "Dee", "Eve", "Fay", "Gus", "Hal"):
        web_server.join(made["code"], name)
    page = pages.new(viewport=DESKTOP)
    seat_browser(page, web_server, made["code"], made)
    page.wait_for_selector(".lobby")
    page.get_by_role("button", name="Start the game").click()
    page.wait_for_selector(".table .hand-card")
    expect(page.locator(".opponents .opp")).to_have_count(7)
    expect(page.locator(".table")).to_have_attribute("data-turn", "me")
    expect(page.locator(".hand .hand-card")).to_have_count(14)
    for n in (14, 20, 40):
        draw_until(page, n)
        got = page.evaluate(HAND_JS)
        page.screenshot(path=str(artifacts / f"hand-{n}-eight-seats.png"))
        assert_hand_in_view(got, n)
    # a Draw 2 on Bob: the stack bar joins the table, the hand keeps 39 cards or so (two rows)
    while not page.locator(".hand-card[data-card='r-draw2']").count():  # one in seven cards is one
        draw_until(page, page.locator(".hand .hand-card").count() + 1)
    n = page.locator(".hand .hand-card").count()
    page.locator(".hand-card[data-card='r-draw2']").first.click(position={"x": 6, "y": 40})
    expect(page.locator(".stackbar")).to_be_visible()
    expect(page.locator(".hand .hand-card")).to_have_count(n - 1)
    got = page.evaluate(HAND_JS)
    page.screenshot(path=str(artifacts / "hand-40-eight-seats-stack.png"))
    assert_hand_in_view(got)


# The top bar on a phone: the language picker's closed face reads whole (on a phone the language's
# code, over a transparent select that gets every tap; elsewhere the select's own text, its name),
# and nothing in the bar runs past the window.
TOP_BAR_JS = """() => {""" + SELECT_TEXT_FIT_JS + """
  const vw = document.documentElement.clientWidth;
  const bar = document.querySelector('.topbar');
  const sel = bar.querySelector('select.lang');
  const face = bar.querySelector('.lang-face');
  const label = sel.selectedOptions[0].text;
  const problems = [];
  for (const el of bar.querySelectorAll('*')) {
    const r = el.getBoundingClientRect();
    if (r.width > 0 && (r.left < -0.5 || r.right > vw + 0.5)) {
      problems.push(`${el.tagName} ${el.className}: ${r.left.toFixed(0)}..${r.right.toFixed(0)} of ${vw}`);
    }
  }
  if (bar.scrollWidth > bar.clientWidth + 1) {
    problems.push(`the bar scrolls: ${bar.scrollWidth} > ${bar.clientWidth}`);
  }
  const cs = getComputedStyle(sel);
  let shown = label;
  if (face && getComputedStyle(face).display !== 'none') {
    shown = face.textContent;
    if (Number(cs.opacity) > 0.05) problems.push('the select shows over the code');
    if (face.scrollWidth > face.clientWidth + 1) problems.push(`"${shown}" is clipped`);
    const f = face.getBoundingClientRect(), s = sel.getBoundingClientRect();
    if (s.left > f.left + 1 || s.right < f.right - 1 || s.top > f.top + 1 || s.bottom < f.bottom - 1) {
      problems.push('the select does not cover the code');
    }
  } else {
    const {need, room} = selectTextFit(sel, label);
    if (need > room + 0.5) problems.push(`"${label}" needs ${need.toFixed(0)}px, has ${room.toFixed(0)}px`);
  }
  return {problems, shown, label};
}"""


LANG_FACES = {"en": ("English", "EN"), "nl": ("Nederlands", "NL")}  # the name, the code on a phone


@pytest.mark.parametrize("locale", ["en-US", "nl-NL"])
@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_the_language_picker_reads_whole_in_the_top_bar(pages, web_server, locale, viewport, artifacts):
    phone = viewport is PHONE
    names = LANG_FACES[locale[:2]]
    page = pages.new(locale=locale, phone=phone, viewport=viewport)
    page.goto("/")
    page.wait_for_selector(".topbar select.lang")
    got = page.evaluate(TOP_BAR_JS)
    assert got["problems"] == [], got
    assert got["label"] == names[0]
    assert got["shown"] == names[1 if phone else 0], got
    # in a room the bar holds the room code and Leave as well
    made = web_server.create("Ann")
    seat_browser(page, web_server, made["code"], made)
    page.wait_for_selector(".lobby")
    got = page.evaluate(TOP_BAR_JS)
    assert got["problems"] == [], got
    assert got["shown"] == names[1 if phone else 0], got
    page.screenshot(path=str(artifacts / f"topbar-{locale}-{'phone' if phone else 'desktop'}.png"))
    # the options keep their whole names, and a choice is still made on the picker itself
    other = "en" if locale == "nl-NL" else "nl"
    options = page.eval_on_selector_all("select.lang option", "os => os.map((o) => o.text)")
    assert options == ["English", "Nederlands"]
    page.locator("select.lang").select_option(other)
    expect(page.locator("html")).to_have_attribute("lang", other)
    got = page.evaluate(TOP_BAR_JS)
    assert got["problems"] == [], got
    assert got["shown"] == LANG_FACES[other][1 if phone else 0], got


def test_the_lobbys_seats_panel_has_its_heading_above_its_list_on_a_desktop(pages, web_server):
    """Bug: the lobby's panel (section.seats) took the table's opponent row rule (.seats: a
    centred flex row with no padding): its heading sat left of the list, the rows on the edge."""
    made = web_server.create("Hanna")
    web_server.join(made["code"], "Ann")
    page = pages.new(viewport={"width": 1440, "height": 900})
    seat_browser(page, web_server, made["code"], made)
    panel = page.locator("section.panel.seats")
    expect(panel.locator(".seat")).to_have_count(2)
    box = panel.bounding_box()
    heading = panel.locator("h2").bounding_box()
    first = panel.locator(".seat").first.bounding_box()
    assert heading["y"] + heading["height"] <= first["y"], (heading, first)
    right = box["x"] + box["width"]
    assert first["x"] >= box["x"] + 8 and first["x"] + first["width"] <= right - 8, (box, first)
