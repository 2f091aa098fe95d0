"""Sessions over real sockets: hello, reconnects, replaced sockets, message ids, races, the room's
lifecycle (bots, seats, rules, host, spectators, leave), reactions, sync and ping, and the public
HTTP reads.

One server per backend (and per settings) serves the whole module; every test plays in rooms of
its own. With the ``FIVES`` deck every card matches every other, so a turn player can always play
and nothing but the test moves the game.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import time
from typing import Any

import httpx
import pytest
import websockets

from app.rooms.personas import NAMES

from .conftest import module_server
from .harness import Client, ServerProcess
from .tables import level, ok, quiet, refused, seated, started

FIVES = {"r-5": 20, "y-5": 20, "g-5": 20, "b-5": 20}
CALM = {"turn_timer_s": 0, "catch_window_s": 30}  # no timer moves the room while a test looks
CARD_RE = re.compile(r"\b[rygbw]-(?:\d|draw\d+|skip|skipall|reverse\d?|discard|wild|roulette)\b")


# -- fixtures -----------------------------------------------------------------------------------

@pytest.fixture
def server(backend: str, request: pytest.FixtureRequest, module_servers) -> ServerProcess:
    """The module's server for this backend and these settings (started on first use)."""
    return module_server(backend, request, module_servers)


# -- helpers ------------------------------------------------------------------------------------

def seat(c: Client, player: str) -> dict[str, Any]:
    return next(p for p in c.view["players"] if p["id"] == player)


def cards_after(c: Client, player: str, dealt: int) -> int:
    """How many cards ``player`` holds after ``dealt``, by the events ``c`` saw."""
    drew = sum(e["count"] for e in c.events if e["kind"] in ("drew", "took_stack", "caught")
               and e["player"] == player)
    return dealt - count(c, "played", player=player) + drew


def count(c: Client, kind: str, **data: Any) -> int:
    return sum(1 for e in c.events if e["kind"] == kind and all(e.get(k) == v for k, v in data.items()))


async def saw(c: Client, kind: str, **data: Any) -> None:
    """Wait until ``c`` has seen an event ``kind`` with ``data``."""
    if not count(c, kind, **data):
        await c.until(lambda m: count(c, kind, **data) > 0)


async def close_code(ws: Any, timeout: float = 5.0) -> int | None:
    """Read until the server closes the socket; its close code."""
    with contextlib.suppress(websockets.ConnectionClosed):
        while True:
            await asyncio.wait_for(ws.recv(), timeout)
    return ws.close_code


async def hello(server: ServerProcess, code: str, first: str | bytes) -> Any:
    ws = await websockets.connect(f"{server.ws_url}/ws/{code}")
    await ws.send(first)
    return ws


def hello_frame(token: Any) -> str:
    return json.dumps({"type": "hello", "token": token})


# -- hello ----------------------------------------------------------------------------------------

async def test_hello_gets_a_welcome_with_the_whole_view(server):
    host = server.create("Ann")
    bob_info = server.join(host["code"], "Bob")
    ann = await Client(server, host["code"], host["token"]).connect()
    welcome = ann.messages[0]
    assert welcome["type"] == "welcome" and welcome["you"] == host["player_id"]
    assert isinstance(welcome["version"], int) and welcome["version"] >= 1
    assert abs(welcome["now"] - time.time() * 1000) < 60_000
    state = welcome["state"]
    assert set(state) >= {"room", "players", "hand", "game"}
    room = state["room"]
    assert room["code"] == host["code"] and room["host"] == host["player_id"]
    assert room["status"] == "lobby" and room["round"] == 0 and room["spectators"] == []
    catalog = httpx.get(f"{server.url}/api/rules").json()
    assert set(room["rules"]) == set(catalog["options"])
    assert room["rules"] == catalog["presets"]["mercyless"]
    assert [p["id"] for p in state["players"]] == [host["player_id"], bob_info["player_id"]]
    for p in state["players"]:
        assert set(p) >= {"id", "name", "bot", "connected", "cards", "eliminated", "uno", "score"}
    assert [p["connected"] for p in state["players"]] == [True, False]
    assert state["hand"] == [] and state["game"] is None
    # the code is case-insensitive
    bob = await Client(server, host["code"].lower(), bob_info["token"]).connect()
    assert bob.you == bob_info["player_id"] and bob.view["room"]["code"] == host["code"]
    await level([ann, bob])
    assert seat(ann, bob.you)["connected"] is True
    assert ann.view["players"] == bob.view["players"]
    for c in (ann, bob):
        await c.close()


async def test_a_bad_hello_is_closed_with_4401_and_an_unknown_room_with_4404(server):
    host = server.create("Ann")
    other = server.create("Zed")
    code = host["code"]
    for first in (hello_frame("not-a-token-of-this-room"), hello_frame("short"), hello_frame(12345678),
                  hello_frame(other["token"]), json.dumps({"type": "sync", "id": "x"}),
                  json.dumps({"token": host["token"]}), "{not json"):
        ws = await hello(server, code, first)
        assert await close_code(ws) == 4401, first
    missing = "ZZZZZZ"
    while httpx.get(f"{server.url}/api/rooms/{missing}").status_code != 404:
        missing = missing[1:] + "Y"
    for room_code in (missing, "nope", "ABC0O1"):
        ws = await hello(server, room_code, hello_frame(host["token"]))
        assert await close_code(ws) == 4404, room_code
    # none of this touched the room; the right token still works, in any case of the code
    ann = await Client(server, code.lower(), host["token"]).connect()
    assert ann.view["players"][0]["id"] == host["player_id"]
    await ann.close()
    # a hello in a binary frame is read as text, like every other frame
    ws = await hello(server, code, hello_frame(host["token"]).encode())
    welcome = json.loads(await asyncio.wait_for(ws.recv(), 5))
    assert welcome["type"] == "welcome" and welcome["you"] == host["player_id"]
    await ws.close()


@pytest.mark.settings(hello_timeout_ms=300)
async def test_no_hello_in_time_closes_the_socket(server):
    host = server.create("Ann")
    ws = await websockets.connect(f"{server.ws_url}/ws/{host['code']}")
    assert await close_code(ws) == 4408
    # a timely hello on the same server is welcomed
    ann = await Client(server, host["code"], host["token"]).connect()
    assert ann.you == host["player_id"]
    await ann.close()


# -- reconnecting, replaced sockets ---------------------------------------------------------------

async def test_reconnecting_mid_game_keeps_the_seat_the_hand_and_the_version_line(server):
    ann, bob, cat = await started(server, ["Ann", "Bob", "Cat"], {"deck": FIVES, **CALM})
    bob_id, hand = bob.you, list(bob.view["hand"])
    await bob.close()
    for c in (ann, cat):
        await saw(c, "disconnected", player=bob_id)
        assert seat(c, bob_id)["connected"] is False
    # the round goes on meanwhile: Ann plays, the turn is Bob's
    await ok(ann, {"type": "play", "card": ann.view["hand"][0]})
    await level([ann, cat])
    assert ann.view["game"]["turn"] == bob_id
    back = await Client(server, bob.code, bob.token).connect()
    welcome = back.messages[0]
    assert welcome["type"] == "welcome" and welcome["you"] == bob_id
    assert back.view["hand"] == hand
    assert [p["id"] for p in back.view["players"]] == [ann.you, bob_id, cat.you]
    assert back.view["game"]["turn"] == bob_id and back.view["game"]["legal"]["play"]
    for c in (ann, cat):
        await saw(c, "reconnected", player=bob_id)
        assert seat(c, bob_id)["connected"] is True
        # the welcome is at the version of the reconnect itself
        reconnect = next(m for m in c.messages if m["type"] == "patch"
                         and any(e["kind"] == "reconnected" for e in m["events"]))
        assert reconnect["version"] == welcome["version"]
    await level([ann, back, cat])
    # and the version line goes on for everyone, the returning player included
    await ok(back, {"type": "play", "card": hand[0]})
    await level([ann, back, cat])
    assert back.messages[-2]["type"] == "patch" and back.messages[-2]["version"] == welcome["version"] + 1
    assert len(back.view["hand"]) == len(hand) - 1
    assert ann.view["players"] == back.view["players"] == cat.view["players"]
    assert ann.view["game"]["top"] == back.view["game"]["top"] == hand[0]
    assert (ann.gaps, back.gaps, cat.gaps) == (0, 0, 0)
    for c in (ann, back, cat):
        await c.close()


async def test_a_second_socket_with_the_same_token_replaces_the_first(server):
    ann, bob = await started(server, ["Ann", "Bob"], {"deck": FIVES, **CALM})
    version, hand = bob.version, list(bob.view["hand"])
    bob2 = await Client(server, bob.code, bob.token).connect()
    assert await close_code(bob.ws) == 4409
    assert bob2.you == bob.you and bob2.view["hand"] == hand
    assert bob2.messages[0]["version"] == version  # nothing changed for anyone: no new version
    await quiet(ann)
    # the new socket follows the room without a gap; the old one's end is no disconnect
    await ok(ann, {"type": "play", "card": ann.view["hand"][0]})
    await level([ann, bob2])
    assert bob2.version == version + 1 and bob2.messages[-1]["type"] == "patch"
    await ok(bob2, {"type": "play", "card": hand[0]})
    await level([ann, bob2])
    assert bob2.version == version + 2 and bob2.gaps == 0
    assert seat(ann, bob.you)["connected"] is True
    assert count(ann, "disconnected") == count(ann, "reconnected") == 0
    # a third socket replaces the second the same way
    bob3 = await Client(server, bob.code, bob.token).connect()
    assert await close_code(bob2.ws) == 4409
    assert bob3.version == ann.version and bob3.view["hand"] == bob2.view["hand"]
    for c in (ann, bob3):
        await c.close()


@pytest.mark.settings(reconnect_grace_ms=300)
async def test_a_seat_away_past_the_reconnect_grace_goes_to_a_bot(server):
    host = server.create("Ann", {"deck": FIVES, **CALM})
    bob = server.join(host["code"], "Bob")["player_id"]  # never comes
    cat_info = server.join(host["code"], "Cat")
    ann = await Client(server, host["code"], host["token"]).connect()
    cat = await Client(server, host["code"], cat_info["token"]).connect()
    await level([ann, cat])
    await ok(ann, {"type": "start"})
    await cat.close()  # goes in the round
    await saw(ann, "disconnected", player=cat.you)
    await ok(ann, {"type": "play", "card": ann.view["hand"][0]})
    for player in (bob, cat.you):
        await saw(ann, "replaced_by_bot", player=player)
        await saw(ann, "played", player=player)  # the bots play the seats
        assert seat(ann, player)["bot"] is True
    await ann.until_view(lambda v: v["game"]["turn"] == ann.you)
    # the token stays valid: Cat's hello takes the seat back at once, hand as the bot left it
    held = seat(ann, cat.you)["cards"]
    back = await Client(server, host["code"], cat_info["token"]).connect()
    await saw(ann, "reconnected", player=cat.you)
    await level([ann, back])
    assert back.you == cat.you and seat(ann, cat.you)["bot"] is False and seat(ann, cat.you)["connected"]
    assert len(back.view["hand"]) == held == seat(back, cat.you)["cards"]
    played = count(ann, "played", player=cat.you)
    await ok(ann, {"type": "play", "card": ann.view["hand"][0]})
    await ann.until_view(lambda v: v["game"]["turn"] == cat.you)  # Bob's bot played; Cat's turn waits
    await level([ann, back])
    await quiet(ann, back)
    assert count(ann, "played", player=cat.you) == played and ann.view["game"]["turn"] == cat.you
    for c in (ann, back):
        await c.close()


# -- message ids ----------------------------------------------------------------------------------

async def test_a_repeated_message_id_gets_the_same_answer_and_never_applies_twice(server):
    ann, bob = await started(server, ["Ann", "Bob"], {"deck": FIVES, **CALM})
    # an accepted draw sent again: the same ack, still one card
    first = await ok(ann, {"type": "draw"}, msg_id="d-1")
    await level([ann, bob])
    assert len(ann.view["hand"]) == 8 and seat(bob, ann.you)["cards"] == 8
    version = ann.version
    assert await ann.send({"type": "draw"}, msg_id="d-1") == first
    await quiet(ann, bob)
    assert ann.version == version and len(ann.view["hand"]) == 8
    # the same frame twice at once: two equal answers, one card
    frame = json.dumps({"type": "draw", "id": "d-2"})
    await ann.send_raw(frame)
    await ann.send_raw(frame)
    await ann.until(lambda m: sum(1 for x in ann.messages if x.get("id") == "d-2") == 2)
    answers = [m for m in ann.messages if m.get("id") == "d-2"]
    assert answers[0] == answers[1] and answers[0]["type"] == "ack"
    await level([ann, bob])
    await quiet(ann, bob)
    assert len(ann.view["hand"]) == 9 and count(bob, "drew", player=ann.you) == 2
    # a refused play sent again once it would be legal: still the first answer, nothing applied
    card = bob.view["hand"][0]
    early = await refused(bob, {"type": "play", "card": card}, "not_your_turn", ann, msg_id="early")
    await ok(ann, {"type": "play", "card": ann.view["hand"][0]})
    await level([ann, bob])
    assert bob.view["game"]["turn"] == bob.you and card in bob.view["game"]["legal"]["play"]
    again = await refused(bob, {"type": "play", "card": card}, "not_your_turn", ann, msg_id="early")
    assert again == early
    # ids are each player's own: Ann's "early" is a message of hers
    await ok(ann, {"type": "react", "reaction": "gg"}, msg_id="early")
    await level([ann, bob])
    # a fresh id applies
    await ok(bob, {"type": "play", "card": card}, msg_id="later")
    await level([ann, bob])
    assert len(bob.view["hand"]) == 6
    # the answers outlive the socket
    await ann.close()
    await saw(bob, "disconnected", player=ann.you)
    ann2 = await Client(server, ann.code, ann.token).connect()
    await level([ann2, bob])
    hand = list(ann2.view["hand"])
    assert await ann2.send({"type": "draw"}, msg_id="d-1") == first
    assert await ann2.send({"type": "play", "card": hand[0]}, msg_id="early") == {
        "type": "ack", "id": "early"}
    await quiet(ann2, bob)
    assert ann2.view["hand"] == hand
    for c in (ann2, bob):
        await c.close()


# -- races ----------------------------------------------------------------------------------------

async def _answers(c: Client, ids: list[str]) -> list[dict[str, Any]]:
    await c.until(lambda m: all(i in c.answers for i in ids))
    return [c.answers[i] for i in ids]


async def test_two_plays_at_once_by_the_turn_player_apply_once(server):
    ann, bob = await started(server, ["Ann", "Bob"], {"deck": FIVES, **CALM})
    hand = ann.view["hand"]
    second = next((c for c in hand[1:] if c != hand[0]), hand[1])
    await ann.send_raw(json.dumps({"type": "play", "card": hand[0], "id": "race-1"}))
    await ann.send_raw(json.dumps({"type": "play", "card": second, "id": "race-2"}))
    answers = await _answers(ann, ["race-1", "race-2"])
    assert sorted(a["type"] for a in answers) == ["ack", "error"]
    assert next(a for a in answers if a["type"] == "error")["code"] == "not_your_turn"
    await level([ann, bob])
    await quiet(ann, bob)
    assert len(ann.view["hand"]) == 6 and count(bob, "played", player=ann.you) == 1
    assert bob.view["game"]["turn"] == bob.you


async def test_the_host_starting_twice_at_once_starts_one_round(server):
    ann, bob = await seated(server, ["Ann", "Bob"], {"deck": FIVES, **CALM})
    await ann.send_raw(json.dumps({"type": "start", "id": "s-1"}))
    await ann.send_raw(json.dumps({"type": "start", "id": "s-2"}))
    answers = await _answers(ann, ["s-1", "s-2"])
    assert answers[0]["type"] == "ack" and answers[1]["code"] == "not_in_lobby"
    await level([ann, bob])
    await quiet(ann, bob)
    assert count(bob, "started") == 1 and bob.view["room"]["round"] == 1
    assert len(bob.view["hand"]) == 7


async def test_two_catches_at_once_catch_once_and_uno_races_a_catch(server):
    ann, bob, cat = await started(server, ["Ann", "Bob", "Cat"], {"deck": FIVES, "hand_size": 2, **CALM})
    clients = [ann, bob, cat]
    await ok(ann, {"type": "play", "card": ann.view["hand"][0]})  # one card left, no UNO called
    await level(clients)
    assert [e["player"] for e in bob.view["game"]["exposed"]] == [ann.you]
    answers = await asyncio.gather(bob.send({"type": "catch", "target": ann.you}),
                                   cat.send({"type": "catch", "target": ann.you}))
    assert sorted(a["type"] for a in answers) == ["ack", "error"]
    assert next(a for a in answers if a["type"] == "error")["code"] == "not_exposed"
    await level(clients)
    await quiet(*clients)
    assert len(ann.view["hand"]) == 3 and seat(bob, ann.you)["cards"] == 3
    assert all(count(c, "caught", player=ann.you) == 1 for c in clients)
    # Bob goes down to one card without calling; his own UNO and Ann's catch cross: one wins
    await ok(bob, {"type": "play", "card": bob.view["hand"][0]})
    await level(clients)
    assert [e["player"] for e in ann.view["game"]["exposed"]] == [bob.you]
    uno, catch = await asyncio.gather(bob.send({"type": "uno"}),
                                      ann.send({"type": "catch", "target": bob.you}))
    await level(clients)
    await quiet(*clients)
    if uno["type"] == "ack":
        assert catch["code"] == "not_exposed"
        assert len(bob.view["hand"]) == 1 and seat(ann, bob.you)["uno"] is True
    else:
        assert catch["type"] == "ack" and uno["code"] == "not_one_card"
        assert len(bob.view["hand"]) == 3
    assert ann.view["game"]["exposed"] == []


# -- the room's lifecycle --------------------------------------------------------------------------

async def test_the_host_adds_and_removes_seats_and_sets_the_rules(server):
    ann, bob, cat = await seated(server, ["Ann", "Bob", "Cat"])
    await ok(ann, {"type": "add_bot", "level": "easy"})
    await ok(ann, {"type": "add_bot", "level": "hard"})
    await level([ann, bob, cat])
    bots = [p for p in bob.view["players"] if p["bot"]]
    # each bot a name of its own from the list, and a colour of its own
    assert len({p["name"] for p in bots}) == 2 and all(p["name"] in NAMES for p in bots)
    assert [p["level"] for p in bots] == ["easy", "hard"] and all(p["connected"] for p in bots)
    assert len({p["hue"] for p in bots}) == 2 and all(isinstance(p["hue"], int) for p in bob.view["players"])
    assert count(bob, "bot_added") == 2
    # remove a bot, then kick a human: the kicked socket is closed and the token revoked
    await ok(ann, {"type": "remove_seat", "player_id": bots[0]["id"]})
    await ok(ann, {"type": "remove_seat", "player_id": cat.you})
    assert await close_code(cat.ws) == 4401
    await level([ann, bob])
    assert [p["id"] for p in bob.view["players"]] == [ann.you, bob.you, bots[1]["id"]]
    assert count(bob, "left", player=cat.you) == 1
    ws = await hello(server, ann.code, hello_frame(cat.token))
    assert await close_code(ws) == 4401
    # rules: the view's room.rules follows; what was not named stays
    rules = dict(ann.view["room"]["rules"])
    await ok(ann, {"type": "set_rules", "rules": {"hand_size": 5, "draw": "one"}})
    await level([ann, bob])
    assert bob.view["room"]["rules"] == {**rules, "hand_size": 5, "draw": "one"}
    await ok(ann, {"type": "set_rules", "rules": {"preset": "printed", "seven": "off"}})
    await level([ann, bob])
    assert bob.view["room"]["rules"]["draw"] == "until_playable"
    assert bob.view["room"]["rules"]["seven"] == "off" and bob.view["room"]["rules"]["hand_size"] == 7
    await ok(ann, {"type": "start"})
    await level([ann, bob])
    assert bob.view["room"]["status"] == "playing"
    assert [p["cards"] for p in bob.view["players"]] == [7, 7, 7]
    for c in (ann, bob):
        await c.close()


async def test_one_human_and_a_bot_can_play(server):
    # every card matches and a player with a playable card may not draw (until_playable): the
    # bot's one legal kind of move is a play, so its hand is known exactly (with `voluntary`
    # drawing an easy bot may draw any number of times first)
    (ann,) = await seated(server, ["Ann"], {"deck": FIVES, "draw": "until_playable", **CALM})
    await ok(ann, {"type": "add_bot"})
    await ok(ann, {"type": "start"})
    bot = ann.view["players"][1]
    assert bot["bot"] and ann.view["room"]["status"] == "playing" and ann.view["game"]["turn"] == ann.you
    await ok(ann, {"type": "play", "card": ann.view["hand"][0]})
    await saw(ann, "played", player=bot["id"])
    await ann.until_view(lambda v: v["game"]["turn"] == ann.you)
    assert len(ann.view["hand"]) == 6
    assert count(ann, "drew", player=bot["id"]) == 0
    assert seat(ann, bot["id"])["cards"] == cards_after(ann, bot["id"], 7) == 6
    await ann.close()


async def test_the_host_leaving_the_lobby_passes_host_to_the_next_human(server):
    ann, bob, cat = await seated(server, ["Ann", "Bob", "Cat"])
    await ok(ann, {"type": "add_bot"})
    await ok(ann, {"type": "leave"})
    assert await close_code(ann.ws) == 1000
    for c in (bob, cat):
        await saw(c, "left", player=ann.you)
        assert c.view["room"]["host"] == bob.you
        assert [(p["name"], p["bot"]) for p in c.view["players"]][:2] == [("Bob", False), ("Cat", False)]
        assert c.view["players"][2]["bot"] and c.view["players"][2]["name"] in NAMES
    ws = await hello(server, ann.code, hello_frame(ann.token))
    assert await close_code(ws) == 4401
    await level([bob, cat])
    await refused(cat, {"type": "add_bot"}, "not_host", bob)
    await ok(bob, {"type": "add_bot"})
    for c in (bob, cat):
        await c.close()


async def test_leaving_during_a_game_hands_the_seat_to_a_bot(server):
    ann, bob, cat = await started(server, ["Ann", "Bob", "Cat"], {"deck": FIVES, **CALM})
    assert ann.view["game"]["turn"] == ann.you
    hand_size = len(ann.view["hand"])
    await ok(ann, {"type": "leave"})
    assert await close_code(ann.ws) == 1000
    for c in (bob, cat):
        await saw(c, "replaced_by_bot", player=ann.you)
        assert count(c, "left", player=ann.you) == 1
        assert seat(c, ann.you)["bot"] is True and c.view["room"]["host"] == bob.you
        # the bot plays the seat it took (it was its turn)
        await saw(c, "played", player=ann.you)
        assert seat(c, ann.you)["cards"] == cards_after(c, ann.you, hand_size)
    ws = await hello(server, ann.code, hello_frame(ann.token))
    assert await close_code(ws) == 4401
    await level([bob, cat])
    assert bob.view["game"]["turn"] == bob.you
    for c in (bob, cat):
        await c.close()


async def test_joining_during_a_round_makes_a_spectator_seated_at_the_rematch(server):
    ann, bob = await started(server, ["Ann", "Bob"], {"deck": FIVES, "hand_size": 2, **CALM})
    dan_info = server.join(ann.code, "Dan")
    assert dan_info["spectator"] is True
    dan = await Client(server, ann.code, dan_info["token"]).connect()
    await level([ann, bob, dan])
    assert dan.view["hand"] == [] and "legal" not in dan.view["game"]
    assert dan.view["room"]["spectators"] == [{"id": dan.you, "name": "Dan", "connected": True}]
    assert [p["id"] for p in dan.view["players"]] == [ann.you, bob.you]
    assert dan.view["players"] == ann.view["players"]
    public = {k: v for k, v in ann.view["game"].items() if k != "legal"}
    assert dan.view["game"] == public
    await refused(dan, {"type": "play", "card": "r-5"}, "spectator", ann, bob)
    # a spectator's drop and return are announced like a player's
    await dan.close()
    await saw(ann, "disconnected", player=dan.you)
    dan = await Client(server, ann.code, dan_info["token"]).connect()
    await saw(ann, "reconnected", player=dan.you)
    await level([ann, bob, dan])
    assert ann.view["room"]["spectators"] == [{"id": dan.you, "name": "Dan", "connected": True}]
    # a spectator may leave too: ack, then a normal close
    eve = await Client(server, ann.code, server.join(ann.code, "Eve")["token"]).connect()
    await ok(eve, {"type": "leave"})
    assert await close_code(eve.ws) == 1000
    await saw(dan, "left", player=eve.you)
    await level([ann, bob, dan])
    assert [s["id"] for s in ann.view["room"]["spectators"]] == [dan.you]
    # the round: Ann calls UNO, Bob too, Ann wins
    await ok(ann, {"type": "play", "card": ann.view["hand"][0], "uno": True})
    await ok(bob, {"type": "play", "card": bob.view["hand"][0], "uno": True})
    await ok(ann, {"type": "play", "card": ann.view["hand"][0]})
    await level([ann, bob, dan])
    assert dan.view["room"]["status"] == "round_over" and dan.view["game"]["winner"] == ann.you
    assert count(dan, "played") == 3 and count(dan, "round_over") == 1
    await ok(ann, {"type": "rematch"})
    await level([ann, bob, dan])
    assert dan.view["room"]["spectators"] == [] and dan.view["room"]["round"] == 2
    assert [p["id"] for p in ann.view["players"]] == [ann.you, bob.you, dan.you]
    assert len(dan.view["hand"]) == 2 and "legal" in dan.view["game"]
    for c in (ann, bob, dan):
        await c.close()


# -- react, sync, ping ------------------------------------------------------------------------------

async def test_reactions_sync_and_ping(server):
    ann, bob = await seated(server, ["Ann", "Bob"])
    await ok(ann, {"type": "react", "reaction": "gg"})
    await saw(bob, "reaction", player=ann.you, reaction="gg")
    await ok(bob, {"type": "react", "reaction": "lol"})  # one a second each
    await level([ann, bob])
    assert count(ann, "reaction", player=bob.you, reaction="lol") == 1
    await refused(ann, {"type": "react", "reaction": "wow"}, "rate_limited", bob)
    await refused(ann, {"type": "react", "reaction": "dance"}, "bad_reaction", bob)
    # sync: a fresh welcome of what the client has
    view, version, seen = ann.view, ann.version, len(ann.messages)
    await ok(ann, {"type": "sync"})
    if not any(m["type"] == "welcome" for m in ann.messages[seen:]):
        await ann.until(lambda m: m["type"] == "welcome")
    welcome = next(m for m in ann.messages[seen:] if m["type"] == "welcome")
    assert welcome["version"] == version and welcome["state"] == view and welcome["you"] == ann.you
    await quiet(ann, bob)
    # ping: pong, no ack
    await ann.send_raw('{"type": "ping"}')
    assert await ann.recv() == {"type": "pong"}
    for c in (ann, bob):
        await c.close()


# -- public HTTP reads -----------------------------------------------------------------------------

async def test_the_room_summary_shows_no_card_and_the_rules_catalog_lists_everything(server):
    ann, bob = await started(server, ["Ann", "Bob"], CALM)
    await ok(ann, {"type": "draw"})
    await level([ann, bob])
    for code in (ann.code, ann.code.lower()):
        r = httpx.get(f"{server.url}/api/rooms/{code}")
        assert r.status_code == 200
        summary = r.json()
        assert summary["code"] == ann.code and summary["status"] == "playing"
        assert summary["rules"] == ann.view["room"]["rules"]
        assert [(s["id"], s["name"], s["bot"], s["connected"]) for s in summary["seats"]] == [
            (ann.you, "Ann", False, True), (bob.you, "Bob", False, True)]
        public = json.dumps({k: v for k, v in summary.items() if k != "rules"})  # the deck is rules
        assert not CARD_RE.search(public), public
        assert "token" not in public and "hand" not in public and "seed" not in public
    catalog = httpx.get(f"{server.url}/api/rules").json()
    assert {"mercyless", "printed"} <= set(catalog["presets"])
    assert catalog["presets"]["printed"]["draw"] == "until_playable"
    assert set(catalog["options"]) == set(ann.view["room"]["rules"])
    for name, option in catalog["options"].items():
        assert option["default"] == catalog["presets"]["mercyless"][name]
        allowed = [{"values"}, {"min", "max"}, {"codes", "max_total"}]  # the deck: any known card codes
        assert any(keys <= set(option) for keys in allowed), name
    assert catalog["options"]["draw"]["values"] == ["voluntary", "until_playable", "one"]
    health = httpx.get(f"{server.url}/healthz")
    assert health.status_code == 200 and health.json()["ok"] is True
    ready = httpx.get(f"{server.url}/readyz")
    assert ready.status_code == 200 and ready.json()["ready"] is True
    for c in (ann, bob):
        await c.close()


async def test_a_room_left_to_bots_makes_the_next_newcomer_its_host(server):
    (ann,) = await seated(server, ["Ann"], {"deck": FIVES, **CALM})
    await ok(ann, {"type": "add_bot"})
    await ok(ann, {"type": "leave"})
    assert await close_code(ann.ws) == 1000
    bob_info = server.join(ann.code, "Bob")
    bob = await Client(server, ann.code, bob_info["token"]).connect()
    assert bob.view["room"]["host"] == bob.you
    assert [(p["bot"], p["name"] == "Bob") for p in bob.view["players"]] == [(True, False), (False, True)]
    await ok(bob, {"type": "start"})
    # the same in a round: the host's seat went to a bot, a spectator takes over the room
    cat_info = server.join(ann.code, "Cat")
    cat = await Client(server, ann.code, cat_info["token"]).connect()
    await ok(bob, {"type": "leave"})
    await cat.until_view(lambda v: v["room"]["host"] == cat.you)
    await cat.until_view(lambda v: v["room"]["status"] != "playing", timeout=30)  # two bots finish it
    await ok(cat, {"type": "rematch"})
    await cat.until_view(lambda v: v["room"]["round"] == 2 and cat.you in [p["id"] for p in v["players"]])
    await cat.close()


async def test_a_welcome_carries_what_happened_lately_as_its_player_may_see_it(server):
    ann, bob = await started(server, ["Ann", "Bob"], {"deck": FIVES, **CALM})
    await ok(ann, {"type": "play", "card": ann.view["hand"][0]})
    await ok(bob, {"type": "draw"})
    await level([ann, bob])
    await bob.close()
    back = await Client(server, ann.code, bob.token).connect()  # a reload
    log = back.messages[0]["log"]
    kinds = [e["kind"] for e in log]
    assert kinds.index("started") < kinds.index("played") < kinds.index("drew")
    assert next(e for e in log if e["kind"] == "drew")["cards"]  # Bob's own draw, with its card
    seen = len(ann.messages)
    await ok(ann, {"type": "sync"})
    if not any(m["type"] == "welcome" for m in ann.messages[seen:]):
        await ann.until(lambda m: m["type"] == "welcome")
    welcome = next(m for m in ann.messages[seen:] if m["type"] == "welcome")
    drew = next(e for e in welcome["log"] if e["kind"] == "drew")
    assert drew["player"] == bob.you and "cards" not in drew  # not Ann's to see
    for c in (ann, back):
        await c.close()
