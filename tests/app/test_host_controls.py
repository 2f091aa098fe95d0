"""What the host controls between rounds and at the door: back to the lobby after a round
(seats, bots and scores kept), removing any seat or spectator (a removed player stays out),
locking the room; and the room's door limits: spectators per room, joins and rooms per
address, rooms per server, room codes looked up."""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any

import httpx
import pytest
import websockets

from .conftest import module_server
from .harness import Client, ServerProcess
from .tables import level, ok, quiet, refused, seated, started

FIVES = {"r-5": 20, "y-5": 20, "g-5": 20, "b-5": 20}
QUICK = {"deck": FIVES, "hand_size": 2, "turn_timer_s": 0, "catch_window_s": 30}


@pytest.fixture
def server(backend: str, request: pytest.FixtureRequest, module_servers) -> ServerProcess:
    return module_server(backend, request, module_servers)


async def _finish_round(ann: Client, bob: Client, *others: Client) -> None:
    """Ann and Bob (two cards each, every card plays) call UNO; Ann wins."""
    await ok(ann, {"type": "play", "card": ann.view["hand"][0], "uno": True})
    await ok(bob, {"type": "play", "card": bob.view["hand"][0], "uno": True})
    await ok(ann, {"type": "play", "card": ann.view["hand"][0]})
    await level([ann, bob, *others])
    assert ann.view["room"]["status"] in ("round_over", "match_over")


async def _close_code(ws: Any) -> int | None:
    with contextlib.suppress(websockets.ConnectionClosed):
        while True:
            await asyncio.wait_for(ws.recv(), 10)
    return ws.close_code


def _join(server: ServerProcess, code: str, name: str) -> httpx.Response:
    return httpx.post(f"{server.url}/api/rooms/{code}/join", json={"name": name}, timeout=10)


# -- back to the lobby ------------------------------------------------------------------------------

async def test_the_host_takes_the_room_back_to_the_lobby_and_the_match_goes_on(server):
    ann, bob = await started(server, ["Ann", "Bob"], {**QUICK, "target_score": 5000})
    await refused(ann, {"type": "lobby"}, "not_over", bob)  # a round in play
    await _finish_round(ann, bob)
    scores = {p["id"]: p["score"] for p in ann.view["players"]}
    assert scores[ann.you] > 0
    await refused(bob, {"type": "lobby"}, "not_host", ann)
    await ok(ann, {"type": "lobby"})
    await level([ann, bob])
    room = bob.view["room"]
    assert room["status"] == "lobby" and room["round"] == 1 and bob.view["game"] is None
    assert {p["id"]: p["score"] for p in bob.view["players"]} == scores  # seats and scores kept
    assert any(e["kind"] == "lobby" and e["player"] == ann.you for e in bob.events)
    # the lobby is open again: rules, bots
    await ok(ann, {"type": "set_rules", "rules": {"hand_size": 3}})
    await ok(ann, {"type": "add_bot", "level": "easy"})
    await level([ann, bob])
    bot = bob.view["players"][2]["id"]
    await ok(ann, {"type": "remove_seat", "player_id": bot})
    # start deals the next round of the same match: scores carried, the round counted on
    await ok(ann, {"type": "start"})
    await level([ann, bob])
    assert bob.view["room"]["round"] == 2 and bob.view["room"]["status"] == "playing"
    assert {p["id"]: p["score"] for p in bob.view["players"]} == scores
    assert len(bob.view["hand"]) == 3
    for c in (ann, bob):
        await c.close()


# -- a bot's level ----------------------------------------------------------------------------------

def _level_of(c: Client, player: str) -> str | None:
    return next(p["level"] for p in c.view["players"] if p["id"] == player)


async def test_the_host_sets_a_bots_level_in_the_lobby_not_while_a_round_plays(server):
    ann, bob = await seated(server, ["Ann", "Bob"], {**QUICK, "target_score": 5000})
    await ok(ann, {"type": "add_bot", "level": "easy"})
    await level([ann, bob])
    bot = bob.view["players"][2]["id"]
    await ok(ann, {"type": "set_bot", "player_id": bot, "level": "hard"})
    await level([ann, bob])
    assert _level_of(bob, bot) == "hard"
    assert [e for e in bob.events if e["kind"] == "bot_level"] == [
        {"kind": "bot_level", "player": bot, "level": "hard", "by": ann.you}]
    # refused: nothing changes for anyone
    await refused(bob, {"type": "set_bot", "player_id": bot, "level": "easy"}, "not_host", ann)
    await refused(ann, {"type": "set_bot", "player_id": bob.you, "level": "easy"}, "not_a_bot", bob)
    await refused(ann, {"type": "set_bot", "player_id": "b0000000000", "level": "easy"}, "not_a_bot", bob)
    await refused(ann, {"type": "set_bot", "player_id": bot, "level": "godlike"}, "bad_level", bob)
    await refused(ann, {"type": "set_bot", "player_id": bot}, "bad_message", bob)
    # the level it has: acknowledged, nothing to send
    await ok(ann, {"type": "set_bot", "player_id": bot, "level": "hard"})
    await quiet(ann, bob)
    # not while a round plays; again once it is over
    await ok(ann, {"type": "start"})
    await level([ann, bob])
    assert _level_of(bob, bot) == "hard"
    await refused(ann, {"type": "set_bot", "player_id": bot, "level": "normal"}, "not_in_lobby", bob)
    for c in (ann, bob):
        await c.close()


# -- removing anyone, and staying removed -------------------------------------------------------------

async def test_a_stranger_who_came_in_mid_round_can_be_removed_and_stays_out(server):
    """A mid-round joiner used to be seated at the next rematch with no way to remove them
    (remove_seat answered not_in_lobby for ever)."""
    ann, bob = await started(server, ["Ann", "Bob"], {**QUICK, "target_score": 5000})
    zed_info = server.join(ann.code, "Zed")
    zed = await Client(server, ann.code, zed_info["token"]).connect()
    await level([ann, bob, zed])
    await _finish_round(ann, bob, zed)
    await ok(ann, {"type": "lobby"})
    await level([ann, bob, zed])
    assert [p["id"] for p in ann.view["players"]] == [ann.you, bob.you, zed.you]  # seated now
    await refused(bob, {"type": "remove_seat", "player_id": zed.you}, "not_host", ann)
    await ok(ann, {"type": "remove_seat", "player_id": zed.you})
    await level([ann, bob])
    assert [p["id"] for p in ann.view["players"]] == [ann.you, bob.you]
    assert ann.view["room"]["removed"] == 1
    assert await _close_code(zed.ws) == 4401  # the removed player's socket
    # the same name cannot come back (the address is the host's own here: not barred)
    for name in ("Zed", "zed", "ＺＥＤ"):
        answer = _join(server, ann.code, name)
        assert answer.status_code == 403 and answer.json()["error"]["code"] == "barred", (name, answer.text)
    assert any(e["kind"] == "left" and e.get("removed") and e["by"] == ann.you for e in bob.events)
    again = await websockets.connect(f"{server.ws_url}/ws/{ann.code}")
    await again.send(json.dumps({"type": "hello", "token": zed_info["token"]}))
    assert await _close_code(again) == 4401  # the token went with the seat
    # until the host readmits them
    await ok(ann, {"type": "set_room", "readmit": True})
    assert _join(server, ann.code, "Zed").status_code == 200
    assert _join(server, ann.code, "Someone Else").status_code == 200
    for c in (ann, bob):
        await c.close()


async def test_a_rematch_with_too_few_seats_left_is_refused_not_crashed(server):
    """Removing every other seat after a round, then ``rematch``, dealt a one-player round: the
    engine refused it with a ValueError, a traceback in the log and ``internal`` on the wire
    (with no seat left at all, a ZeroDivisionError)."""
    ann, bob = await started(server, ["Ann", "Bob"], QUICK)
    await _finish_round(ann, bob)
    await ok(ann, {"type": "remove_seat", "player_id": bob.you})
    await level([ann])
    await refused(ann, {"type": "rematch"}, "not_enough_players")
    # a newcomer (seated: the round is over) makes the second seat
    cat = await Client(server, ann.code, server.join(ann.code, "Cat")["token"]).connect()
    await level([ann, cat])
    await ok(ann, {"type": "rematch"})
    await level([ann, cat])
    assert ann.view["room"]["status"] == "playing" and len(ann.view["players"]) == 2
    for c in (ann, bob, cat):
        await c.close()


async def test_a_host_watching_cannot_remove_themselves_and_leave_the_room_unrun(server):
    """A spectator who ran the room (its players had left) could ``remove_seat`` their own id:
    they were gone and barred, the room's host was nobody in it, and the people still watching
    could never take it back to the lobby. ``leave`` is the way out; it passes the room on."""
    ann, bob = await started(server, ["Ann", "Bob"], QUICK)
    cat = await Client(server, ann.code, server.join(ann.code, "Cat")["token"]).connect()
    dan = await Client(server, ann.code, server.join(ann.code, "Dan")["token"]).connect()
    await level([ann, bob, cat, dan])
    await ok(ann, {"type": "leave"})
    await ok(bob, {"type": "leave"})
    await cat.until_view(lambda v: v["room"]["host"] == cat.you)
    await cat.until_view(lambda v: v["room"]["status"] != "playing")  # the bots finish the round
    await level([cat, dan])
    assert [s["id"] for s in cat.view["room"]["spectators"]] == [cat.you, dan.you]
    await refused(cat, {"type": "remove_seat", "player_id": cat.you}, "bad_message", dan)
    await ok(cat, {"type": "leave"})
    await dan.until_view(lambda v: v["room"]["host"] == dan.you)
    for c in (ann, bob, cat, dan):
        await c.close()


async def test_the_host_removes_a_spectator_during_a_round(server):
    ann, bob = await started(server, ["Ann", "Bob"], QUICK)
    eve = await Client(server, ann.code, server.join(ann.code, "Eve")["token"]).connect()
    await level([ann, bob, eve])
    # a seat is removed between rounds only
    await refused(ann, {"type": "remove_seat", "player_id": bob.you}, "not_in_lobby", bob)
    await ok(ann, {"type": "remove_seat", "player_id": eve.you})
    await level([ann, bob])
    assert ann.view["room"]["spectators"] == []
    assert _join(server, ann.code, "Eve").json()["error"]["code"] == "barred"
    for c in (ann, bob):
        await c.close()


async def test_a_locked_room_takes_no_newcomer(server):
    ann, bob = await started(server, ["Ann", "Bob"], QUICK)
    await refused(bob, {"type": "set_room", "locked": True}, "not_host", ann)
    await ok(ann, {"type": "set_room", "locked": True})
    await level([ann, bob])
    assert bob.view["room"]["locked"] is True
    answer = _join(server, ann.code, "Cat")
    assert answer.status_code == 403 and answer.json()["error"]["code"] == "room_locked"
    await ok(ann, {"type": "set_room", "locked": False})
    assert _join(server, ann.code, "Cat").status_code == 200
    for c in (ann, bob):
        await c.close()


async def test_a_set_room_that_changes_nothing_commits_nothing(server):
    """``set_room`` with nothing to change (no field, the lock it has, a readmit with nobody
    barred) was committed and sent to everyone as a ``room_changed``: any host could make
    every socket of the room take a patch per message. It is acknowledged, as ``set_bot`` of
    the level a bot has is, and nothing is sent."""
    ann, bob = await seated(server, ["Ann", "Bob"], QUICK)
    for fields in ({}, {"locked": False}, {"readmit": True}, {"locked": None, "readmit": False}):
        msg = {"type": "set_room", **fields}
        await ok(ann, msg)
        await quiet(ann, bob)
    assert not [e for e in bob.events if e["kind"] == "room_changed"]
    await ok(ann, {"type": "set_room", "locked": True})  # a change still goes out
    await bob.until_view(lambda v: v["room"]["locked"] is True)
    for c in (ann, bob):
        await c.close()


# -- the door's limits ------------------------------------------------------------------------------

@pytest.mark.settings(max_spectators=2)
async def test_spectators_are_capped_per_room(server):
    ann, bob = await started(server, ["Ann", "Bob"], QUICK)
    for name in ("S1", "S2"):
        assert _join(server, ann.code, name).json()["spectator"] is True
    answer = _join(server, ann.code, "S3")
    assert answer.status_code == 409 and answer.json()["error"]["code"] == "room_full"
    await ann.until_view(lambda v: len(v["room"]["spectators"]) == 2)
    for c in (ann, bob):
        await c.close()


@pytest.mark.settings(joins_per_min=3, rooms_per_min=2)
async def test_joins_and_new_rooms_per_address_are_limited(server):
    host = server.create("Ann")
    second = server.create("Ann")
    answer = httpx.post(f"{server.url}/api/rooms", json={"name": "Ann"}, timeout=10)
    assert answer.status_code == 429 and answer.json()["error"]["code"] == "rate_limited"
    for name in ("B", "C"):
        assert _join(server, host["code"], name).status_code == 200
    assert _join(server, second["code"], "D").status_code == 200
    answer = _join(server, second["code"], "E")
    assert answer.status_code == 429 and answer.json()["error"]["code"] == "rate_limited"


@pytest.mark.settings(max_rooms=2, rooms_per_min=0)
async def test_the_server_holds_a_bounded_number_of_rooms_in_use(server):
    """MAX_ROOMS counts the rooms someone opened (said hello in): rooms created and never
    opened expire soon (UNCLAIMED_ROOM_TTL_MS) and fill nothing."""
    # the module's server is its own for these settings; a real Redis's index is per prefix
    unopened = [server.create(name) for name in ("Ann", "Bob", "Cat")]  # none opened: all fit
    for made in unopened[:2]:
        await (await Client(server, made["code"], made["token"]).connect()).close()
    answer = httpx.post(f"{server.url}/api/rooms", json={"name": "Dan"}, timeout=10)
    assert answer.status_code == 503 and answer.json()["error"]["code"] == "server_full"


@pytest.mark.settings(failed_joins_per_min=3)
async def test_looking_up_unknown_codes_counts_as_failed_joins(server):
    """GET /api/rooms/{code} answered ~185 codes a second with no limit."""
    real = server.create("Ann")["code"]
    assert httpx.get(f"{server.url}/api/rooms/{real}", timeout=10).status_code == 200
    for code in ("AAAAAA", "BBBBBB", "CCCCCC"):
        assert httpx.get(f"{server.url}/api/rooms/{code}", timeout=10).status_code == 404
    blocked = httpx.get(f"{server.url}/api/rooms/{real}", timeout=10)
    assert blocked.status_code == 429 and blocked.json()["error"]["code"] == "rate_limited"
    assert _join(server, real, "Bob").status_code == 429
