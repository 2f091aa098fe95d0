"""What the browser tests do through the UI, as a person would (no sleeps: Playwright waits)."""

from __future__ import annotations

import re
from typing import Any

from playwright.sync_api import Error as PlaywrightError

STATE_JS = """() => {
  const t = document.querySelector('.table');
  return {status: document.body.dataset.status || null, version: Number(document.body.dataset.version || 0),
          turn: t ? t.dataset.turn : null, dialog: !!document.querySelector('#dlg[open]')};
}"""


def state(page) -> dict[str, Any]:
    return page.evaluate(STATE_JS)


def create_room(page, name: str) -> str:
    page.goto("/")
    page.get_by_label("Your name").fill(name)
    page.get_by_role("button", name="Create a room").click()
    page.wait_for_selector(".lobby .bigcode")
    page.wait_for_function("() => /\\/r\\/[A-Z2-9]{6}$/.test(location.pathname)")
    return page.evaluate("() => location.pathname.split('/').pop()")


def join_by_link(page, code: str, name: str) -> None:
    page.goto(f"/r/{code}")
    page.get_by_label("Your name").fill(name)
    page.get_by_role("button", name=f"Join room {code}").click()


def add_bot(page, level: str) -> None:
    page.wait_for_selector(".seatlist .seat")  # counted once the lobby lists its seats
    seats = page.locator(".seatlist .seat").count()
    page.select_option("#bot-level", level)
    page.get_by_role("button", name="Add bot").click()
    page.wait_for_function("n => document.querySelectorAll('.seatlist .seat').length === n", arg=seats + 1)


def start_against_a_bot(page, level: str = "easy") -> None:
    """From the host's lobby: a bot takes a seat, the game starts, the hand is dealt."""
    add_bot(page, level)
    page.get_by_role("button", name="Start the game").click()
    page.wait_for_selector(".table .hand-card")


def wait_version_after(page, version: int, timeout: float = 15_000) -> None:
    page.wait_for_function(
        "v => Number(document.body.dataset.version) > v || !!document.querySelector('#dlg[open]')"
        " || !['playing'].includes(document.body.dataset.status)",
        arg=version, timeout=timeout)


OPTIONS_JS = """() => {
  const vis = (el) => !!el && !el.hidden && !!el.offsetParent;
  const t = document.querySelector('.table');
  const uno = document.querySelector('button[data-key=uno]');
  const catchBtn = [...document.querySelectorAll('.opp .catch')].find(vis);
  return {
    status: document.body.dataset.status || null,
    version: Number(document.body.dataset.version || 0),
    turn: t ? t.dataset.turn : null,
    dialog: !!document.querySelector('#dlg[open]'),
    catchKey: catchBtn ? catchBtn.dataset.key : null,
    uno: vis(uno) ? (uno.classList.contains('urgent') ? 'call' : uno.getAttribute('aria-pressed')) : null,
    playable: document.querySelectorAll('.hand-card.playable').length,
    take: vis(document.querySelector('button[data-key=take]')),
    draw: vis(document.querySelector('button[data-key=draw]')),
    pass: vis(document.querySelector('button[data-key=pass]')),
  };
}"""


def _click_if_still_there(page, selector: str) -> bool:
    try:
        page.click(selector, timeout=2000)
    except PlaywrightError:
        return False
    return True


def take_turn(page) -> bool:
    """If this page may act, act once from what the UI offers; True when it did something."""
    s = page.evaluate(OPTIONS_JS)
    if s["status"] != "playing":
        return False
    if s["dialog"]:
        # any choice: the first option (a colour, a target, a top card). The dialog can close
        # between the read and the click (a card asked its colour here, and a bot's catch then
        # changed the hand): a short click that finds no option means "read the page again"
        if not _click_if_still_there(page, "#dlg[open] .dlg-option >> nth=0"):
            return False
        page.wait_for_function(
            "v => !document.querySelector('#dlg[open]') || Number(document.body.dataset.version) > v",
            arg=s["version"])
        return True
    # A catch or UNO window can close between reading the page and clicking (someone else
    # caught first, the exposed player called): a short click that finds the button gone
    # means "nothing to do here", and the caller reads the page again.
    if s["catchKey"]:
        return _click_if_still_there(page, f"button[data-key='{s['catchKey']}']")
    if s["uno"] == "call":
        if not _click_if_still_there(page, "button[data-key=uno]"):
            return False
        wait_version_after(page, s["version"])
        return True
    if s["turn"] != "me":
        return False
    if s["uno"] == "false":  # two cards: call UNO with the next play
        # the table may change between the read and the click (a catch, a timer): if the button
        # is not armed after the click, the caller reads the page again
        if not _click_if_still_there(page, "button[data-key=uno]"):
            return False
        try:
            page.wait_for_selector("button[data-key=uno][aria-pressed=true]", timeout=3000)
        except PlaywrightError:
            return False
    if s["playable"]:
        try:
            # near the left edge: in a big hand the next card lies over the rest of this one
            page.locator(".hand-card.playable").first.click(position={"x": 8, "y": 30}, timeout=3000)
        except PlaywrightError:  # the table changed under the click (a bot moved, the round
            return False         # ended, the hand re-rendered): read it again
    elif s["take"]:
        page.click("button[data-key=take]")
    elif s["draw"]:
        page.click("button[data-key=draw]")
    elif s["pass"]:
        page.click("button[data-key=pass]")
    else:
        return False
    wait_version_after(page, s["version"])
    return True


def hand(page) -> list[str]:
    return page.eval_on_selector_all(".hand .hand-card", "els => els.map(e => e.dataset.card)")


def no_horizontal_scroll(page) -> tuple[int, int]:
    return page.evaluate("() => [document.scrollingElement.scrollWidth, window.innerWidth]")


CODE_RE = re.compile(r"^[ABCDEFGHJKMNPQRSTUVWXYZ23456789]{6}$")
