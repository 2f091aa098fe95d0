"""Every error a client can meet, over real sockets and HTTP: each with its stable code, and a
refused message changes nothing (no new version, no patch, the same view for everyone).

One server per backend (and per settings) serves the whole module; every test plays in rooms of
its own.
"""

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

FIVES = {"r-5": 20, "y-5": 20, "g-5": 20, "b-5": 20}  # every card matches every other
# r-5 and b-6 never match each other, and whatever number is on top one of them matches it
SPLIT = {"r-5": 30, "b-6": 30, "w-wild": 20, "y-5": 1, "g-6": 1}
STACKY = {"w-draw6": 30, "r-5": 10, "y-5": 10, "g-5": 10, "b-5": 10}
CALM = {"turn_timer_s": 0, "catch_window_s": 30}  # no timer moves the room while a test looks


# -- fixtures -----------------------------------------------------------------------------------

@pytest.fixture
def server(backend: str, request: pytest.FixtureRequest, module_servers) -> ServerProcess:
    """The module's server for this backend and these settings (started on first use)."""
    return module_server(backend, request, module_servers)


# -- helpers ------------------------------------------------------------------------------------

async def refused_frame(c: Client, frame: str | bytes, code: str, msg_id: str | None,
                        *others: Client) -> None:
    """A raw frame gets ``error`` ``code`` with ``msg_id``; nothing changes, the socket stays."""
    watch = (c, *others)
    before = [(x.version, x.view) for x in watch]
    await c.send_raw(frame)
    answer = await c.until(lambda m: m["type"] in ("ack", "error", "welcome", "patch"))
    assert answer["type"] == "error" and answer["code"] == code and answer["id"] == msg_id, (frame, answer)
    await quiet(*watch)
    assert [(x.version, x.view) for x in watch] == before


async def close_code(ws: Any, timeout: float = 5.0) -> tuple[int | None, list[dict[str, Any]]]:
    """Read until the server closes the socket: its close code and what came before."""
    seen = []
    with contextlib.suppress(websockets.ConnectionClosed):
        while True:
            seen.append(json.loads(await asyncio.wait_for(ws.recv(), timeout)))
    return ws.close_code, seen


async def draw_until(c: Client, done) -> None:
    """Voluntary draws (they never end the turn) until ``done(hand, legal plays)``."""
    for _ in range(15):
        if done(c.view["hand"], c.view["game"]["legal"]["play"]):
            return
        await ok(c, {"type": "draw"})
    raise AssertionError(f"no such hand after 15 draws: {c.view['hand']}")


def seat(c: Client, player: str) -> dict[str, Any]:
    return next(p for p in c.view["players"] if p["id"] == player)


# -- frames -------------------------------------------------------------------------------------

LONG_ID = "x" * 65
FRAMES: list[tuple[str | bytes, str, str | None]] = [
    # not JSON, or not an object: no id to answer to
    ("{not json", "bad_message", None),
    ("", "bad_message", None),
    ("[1, 2]", "bad_message", None),
    ("null", "bad_message", None),
    ('"draw"', "bad_message", None),
    ('{"type": "draw", "id": NaN}', "bad_message", None),
    ('{"type": "draw", "id": "\\ud800"}', "bad_message", None),  # a lone surrogate
    ("[" * 1500 + "]" * 1500, "bad_message", None),  # nested deeper than the parser goes
    (b"\xff\xfe{}", "bad_message", None),  # a binary frame that is not UTF-8
    # no usable id
    ('{"type": "draw"}', "bad_message", None),
    ('{"type": "fly"}', "bad_message", None),
    ('{"type": "draw", "id": 7}', "bad_message", None),
    ('{"type": "draw", "id": null}', "bad_message", None),
    ('{"type": "draw", "id": ""}', "bad_message", None),
    (f'{{"type": "draw", "id": "{LONG_ID}"}}', "bad_message", None),
    # unknown types
    ('{"type": "fly", "id": "t1"}', "unknown_type", "t1"),
    ('{"type": "hello", "id": "t2", "token": "abcdefghijkl"}', "unknown_type", "t2"),
    ('{"type": 5, "id": "t3"}', "unknown_type", "t3"),
    (b'{"type": "fly", "id": "t4"}', "unknown_type", "t4"),  # binary frames are read as text
    # missing, wrong-typed and unknown fields
    ('{"type": "catch", "id": "f1"}', "bad_message", "f1"),
    ('{"type": "react", "id": "f2"}', "bad_message", "f2"),
    ('{"type": "remove_seat", "id": "f3"}', "bad_message", "f3"),
    ('{"type": "play", "id": "f4"}', "bad_message", "f4"),
    ('{"type": "set_rules", "id": "f5"}', "bad_message", "f5"),
    ('{"type": "play", "id": "f6", "card": 5}', "bad_message", "f6"),
    ('{"type": "play", "id": "f7", "card": "r-5", "uno": "yes"}', "bad_message", "f7"),
    ('{"type": "play", "id": "f8", "card": "r-5", "color": ["red"]}', "bad_message", "f8"),
    ('{"type": "set_rules", "id": "f9", "rules": ["draw"]}', "bad_message", "f9"),
    ('{"type": "add_bot", "id": "f10", "level": 3}', "bad_message", "f10"),
    ('{"type": "catch", "id": "f11", "target": null}', "bad_message", "f11"),
    ('{"type": "play", "id": "f12", "card": "' + "r" * 65 + '"}', "bad_message", "f12"),
    ('{"type": "draw", "id": "f13", "card": "r-5"}', "bad_message", "f13"),
    ('{"type": "start", "id": "f14", "force": true}', "bad_message", "f14"),
    ('{"type": "sync", "id": "f15", "version": 3}', "bad_message", "f15"),
]


async def test_malformed_messages_are_refused_and_the_socket_stays_open(server):
    ann, bob = await seated(server, ["Ann", "Bob"])
    for frame, code, msg_id in FRAMES:
        await refused_frame(ann, frame, code, msg_id, bob)
    # in a round too, where a bad field must not reach the game
    await ok(ann, {"type": "start"})
    await level([ann, bob])
    card = ann.view["hand"][0]
    for frame, code, msg_id in [
        (json.dumps({"type": "play", "id": "g1", "card": card, "uno": 1}), "bad_message", "g1"),
        (json.dumps({"type": "play", "id": "g2", "card": card, "extra": 1}), "bad_message", "g2"),
        (json.dumps({"type": "play", "card": card}), "bad_message", None),
    ]:
        await refused_frame(ann, frame, code, msg_id, bob)
    assert ann.view["hand"][0] == card and ann.view["game"]["turn"] == ann.you
    await ok(ann, {"type": "play", "card": card} if card in ann.view["game"]["legal"]["play"]
             else {"type": "draw"})
    for c in (ann, bob):
        await c.close()


async def test_a_frame_over_4_kib_closes_the_socket_with_1009(server):
    ann, bob = await seated(server, ["Ann", "Bob"])
    # 4096 bytes is still a frame (refused for its unknown field, the socket stays)
    frame = {"type": "sync", "id": "big", "pad": ""}
    frame["pad"] = "x" * (4096 - len(json.dumps(frame)))
    assert len(json.dumps(frame).encode()) == 4096
    await refused_frame(bob, json.dumps(frame), "bad_message", "big", ann)
    rules, players = ann.view["room"]["rules"], ann.view["players"]
    frame["pad"] += "x"
    await bob.send_raw(json.dumps(frame))
    code, before = await close_code(bob.ws)
    assert code == 1009
    assert all(m["type"] == "error" and m["code"] == "too_large" for m in before), before
    # no trace but the drop; hello again is how the client comes back
    await ann.until_view(lambda v: not seat(ann, bob.you)["connected"])
    bob = await Client(server, ann.code, bob.token).connect()
    await level([ann, bob])
    assert ann.view["room"]["rules"] == rules and ann.view["players"] == players == bob.view["players"]
    # the same over multi-byte characters: bytes count, not characters
    await bob.send_raw(json.dumps({"type": "sync", "id": "big2", "pad": "é" * 2100}, ensure_ascii=False))
    code, _ = await close_code(bob.ws)
    assert code == 1009
    # a hello over the limit is closed the same way
    ws = await websockets.connect(f"{server.ws_url}/ws/{ann.code}")
    await ws.send(json.dumps({"type": "hello", "token": bob.token, "pad": "x" * 5000}))
    code, _ = await close_code(ws)
    assert code == 1009
    await ann.close()


async def answered(c: Client, msg: dict[str, Any], msg_id: str) -> dict[str, Any]:
    """``msg``'s answer, sent again with the same id while it is dropped or rate-limited."""
    for _ in range(20):
        await c.send_raw(json.dumps({**msg, "id": msg_id}))
        with contextlib.suppress(TimeoutError):
            return await c.until(lambda m: m.get("id") == msg_id and m.get("code") != "rate_limited",
                                 timeout=0.5)
    raise AssertionError(f"{msg_id} never answered")


@pytest.mark.settings(rate_burst=20, rate_per_s=5)
async def test_a_burst_past_the_limit_gets_one_notice_and_the_socket_stays_usable(server):
    """Past its burst a client's messages are dropped unanswered, but for one ``rate_limited``
    notice a window (docs/server.md "Protocol additions"); sent again later with the same ids
    they are answered, each once."""
    ann, bob = await seated(server, ["Ann", "Bob"])
    before = [(c.version, c.view) for c in (ann, bob)]
    ids = [f"b{i}" for i in range(30)]
    for i in ids:  # all at once, no waiting for answers
        await ann.send_raw(json.dumps({"type": "draw", "id": i}))
    await quiet(ann, bob)  # pings have an allowance of their own; the pong comes after the rest
    answers = {i: ann.answers[i] for i in ids if i in ann.answers}
    assert all(answers[i]["code"] == "not_started" for i in ids[:20])  # the burst: answered normally
    late = [answers[i]["code"] for i in ids[20:] if i in answers]
    assert late.count("rate_limited") == 1 and set(late) <= {"rate_limited", "not_started"}, late
    assert len(late) <= 3  # (a token or two may come back while the burst is read)
    assert [(c.version, c.view) for c in (ann, bob)] == before
    # the bucket refills: what went unanswered is answered when sent again (a try that finds
    # the bucket empty is sent again after a while)
    for i in [i for i in ids if i not in answers or answers[i]["code"] == "rate_limited"]:
        assert (await answered(ann, {"type": "draw"}, i))["code"] == "not_started"
    assert (await answered(ann, {"type": "add_bot"}, "bot"))["type"] == "ack"
    await level([ann, bob])
    assert [p["bot"] for p in bob.view["players"]] == [False, False, True]
    for c in (ann, bob):
        await c.close()


# -- the lobby ------------------------------------------------------------------------------------

async def test_an_id_acknowledged_without_a_change_is_never_applied_later(server):
    """protocol.md: the same id again returns the same answer and never applies the action. A
    message acknowledged with nothing to change (a bot set to the level it has) is answered
    too: sent again after another message changed the bot, it changes nothing back."""
    ann, bob = await seated(server, ["Ann", "Bob"])
    await ok(ann, {"type": "add_bot", "level": "easy"})
    await level([ann, bob])
    bot = next(p["id"] for p in ann.view["players"] if p["bot"])

    def bot_level(c: Client) -> str:
        return next(p["level"] for p in c.view["players"] if p["id"] == bot)

    await ok(ann, {"type": "set_bot", "player_id": bot, "level": "easy"}, msg_id="same-1")
    await ok(ann, {"type": "set_bot", "player_id": bot, "level": "hard"}, msg_id="set-2")
    await level([ann, bob])
    before = [(c.version, c.view) for c in (ann, bob)]
    assert bot_level(bob) == "hard"
    await ok(ann, {"type": "set_bot", "player_id": bot, "level": "easy"}, msg_id="same-1")
    await quiet(ann, bob)
    assert [(c.version, c.view) for c in (ann, bob)] == before
    # the same for the room's lock
    await ok(ann, {"type": "set_room", "locked": False}, msg_id="same-2")
    await ok(ann, {"type": "set_room", "locked": True}, msg_id="lock")
    await level([ann, bob])
    before = [(c.version, c.view) for c in (ann, bob)]
    await ok(ann, {"type": "set_room", "locked": False}, msg_id="same-2")
    await quiet(ann, bob)
    assert [(c.version, c.view) for c in (ann, bob)] == before
    for c in (ann, bob):
        await c.close()


async def test_lobby_errors(server):
    ann, bob = await seated(server, ["Ann", "Bob"])
    # only the host runs the lobby
    for msg in ({"type": "start"}, {"type": "add_bot", "level": "easy"},
                {"type": "set_rules", "rules": {"hand_size": 5}},
                {"type": "remove_seat", "player_id": ann.you}, {"type": "rematch"}):
        await refused(bob, msg, "not_host", ann)
    # bad rules name the field; nothing of a refused set changes
    for rules, field in (({"mercy_limit": 5}, "mercy_limit"), ({"hand_size": 30}, "hand_size"),
                         ({"draw": "sometimes"}, "draw"), ({"bogus": 1}, "bogus"),
                         ({"preset": "house"}, "preset"), ({"scoring": "yes"}, "scoring"),
                         ({"turn_timer_s": 5}, "turn_timer_s"),
                         ({"hand_size": 5, "mercy_limit": 5}, "mercy_limit"),
                         ({"hand_size": 20, "mercy_limit": 15}, "hand_size"),
                         ({"deck": {"r-5": 10}}, "deck"), ({"deck": {"r-55": 1}}, "deck")):
        answer = await refused(ann, {"type": "set_rules", "rules": rules}, "bad_rules", bob)
        assert field in answer["message"], answer
    await refused(ann, {"type": "add_bot", "level": "godlike"}, "bad_level", bob)
    await refused(ann, {"type": "remove_seat", "player_id": "p0000000000"}, "bad_message", bob)
    await refused(ann, {"type": "remove_seat", "player_id": ann.you}, "bad_message", bob)
    for msg in ({"type": "play", "card": "r-5"}, {"type": "draw"}, {"type": "pass"}, {"type": "uno"},
                {"type": "catch", "target": bob.you}, {"type": "choose", "color": "red"}, {"type": "cancel"}):
        await refused(bob, msg, "not_started", ann)
    await refused(ann, {"type": "rematch"}, "not_over", bob)
    # a deck too small to deal is refused at the start
    await ok(ann, {"type": "set_rules", "rules": {"deck": {"r-5": 3, "y-5": 3, "g-5": 3, "b-5": 3}}})
    await level([ann, bob])
    answer = await refused(ann, {"type": "start"}, "bad_rules", bob)
    assert "deck" in answer["message"]
    await ok(ann, {"type": "set_rules", "rules": {"preset": "mercyless"}})
    await ok(ann, {"type": "start"})
    await level([ann, bob])
    # once a round is on, the lobby is closed (the host check comes first)
    for msg in ({"type": "start"}, {"type": "add_bot"}, {"type": "set_rules", "rules": {"hand_size": 5}},
                {"type": "remove_seat", "player_id": bob.you}):
        await refused(ann, msg, "not_in_lobby", bob)
    await refused(bob, {"type": "set_rules", "rules": {"hand_size": 5}}, "not_host", ann)
    for c in (ann, bob):
        await c.close()
    # alone, the host cannot start
    (solo,) = await seated(server, ["Sol"])
    await refused(solo, {"type": "start"}, "not_enough_players")
    await solo.close()


async def test_room_full_over_http_and_for_bots(server):
    host = server.create("Ann")
    code = host["code"]
    for i in range(9):
        server.join(code, f"P{i}")
    error_of(httpx.post(f"{server.url}/api/rooms/{code}/join", json={"name": "Eleven"}), 409, "room_full")
    ann = await Client(server, code, host["token"]).connect()
    await refused(ann, {"type": "add_bot"}, "room_full")
    assert len(ann.view["players"]) == 10
    await ann.close()
    # nine bots fill a room the same way
    other = server.create("Bea")
    bea = await Client(server, other["code"], other["token"]).connect()
    for _ in range(9):
        await ok(bea, {"type": "add_bot"})
    await refused(bea, {"type": "add_bot"}, "room_full")
    late = httpx.post(f"{server.url}/api/rooms/{other['code']}/join", json={"name": "Late"})
    error_of(late, 409, "room_full")
    await bea.close()


# -- a round --------------------------------------------------------------------------------------

async def test_turn_and_card_errors(server):
    ann, bob = await started(server, ["Ann", "Bob"], {"deck": SPLIT, **CALM})
    assert ann.view["game"]["turn"] == ann.you
    for msg in ({"type": "play", "card": bob.view["hand"][0]}, {"type": "draw"}, {"type": "pass"}):
        await refused(bob, msg, "not_your_turn", ann)
    for msg in ({"type": "choose", "color": "red"}, {"type": "cancel"}):
        await refused(bob, msg, "no_choice_pending", ann)
        await refused(ann, msg, "no_choice_pending", bob)
    await refused(ann, {"type": "play", "card": "w-draw10"}, "not_in_hand", bob)
    await refused(ann, {"type": "play", "card": "x-99"}, "not_in_hand", bob)
    await refused(ann, {"type": "pass"}, "pass_not_allowed", bob)
    await refused(ann, {"type": "uno"}, "not_one_card", bob)
    await refused(ann, {"type": "catch", "target": bob.you}, "not_exposed", bob)
    await refused(bob, {"type": "catch", "target": ann.you}, "not_exposed", ann)
    await refused(ann, {"type": "catch", "target": ann.you}, "bad_target", bob)
    await refused(ann, {"type": "catch", "target": "nobody"}, "bad_target", bob)
    # a wild, a playable coloured card and an unplayable one in hand
    await draw_until(ann, lambda hand, legal: "w-wild" in hand and {"r-5", "b-6"} <= set(hand))
    await level([ann, bob])
    legal = ann.view["game"]["legal"]["play"]
    playable = next(c for c in ("r-5", "b-6") if c in legal)
    unplayable = next(c for c in ("r-5", "b-6") if c not in legal)
    await refused(ann, {"type": "play", "card": unplayable}, "illegal_card", bob)
    await refused(ann, {"type": "play", "card": playable, "color": "red"}, "bad_color", bob)
    await refused(ann, {"type": "play", "card": playable, "target": bob.you}, "bad_target", bob)
    await refused(ann, {"type": "play", "card": playable, "top": playable}, "bad_top", bob)
    await refused(ann, {"type": "play", "card": "w-wild", "color": "purple"}, "bad_color", bob)
    # a wild without its colour waits on Ann's choice
    await ok(ann, {"type": "play", "card": "w-wild"})
    await level([ann, bob])
    assert bob.view["game"]["pending"] == {"player": ann.you, "choice": "color"}
    assert ann.view["game"]["pending"] == {"player": ann.you, "choice": "color", "card": "w-wild"}
    await refused(ann, {"type": "play", "card": playable}, "choice_pending", bob)
    await refused(ann, {"type": "draw"}, "choice_pending", bob)
    await refused(ann, {"type": "choose", "color": "purple"}, "bad_color", bob)
    await refused(bob, {"type": "play", "card": bob.view["hand"][0]}, "not_your_turn", ann)
    await refused(bob, {"type": "choose", "color": "red"}, "no_choice_pending", ann)
    await refused(bob, {"type": "cancel"}, "no_choice_pending", ann)
    hand = list(ann.view["hand"])
    await ok(ann, {"type": "cancel"})
    await level([ann, bob])
    assert ann.view["hand"] == hand and ann.view["game"]["pending"] is None
    assert ann.view["game"]["turn"] == ann.you
    for c in (ann, bob):
        await c.close()


async def test_draw_pass_and_uno_errors(server):
    # until_playable: no draw while holding a playable card
    ann, bob = await started(server, ["Ann", "Bob"], {"deck": FIVES, "draw": "until_playable", **CALM})
    await refused(ann, {"type": "draw"}, "draw_not_allowed", bob)
    await refused(ann, {"type": "pass"}, "pass_not_allowed", bob)
    for c in (ann, bob):
        await c.close()
    # one: one draw, then only that card (or pass)
    ann, bob = await started(server, ["Ann", "Bob"], {"deck": FIVES, "draw": "one", "hand_size": 2, **CALM})
    await refused(ann, {"type": "pass"}, "pass_not_allowed", bob)
    await ok(ann, {"type": "play", "card": ann.view["hand"][0], "uno": True})
    await level([ann, bob])
    assert seat(bob, ann.you)["uno"] is True
    await refused(ann, {"type": "uno"}, "already_called", bob)
    await refused(bob, {"type": "uno"}, "not_one_card", ann)
    await refused(bob, {"type": "catch", "target": ann.you}, "not_exposed", ann)
    await ok(bob, {"type": "draw"})
    await level([ann, bob])
    drawn = bob.view["game"]["drawn"]
    await refused(bob, {"type": "draw"}, "draw_not_allowed", ann)
    other = next((c for c in bob.view["hand"] if c != drawn), None)
    if other is not None:  # three cards of one code (1 in 16) leave nothing else to try
        await refused(bob, {"type": "play", "card": other}, "must_play_drawn", ann)
    await ok(bob, {"type": "pass"})
    for c in (ann, bob):
        await c.close()


async def test_a_stack_must_be_answered_or_taken(server):
    ann, bob = await started(server, ["Ann", "Bob"], {"deck": STACKY, **CALM})
    await draw_until(ann, lambda hand, legal: "w-draw6" in hand)
    await ok(ann, {"type": "play", "card": "w-draw6", "color": "red"})
    await level([ann, bob])
    assert bob.view["game"]["stack"] == {"total": 6, "last": 6, "target": bob.you}
    await refused(bob, {"type": "pass"}, "stack_pending", ann)
    for card in {c for c in bob.view["hand"] if c != "w-draw6"}:
        await refused(bob, {"type": "play", "card": card}, "stack_pending", ann)
    await refused(ann, {"type": "play", "card": ann.view["hand"][0], "color": "red"}, "not_your_turn", bob)
    await refused(ann, {"type": "draw"}, "not_your_turn", bob)
    cards = len(bob.view["hand"])
    await ok(bob, {"type": "draw"})  # takes the whole stack
    await level([ann, bob])
    assert len(bob.view["hand"]) == cards + 6 and ann.view["game"]["stack"] is None
    assert ann.view["game"]["turn"] == ann.you
    for c in (ann, bob):
        await c.close()


async def test_spectators_and_a_finished_round(server):
    ann, bob = await started(server, ["Ann", "Bob"], {"deck": FIVES, "hand_size": 1, **CALM})
    dan_info = server.join(ann.code, "Dan")
    assert dan_info["spectator"] is True
    dan = await Client(server, ann.code, dan_info["token"]).connect()
    await level([ann, bob, dan])
    everyone = (ann, bob)
    for msg in ({"type": "play", "card": "r-5"}, {"type": "draw"}, {"type": "pass"}, {"type": "uno"},
                {"type": "catch", "target": ann.you}, {"type": "choose", "color": "red"}, {"type": "cancel"}):
        await refused(dan, msg, "spectator", *everyone)
    for msg in ({"type": "start"}, {"type": "rematch"}, {"type": "add_bot"}):
        await refused(dan, msg, "not_host", *everyone)
    await refused(ann, {"type": "rematch"}, "not_over", bob, dan)
    await refused(bob, {"type": "rematch"}, "not_host", ann, dan)
    await ok(ann, {"type": "play", "card": ann.view["hand"][0]})  # her last card: the round is won
    await level([ann, bob, dan])
    assert ann.view["room"]["status"] == "round_over" and ann.view["game"]["winner"] == ann.you
    everyone = (ann, bob, dan)
    await refused(ann, {"type": "play", "card": "r-5"}, "game_over", bob, dan)
    await refused(bob, {"type": "play", "card": bob.view["hand"][0]}, "game_over", ann, dan)
    await refused(bob, {"type": "draw"}, "game_over", ann, dan)
    await refused(bob, {"type": "uno"}, "game_over", ann, dan)
    await refused(bob, {"type": "catch", "target": ann.you}, "game_over", ann, dan)
    await refused(dan, {"type": "play", "card": "r-5"}, "game_over", ann, bob)
    await refused(ann, {"type": "start"}, "not_in_lobby", bob, dan)
    await refused(ann, {"type": "add_bot"}, "not_in_lobby", bob, dan)
    await refused(bob, {"type": "rematch"}, "not_host", ann, dan)
    await ok(ann, {"type": "rematch"})
    await level([ann, bob, dan])
    assert ann.view["room"]["status"] == "playing" and len(dan.view["hand"]) == 1
    for c in everyone:
        await c.close()


# -- HTTP -----------------------------------------------------------------------------------------

def error_of(r: httpx.Response, status: int, code: str) -> None:
    assert r.status_code == status, (r.status_code, r.text)
    body = r.json()
    assert set(body) == {"error"} and set(body["error"]) == {"code", "message"}, body
    assert body["error"]["code"] == code and isinstance(body["error"]["message"], str), body


async def test_http_errors(server):
    url = server.url
    host = server.create("Ann")
    missing = "ZZZZZZ"
    while httpx.get(f"{url}/api/rooms/{missing}").status_code != 404:
        missing = missing[1:] + "Y"
    for code in (missing, missing.lower(), "nope", "ABCDE0", "A" * 40):
        error_of(httpx.get(f"{url}/api/rooms/{code}"), 404, "room_not_found")
        error_of(httpx.post(f"{url}/api/rooms/{code}/join", json={"name": "Bob"}), 404, "room_not_found")
    for name in ("", "   ", "x" * 25, "bell\x07", "zero\u200bwidth"):
        error_of(httpx.post(f"{url}/api/rooms", json={"name": name}), 400, "bad_name")
        error_of(httpx.post(f"{url}/api/rooms/{host['code']}/join", json={"name": name}), 400, "bad_name")
    for body in ({"name": 123}, {}, {"name": "Bob", "admin": True}, []):
        error_of(httpx.post(f"{url}/api/rooms", json=body), 400, "bad_message")
        error_of(httpx.post(f"{url}/api/rooms/{host['code']}/join", json=body), 400, "bad_message")
    error_of(httpx.post(f"{url}/api/rooms", content=b"{nope", headers={"content-type": "application/json"}),
             400, "bad_message")
    error_of(httpx.post(f"{url}/api/rooms", json={"name": "Ann", "rules": {"mercy_limit": 5}}),
             400, "bad_rules")
    error_of(httpx.post(f"{url}/api/rooms", json={"name": "Ann", "rules": "printed"}), 400, "bad_message")
    error_of(httpx.get(f"{url}/api/nothing-here"), 404, "not_found")
    # names are trimmed; 24 printable characters are fine
    joined = httpx.post(f"{url}/api/rooms/{host['code']}/join", json={"name": "  " + "é" * 24 + "  "})
    assert joined.status_code == 200 and joined.json()["spectator"] is False
    seats = httpx.get(f"{url}/api/rooms/{host['code']}").json()["seats"]
    assert [s["name"] for s in seats] == ["Ann", "é" * 24]
