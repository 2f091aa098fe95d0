"""A fair deal anyone can check, in the browser (protocol.md "Fair deal"; web/js/fair-deal.js): at
round over the phone hashes the seed shown and finds the commitment it kept from the deal ("Fair
deal checked"); a seed rewritten on its way shows a warning instead; the round's page in the
history asks the server to deal the round again ("Check this deal"). The plain-JavaScript SHA-256
(for LAN pages without crypto.subtle) gives what crypto.subtle and Python give."""

from __future__ import annotations

import hashlib
import json
import re

from playwright.sync_api import expect

from .test_flows import seat_browser
from .test_game import play_until_over
from .ui import add_bot

# one card each, every card a 5: the first player to move wins the round at once
ONE_CARD = {"turn_timer_s": 0, "hand_size": 1, "deck": {"r-5": 10, "y-5": 10, "g-5": 10, "b-5": 10}}
PHONE = {"phone": True, "viewport": {"width": 390, "height": 844}}


def _round_over(pages, web_server, proxy=None, lan_page=False):
    made = web_server.create("Ann", rules=ONE_CARD)
    page = pages.new(**PHONE)
    if lan_page:  # as on http://192.168.x.x: no crypto.subtle, the plain-JavaScript hash instead
        page.add_init_script("Object.defineProperty(Crypto.prototype, 'subtle', {get: () => undefined})")
    if proxy is not None:
        page.route_web_socket(re.compile(r".*/ws/.*"), proxy)
    seat_browser(page, web_server, made["code"], made)
    add_bot(page, "easy")
    page.get_by_role("button", name="Start the game").click()
    page.wait_for_selector(".table")
    play_until_over([page], limit_s=30)
    return page


def test_round_over_shows_the_deal_checked_and_the_rounds_page_deals_it_again(pages, web_server, artifacts):
    page = _round_over(pages, web_server, lan_page=True)
    assert page.evaluate("() => globalThis.crypto.subtle === undefined")
    mark = page.locator(".over-panel .fair-deal")
    expect(mark).to_have_attribute("data-state", "ok")
    expect(mark).to_have_text(re.compile("Fair deal checked"))
    assert re.search(r"\([0-9a-f]{64}\)", mark.get_attribute("title"))  # the tooltip names the hash
    mark.scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts / "fair-deal-phone.png"))
    # the round's page in the history: the server deals it again from its seed
    replay = page.locator(".over-panel .hist-round .hr-replay").first
    expect(replay).to_be_visible(timeout=15_000)  # once the round is written
    replay.click()
    dialog = page.locator("dialog.dlg-replay")
    dialog.get_by_role("button", name="Check this deal").click()
    verdict = dialog.locator(".deal-verdict .fair-deal")
    expect(verdict).to_have_attribute("data-state", "ok")
    expect(verdict).to_contain_text("Fair deal: the seed deals this round")
    expect(dialog.locator(".fd-how")).to_contain_text("mercyless verify ")
    verdict.scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts / "fair-deal-history-phone.png"))


def test_a_seed_rewritten_on_its_way_shows_a_warning(pages, web_server, artifacts):
    forged: dict = {}

    def rewrite(message):
        text = message if isinstance(message, str) else message.decode()
        if "seed" not in forged and '"round_over"' in text:
            for event in json.loads(text).get("events", []):
                if event.get("kind") == "round_over" and event.get("deal_seed"):
                    forged["seed"] = event["deal_seed"]
        # the seed wherever it is said (the event, and the view's game.deal_seed)
        return text.replace(forged["seed"], "not-the-dealt-seed") if "seed" in forged else text

    def proxy(ws):
        server = ws.connect_to_server()
        ws.on_message(lambda m: server.send(m))
        server.on_message(lambda m: ws.send(rewrite(m)))

    page = _round_over(pages, web_server, proxy)
    mark = page.locator(".over-panel .fair-deal")
    expect(mark).to_have_attribute("data-state", "bad")
    expect(mark).to_have_attribute("role", "alert")
    expect(mark).to_contain_text("Deal check failed")
    assert "seed" in forged
    mark.scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts / "fair-deal-tampered-phone.png"))


def test_the_plain_javascript_sha256_matches_crypto_subtle_and_python(pages, web_server):
    page = pages.new()
    page.goto("/")
    texts = ["", "abc", "0123456789" * 100, "é€😀 seed", "a" * 55, "b" * 56, "c" * 63, "d" * 64, "e" * 119]
    got = page.evaluate("""async (texts) => {
      const { sha256Pure, sha256Hex } = await import('/js/sha256.js');
      return Promise.all(texts.map(async (t) => [sha256Pure(t), await sha256Hex(t)]));
    }""", texts)
    for text, (pure, subtle) in zip(texts, got, strict=True):
        assert pure == subtle == hashlib.sha256(text.encode("utf-8")).hexdigest(), text
