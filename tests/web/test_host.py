"""The host's hold on the room: back to the lobby between rounds (the match and its scores go on),
removing a spectator (barred until let back in), and locking the room against new joiners."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from .test_flows import seat_browser
from .test_game import play_until_over
from .ui import add_bot, create_room, join_by_link

# every card matches every other: a turn can always play, a round is a few plays
FIVES = {"r-5": 20, "y-5": 20, "g-5": 20, "b-5": 20}

SCORES_JS = """() => Object.fromEntries([...document.querySelectorAll('.over-panel .score-row')].map(
    (row) => [row.dataset.player, Number(row.querySelector('.sr-score').firstChild.textContent)]))"""


def ann_and_bob(pages, web_server):
    """Ann's room on the all-fives deck (a round is a few plays), Bob joined from a phone."""
    made = web_server.create("Ann", rules={"deck": FIVES, "hand_size": 2, "turn_timer_s": 0})
    code = made["code"]
    host = pages.new()
    seat_browser(host, web_server, code, made)
    guest = pages.new(phone=True)
    join_by_link(guest, code, "Bob")
    return host, guest, made


def test_back_to_lobby_after_a_round_then_start_deals_round_two_with_the_scores(pages, web_server, artifacts):
    host, guest, made = ann_and_bob(pages, web_server)
    expect(host.locator(".seatlist .seat")).to_have_count(2)
    host.get_by_role("button", name="Start the game").click()
    for p in (host, guest):
        p.wait_for_selector(".table .hand-card")
    play_until_over([host, guest], limit_s=30)

    # the host picks what comes next; the others see who decides
    actions = host.locator(".over-actions")
    expect(actions.get_by_role("button", name="Next round")).to_be_visible()
    expect(actions.get_by_role("button", name="Back to lobby")).to_be_visible()
    waiting = guest.locator(".over-actions")
    expect(waiting).to_contain_text("Waiting for Ann to pick: the next round or back to the lobby")
    expect(waiting.get_by_role("button")).to_have_count(0)
    host.screenshot(path=str(artifacts / "round-over-to-lobby.png"))
    scores = host.evaluate(SCORES_JS)
    assert len(scores) == 2 and max(scores.values()) > 0, scores

    actions.get_by_role("button", name="Back to lobby").click()
    for p in (host, guest):
        p.wait_for_selector(".lobby")
        expect(p.locator("#log")).to_contain_text("Ann took everyone back to the lobby")
        expect(p.locator(".match-note")).to_contain_text("Round 1 played: the scores carry on")
        for pid, score in scores.items():
            expect(p.locator(f".seat[data-player='{pid}'] .badge-score")).to_have_text(f"{score} pts")
    expect(guest.locator(".startbar")).to_contain_text("Waiting for Ann to deal the next round")
    start = host.get_by_role("button", name="Deal round 2")
    expect(start).to_be_enabled()
    start.click()

    for p in (host, guest):
        p.wait_for_selector(".table .hand-card")
        expect(p.locator("#log")).to_contain_text("Round 2 begins")
    # the match went on: the scores were carried into round 2
    expect(host.locator(".mine .badge-score")).to_have_text(f"{scores[made['player_id']]} pts")
    play_until_over([host, guest], limit_s=30)
    expect(host.locator(".over-kicker")).to_contain_text("Round 2 over")
    after = host.evaluate(SCORES_JS)
    assert all(after[pid] >= scores[pid] for pid in scores), (scores, after)
    assert sum(after.values()) > sum(scores.values()), (scores, after)


def test_the_host_removes_a_spectator_who_may_come_back_once_let_in(pages, web_server, artifacts):
    # ten seats: a late joiner watches, and still watches back in the lobby
    made = web_server.create("Ann", rules={"deck": FIVES, "hand_size": 1, "turn_timer_s": 0})
    code = made["code"]
    for i in range(1, 10):
        web_server.join(code, f"P{i}")
    host = pages.new()
    seat_browser(host, web_server, code, made)
    expect(host.locator(".seatlist .seat")).to_have_count(10)
    host.get_by_role("button", name="Start the game").click()
    host.wait_for_selector(".table .hand-card")
    watcher = pages.new()
    join_by_link(watcher, code, "Zed")
    expect(watcher.locator(".table-note")).to_contain_text("watching")
    # Ann plays her only card: the round is over, and the panel shows who watches
    host.locator(".hand-card.playable").first.click()
    panel = host.locator(".over-panel")
    expect(panel.locator(".spectators")).to_contain_text("Zed")
    expect(panel.get_by_role("button", name="Remove Zed")).to_be_visible()
    expect(watcher.locator(".over-panel .spectators")).to_contain_text("Zed (you)")
    expect(watcher.locator(".over-panel").get_by_role("button", name="Remove Zed")).to_have_count(0)
    panel.get_by_role("button", name="Back to lobby").click()
    host.wait_for_selector(".lobby")
    spectators = host.locator(".lobby .spectators")
    expect(spectators).to_contain_text("Zed")  # every seat is taken: Zed still watches
    host.screenshot(path=str(artifacts / "lobby-spectator.png"))

    # a removal is asked about first; cancelling keeps Zed
    spectators.get_by_role("button", name="Remove Zed").click()
    dialog = host.get_by_role("dialog", name="Remove Zed?")
    expect(dialog).to_contain_text("can’t join again until you let removed players back in")
    dialog.get_by_role("button", name="Cancel").click()
    expect(dialog).to_be_hidden()
    expect(spectators).to_contain_text("Zed")
    spectators.get_by_role("button", name="Remove Zed").click()
    dialog.get_by_role("button", name="Remove", exact=True).click()
    expect(host.locator(".lobby .spectators")).to_have_count(0)
    expect(host.locator("#log")).to_contain_text("Ann removed Zed")
    expect(watcher.get_by_role("alert")).to_contain_text(f"You are no longer in room {code}")

    # a seat goes too, so there is room; Zed is refused until Ann lets removed players back in
    host.get_by_role("button", name="Remove P9").click()
    host.get_by_role("dialog", name="Remove P9?").get_by_role("button", name="Remove", exact=True).click()
    expect(host.locator(".seatlist .seat")).to_have_count(9)
    join_by_link(watcher, code, "Zed")
    expect(watcher.get_by_role("alert")).to_contain_text(f"The host removed you from room {code}")
    host.get_by_role("button", name="Let removed players back in (2)").click()
    expect(host.locator("#log")).to_contain_text("Ann let removed players back in")
    expect(host.locator(".readmit")).to_have_count(0)
    watcher.get_by_role("button", name=f"Join room {code}").click()
    watcher.wait_for_selector(".lobby")
    expect(host.locator(".seatlist")).to_contain_text("Zed")


def test_a_locked_room_refuses_a_new_joiner_until_unlocked(pages, web_server, artifacts):
    host = pages.new()
    code = create_room(host, "Ann")
    lock = host.get_by_role("switch", name="Lock the room")
    expect(lock).not_to_be_checked()
    expect(host.locator(".roomlock")).to_contain_text("Open: anyone with the code can join")
    lock.click()
    expect(lock).to_be_checked()
    expect(host.locator(".roomlock")).to_contain_text("Locked: nobody new can join")
    expect(host.locator("#log")).to_contain_text("Ann locked the room")
    host.screenshot(path=str(artifacts / "lobby-locked.png"))

    guest = pages.new()
    join_by_link(guest, code, "Bob")
    expect(guest.get_by_role("alert")).to_contain_text(f"Room {code} is locked")
    dutch = pages.new(locale="nl-NL")
    dutch.goto(f"/r/{code}")
    dutch.locator("#name").fill("Bea")
    dutch.locator("button[data-key=join]").click()
    expect(dutch.get_by_role("alert")).to_contain_text(f"Kamer {code} is op slot")

    lock.click()
    expect(lock).not_to_be_checked()
    expect(host.locator("#log")).to_contain_text("Ann unlocked the room")
    guest.get_by_role("button", name=f"Join room {code}").click()
    guest.wait_for_selector(".lobby")
    expect(host.locator(".seatlist")).to_contain_text("Bob")
    # the others see the lock, not the switch
    expect(guest.get_by_role("switch", name="Lock the room")).to_have_count(0)
    lock.click()
    expect(guest.locator(".roomlock")).to_contain_text("Locked: nobody new can join")


# the bots' seats as a page shows them: name, avatar colour, badge text and level
BOT_SEATS_JS = """() => [...document.querySelectorAll('.seatlist .seat')]
  .filter((li) => li.querySelector('.avatar.is-bot')).map((li) => {
    const badge = li.querySelector('.badge-bot');
    const pick = badge.querySelector('select');
    return {id: li.dataset.player, name: li.querySelector('.seat-name').textContent,
            colour: getComputedStyle(li.querySelector('.avatar')).backgroundColor,
            badge: (badge.querySelector('.level-face') || badge).textContent,
            level: pick ? pick.value : badge.dataset.level}; })"""


def test_bots_have_names_and_colours_of_their_own_and_the_host_sets_their_level(pages, web_server, artifacts):
    made = web_server.create("Ann", rules={"turn_timer_s": 0})
    code = made["code"]
    host = pages.new()
    seat_browser(host, web_server, code, made)
    guest = pages.new(phone=True, locale="nl-NL")  # Bob reads Dutch
    seat_browser(guest, web_server, code, web_server.join(code, "Bob"))
    expect(host.locator(".seatlist .seat")).to_have_count(2)  # add_bot counts from Bob's seat on
    for level in ("easy", "normal", "easy"):
        add_bot(host, level)
    expect(guest.locator(".seatlist .seat")).to_have_count(5)

    bots = host.evaluate(BOT_SEATS_JS)
    assert [b["level"] for b in bots] == ["easy", "normal", "easy"], bots
    assert len({b["name"] for b in bots}) == 3 and not {b["name"] for b in bots} & {"Ann", "Bob"}, bots
    assert len({b["colour"] for b in bots}) == 3, bots  # a colour each
    # Bob sees the same bots, their levels in Dutch
    seen = guest.evaluate(BOT_SEATS_JS)
    assert [(b["name"], b["colour"]) for b in seen] == [(b["name"], b["colour"]) for b in bots]
    assert [b["badge"] for b in seen] == ["Bot · makkelijk", "Bot · normaal", "Bot · makkelijk"]
    expect(guest.locator(".seatlist .level-pick select")).to_have_count(0)  # only the host sets levels

    # the host makes the third bot hard: everyone's badge changes, the log says so
    third = bots[2]
    host.get_by_label(f"Level of {third['name']}").select_option("hard")
    badge = guest.locator(f".seat[data-player='{third['id']}'] .badge-bot")
    expect(badge).to_have_text("Bot · moeilijk")
    expect(badge).to_have_class(re.compile(r"\blevel-hard\b"))
    expect(guest.locator("#log")).to_contain_text(f"{third['name']} speelt nu moeilijk")
    expect(host.locator("#log")).to_contain_text(f"{third['name']} now plays hard")
    expect(host.get_by_label(f"Level of {third['name']}")).to_have_value("hard")
    expect(host.locator(f".seat[data-player='{third['id']}'] .level-face")).to_have_text("Bot · hard")
    assert [b["level"] for b in guest.evaluate(BOT_SEATS_JS)] == ["easy", "normal", "hard"]
    host.screenshot(path=str(artifacts / "lobby-bots-desktop.png"))
    guest.screenshot(path=str(artifacts / "lobby-bots-phone.png"), full_page=True)

    # at the table: the same colour, the level's badge
    host.get_by_role("button", name="Start the game").click()
    host.wait_for_selector(".table .hand-card")
    chip = host.locator(f".opp[data-player='{third['id']}']")
    expect(chip.locator(".badge-bot")).to_contain_text("hard")
    expect(chip.locator(".opp-name")).to_have_text(third["name"])
    colour = chip.locator(".avatar").evaluate("el => getComputedStyle(el).backgroundColor")
    assert colour == third["colour"]


def test_the_host_sets_a_bots_level_on_the_round_over_panel(pages, web_server, artifacts):
    host, guest, _ = ann_and_bob(pages, web_server)
    # Bob's seat first: add_bot waits for one seat more than it counted
    expect(host.locator(".seatlist .seat")).to_have_count(2)
    add_bot(host, "easy")
    expect(host.locator(".seatlist .seat")).to_have_count(3)
    host.get_by_role("button", name="Start the game").click()
    play_until_over([host, guest], limit_s=60)
    bot = host.locator(".over-bots li")
    expect(bot).to_have_count(1)
    expect(guest.locator(".over-bots")).to_have_count(0)  # only the host sets levels
    bot_id = bot.get_attribute("data-player")
    name = bot.locator(".ob-name").inner_text()
    host.get_by_label(f"Level of {name}").select_option("hard")
    expect(guest.locator("#log")).to_contain_text(f"{name} now plays hard")
    expect(host.get_by_label(f"Level of {name}")).to_have_value("hard")
    host.locator(".over-panel").screenshot(path=str(artifacts / "round-over-bot-level.png"))
    host.get_by_role("button", name="Next round").click()
    chip = guest.locator(f".opp[data-player='{bot_id}']")
    expect(chip.locator(".badge-bot")).to_contain_text("hard")


OVER_ROWS_JS = """() => {
  const row = document.querySelector('.over-panel .score-row .tag').closest('.score-row');
  const tag = row.querySelector('.tag').getBoundingClientRect();
  const hit = document.elementFromPoint(tag.left + tag.width / 2, tag.top + tag.height / 2);
  const mine = document.querySelector('.over-panel .pts-row .tag').closest('.pts-row');
  const name = mine.querySelector('.pts-name').getBoundingClientRect();
  const sum = mine.querySelector('.pts-sum').getBoundingClientRect();
  return {tagShown: !!hit && hit.classList.contains('tag'), sumTop: sum.top, nameBottom: name.bottom};
}"""


def test_a_long_names_you_tag_and_points_stay_whole_at_round_over(pages, web_server, artifacts):
    """Reported from a friends' night (laptop): the scores list cut "Alexandria Montgomery (you)"
    to "Alexandria Montgomery (…", and in "How the points were counted" that player's row alone
    pushed its sum to a line of its own."""
    made = web_server.create("Ann", rules={"deck": FIVES, "hand_size": 1, "turn_timer_s": 0})
    code = made["code"]
    host = pages.new()
    seat_browser(host, web_server, code, made)
    long = pages.new(viewport={"width": 1280, "height": 800})
    join_by_link(long, code, "Alexandria Montgomeryyy")
    web_server.join(code, "Cy")  # the last seat deals: Ann plays first
    expect(host.locator(".seatlist .seat")).to_have_count(3)
    host.get_by_role("button", name="Start the game").click()
    host.wait_for_selector(".table .hand-card.playable")
    host.locator(".hand-card.playable").first.click()  # her only card: she wins the round
    long.wait_for_selector(".over-panel .pts-row .pts-sum")
    long.screenshot(path=str(artifacts / "over-long-name.png"))
    got = long.evaluate(OVER_ROWS_JS)
    assert got["tagShown"], got
    assert got["sumTop"] < got["nameBottom"], got  # on the name's line
