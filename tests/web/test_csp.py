"""The client runs under the server's strict Content-Security-Policy (app/api/edge.py): no inline
script, no style attribute, nothing from elsewhere. Every violation is recorded in the page (the
``securitypolicyviolation`` event) and in the console, which the ``pages`` fixture fails on."""

from __future__ import annotations

from playwright.sync_api import expect

from app.api.edge import CSP

from .test_flows import seat_browser
from .test_game import play_until_over
from .ui import add_bot, create_room, join_by_link, take_turn

RECORD_VIOLATIONS = """
window.__csp = [];
document.addEventListener('securitypolicyviolation', (e) =>
  window.__csp.push(`${e.violatedDirective} ${e.blockedURI} ${e.sourceFile}:${e.lineNumber} ${e.sample}`));
"""


def violations(page) -> list[str]:
    return page.evaluate("() => window.__csp")


def test_landing_lobby_and_table_run_with_no_csp_violation(pages, web_server):
    host = pages.new()
    host.add_init_script(RECORD_VIOLATIONS)
    guest = pages.new(phone=True)
    guest.add_init_script(RECORD_VIOLATIONS)
    answer = host.goto("/")
    assert answer.headers["content-security-policy"] == CSP
    assert answer.headers["x-frame-options"] == "DENY"
    expect(host.get_by_label("Your name")).to_be_visible()
    assert violations(host) == []                     # the landing page
    code = create_room(host, "Ann")
    join_by_link(guest, code, "Bob")
    guest.wait_for_selector(".lobby")
    add_bot(host, "hard")                              # avatars, seat list, rules
    host.wait_for_selector(".history")
    assert violations(host) == [] and violations(guest) == []
    host.get_by_role("button", name="Start the game").click()
    for page in (host, guest):
        page.wait_for_selector(".table .hand-card")    # hands, piles, bars set from script
    for _ in range(6):
        take_turn(host) or take_turn(guest)
    assert violations(host) == [] and violations(guest) == []


def test_a_finished_round_and_its_replay_run_with_no_csp_violation(pages, web_server):
    made = web_server.create("Ann", rules={"hand_size": 3})
    page = pages.new()
    page.add_init_script(RECORD_VIOLATIONS)
    seat_browser(page, web_server, made["code"], made)
    add_bot(page, "easy")
    page.get_by_role("button", name="Start the game").click()
    page.wait_for_selector(".table .hand-card")
    play_until_over([page], limit_s=25)
    row = page.locator(".over-panel .history .hist-round")
    expect(row).to_have_count(1)                       # the night's record, read with the token
    row.get_by_role("button", name="Replay round 1").click()
    dialog = page.get_by_role("dialog", name="Replay of round 1")
    expect(dialog.locator(".replay-table .card").first).to_be_visible()
    assert violations(page) == []
