"""A player on a phone, at the table and after a round: found in a walk-through, in English and Dutch."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from .test_crowded import CHIP_TEXT_JS
from .test_flows import seat_browser
from .test_game import play_until_over

PHONE = {"width": 390, "height": 844}

# A round's row in the night's scores: the winner's name in full, and nothing past the row or the
# panel's edge (the name's column was squeezed to 0 px by the points and the Replay button).
ROUND_ROW_JS = """() => [...document.querySelectorAll('.hist-round')].flatMap((row) => {
  const r = row.getBoundingClientRect();
  const panel = row.closest('.history').getBoundingClientRect();
  const out = [];
  const win = row.querySelector('.hr-win');
  if (!win.clientWidth || win.scrollWidth > win.clientWidth + 0.5) {
    out.push(`"${win.textContent}" shows ${win.clientWidth} of ${win.scrollWidth} px`);
  }
  if (r.left < panel.left - 0.5 || r.right > panel.right + 0.5) out.push('the row runs past the panel');
  for (const el of row.children) {
    const e = el.getBoundingClientRect();
    if (e.left < r.left - 0.5 || e.right > r.right + 0.5) out.push(`${el.className} runs past the row`);
  }
  return out;
})"""


@pytest.mark.parametrize("locale", ["en-US", "nl-NL"])
def test_the_nights_scores_name_the_round_winner_on_a_phone(pages, web_server, locale, artifacts):
    made = web_server.create("Annemarie", rules={"hand_size": 1, "turn_timer_s": 0})
    page = pages.new(phone=True, viewport=PHONE, locale=locale)
    seat_browser(page, web_server, made["code"], made)
    page.select_option("#bot-level", "easy")
    page.click("button[data-key=addbot]")
    expect(page.locator(".seatlist .seat")).to_have_count(2)
    page.click("button[data-key=start]")
    page.wait_for_selector(".table .hand-card")
    play_until_over([page], limit_s=25)
    row = page.locator(".over-panel .hist-round")
    expect(row).to_have_count(1)
    # the round shows at once from the view, its Replay once the night's record has it
    expect(row.get_by_role("button")).to_have_count(1)
    row.scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts / f"round-row-phone-{locale}.png"))
    assert page.evaluate(ROUND_ROW_JS) == []
    expect(row.get_by_role("button")).to_be_visible()


@pytest.mark.parametrize("width", [390, 360])
def test_bot_levels_read_whole_on_a_phone_in_dutch(pages, web_server, width, artifacts):
    # "makkelijk" was cut to "makkel…" beside the avatar, under the bot's name
    made = web_server.create("Ann", rules={"turn_timer_s": 0})
    page = pages.new(phone=True, viewport={"width": width, "height": 800}, locale="nl-NL")
    seat_browser(page, web_server, made["code"], made)
    for seats, level in enumerate(("easy", "normal", "hard", "easy", "hard"), start=2):
        page.select_option("#bot-level", level)
        page.click("button[data-key=addbot]")
        expect(page.locator(".seatlist .seat")).to_have_count(seats)
    page.click("button[data-key=start]")
    expect(page.locator(".opponents .opp .badge-bot")).to_have_count(5)
    expect(page.locator(".opponents")).to_contain_text("makkelijk")
    page.locator(".opponents").screenshot(path=str(artifacts / f"bot-levels-phone-{width}.png"))
    assert page.evaluate(CHIP_TEXT_JS) == []
    assert page.evaluate("() => document.scrollingElement.scrollWidth") <= width
