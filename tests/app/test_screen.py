"""The big screen (/tv/CODE, docs/server.md "Protocol additions"): ``POST /api/rooms/{code}/watch``
makes a spectator in the lobby too, which never takes a seat, never runs the room and sees only
what every spectator sees (no hand)."""

from __future__ import annotations

import httpx
import pytest

from .conftest import module_server
from .harness import Client, ServerProcess
from .tables import level, ok, refused, seated

FIVES = {"r-5": 20, "y-5": 20, "g-5": 20, "b-5": 20}
QUICK = {"deck": FIVES, "hand_size": 2, "turn_timer_s": 0, "catch_window_s": 30, "target_score": 5000}


@pytest.fixture
def server(backend: str, request: pytest.FixtureRequest, module_servers) -> ServerProcess:
    return module_server(backend, request, module_servers)


def _watch(server: ServerProcess, code: str, body: dict | None = None) -> httpx.Response:
    return httpx.post(f"{server.url}/api/rooms/{code}/watch", json=body or {}, timeout=10)


async def test_a_screen_watches_from_the_lobby_and_never_takes_a_seat(server):
    (ann,) = await seated(server, ["Ann"], QUICK)
    answer = _watch(server, ann.code)
    assert answer.status_code == 200, answer.text
    info = answer.json()
    assert info["spectator"] is True and info["code"] == ann.code and info["token"]
    tv = await Client(server, ann.code, info["token"]).connect()
    await level([ann, tv])
    assert [p["id"] for p in ann.view["players"]] == [ann.you]
    assert ann.view["room"]["spectators"] == [{"id": tv.you, "name": "TV", "connected": True, "screen": True}]
    joined = [e for e in ann.events if e["kind"] == "joined" and e["player"] == tv.you]
    assert joined and joined[0]["spectator"] is True and joined[0]["screen"] is True
    # the screen is no seat: one seat is not enough to start
    await refused(ann, {"type": "start"}, "not_enough_players", tv)
    await ok(ann, {"type": "add_bot", "level": "easy"})
    await ok(ann, {"type": "start"})
    await level([ann, tv])
    assert tv.view["room"]["status"] == "playing"
    assert tv.view["hand"] == [] and len(tv.view["players"]) == 2
    assert "legal" not in tv.view["game"] and "drawn" not in tv.view["game"]
    # it watches; it may not play
    await refused(tv, {"type": "draw"}, "spectator", ann)
    for c in (ann, tv):
        await c.close()


async def test_a_screen_stays_a_spectator_at_the_rematch_and_never_hosts(server):
    ann, bob = await seated(server, ["Ann", "Bob"], QUICK)
    screen = _watch(server, ann.code, {"name": "Living room"}).json()
    tv = await Client(server, ann.code, screen["token"]).connect()
    await ok(ann, {"type": "start"})
    await level([ann, bob, tv])
    for c in (ann, bob):  # two cards each, every card plays: Ann wins
        await ok(c, {"type": "play", "card": c.view["hand"][0], "uno": True})
    await ok(ann, {"type": "play", "card": ann.view["hand"][0]})
    await level([ann, bob, tv])
    assert tv.view["room"]["status"] in ("round_over", "match_over")
    await ok(ann, {"type": "lobby"})
    await level([ann, bob, tv])
    assert [p["id"] for p in tv.view["players"]] == [ann.you, bob.you]  # not seated back there
    assert [s["id"] for s in tv.view["room"]["spectators"]] == [tv.you]
    # the host leaves: the room passes to Bob, never to the screen; then Bob leaves too
    await ok(ann, {"type": "leave"})
    await tv.until_view(lambda v: v["room"]["host"] != ann.you)
    assert tv.view["room"]["host"] == bob.you
    await ok(bob, {"type": "leave"})
    await tv.until_view(lambda v: v["players"] == [])
    assert tv.view["room"]["host"] != tv.you
    # a person who comes now runs the room; the screen still watches
    cat = await Client(server, ann.code, server.join(ann.code, "Cat")["token"]).connect()
    await level([cat, tv])
    assert cat.view["room"]["host"] == cat.you
    await ok(cat, {"type": "add_bot", "level": "easy"})
    for c in (cat, tv):
        await c.close()


async def test_a_screen_meets_the_same_door_as_a_joiner(server):
    (ann,) = await seated(server, ["Ann"], QUICK)
    assert _watch(server, "ZZZZZZ").status_code == 404
    assert _watch(server, ann.code, {"name": ""}).status_code == 400
    await ok(ann, {"type": "set_room", "locked": True})
    answer = _watch(server, ann.code)
    assert answer.status_code == 403 and answer.json()["error"]["code"] == "room_locked"
    await ann.close()
