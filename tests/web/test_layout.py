"""Layout checks measured in the page: rule choices read in full, a big hand stays in view."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from .test_flows import seat_browser

DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}

# Every rule <select> in the lobby: is the chosen option's whole text on screen? A select draws its
# text on one line and cuts what does not fit, so a visible select must hold the text in its content
# box; a transparent select must lie over an element that shows exactly that text, unclipped.
RULE_CHOICES_JS = """() => {
  const problems = [];
  const vw = document.documentElement.clientWidth;
  for (const sel of document.querySelectorAll('.rulegrid select')) {
    const label = sel.selectedOptions[0] ? sel.selectedOptions[0].text : '';
    const cs = getComputedStyle(sel);
    let box;
    if (Number(cs.opacity) > 0.05) {
      const probe = document.createElement('span');
      probe.style.cssText = 'position:absolute;visibility:hidden;white-space:pre';
      probe.style.font = cs.font;
      probe.style.letterSpacing = cs.letterSpacing;
      probe.textContent = label;
      document.body.append(probe);
      const need = probe.getBoundingClientRect().width;
      probe.remove();
      const room = sel.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight);
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
    const corner = card.querySelector('.corner.tl');
    if (corner.children.length < 2) hidden.push(`${i} ${card.dataset.card}: a corner with the colour only`);
    const c = corner.getBoundingClientRect();
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
  return {n: cards.length, hintShown: hint.height > 0, hintBottom: hint.bottom, vh: innerHeight,
          hidden, overlaps, rows: new Set(cards.map((c) => Math.round(c.offsetTop))).size,
          docWidth: document.scrollingElement.scrollWidth, vw: innerWidth};
}"""


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
        assert got["hintShown"], got
        assert got["hintBottom"] <= got["vh"], got  # nothing of the hand or its hints below the fold
        assert got["rows"] <= rows, got
        assert got["hidden"] == [], got  # every card can be clicked and its value read
        assert got["docWidth"] <= got["vw"], got
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
