"""Watching a full room (issue #44.8): ``POST /api/rooms/{code}/join`` with ``"watch": true`` makes
a person a spectator in the lobby too, with a join's checks, who takes a seat when one frees."""

from __future__ import annotations

import httpx
import pytest

from .conftest import module_server
from .harness import Client, ServerProcess
from .tables import level, ok


@pytest.fixture
def server(backend: str, request: pytest.FixtureRequest, module_servers) -> ServerProcess:
    return module_server(backend, request, module_servers)


def post_join(server: ServerProcess, code: str, body: dict) -> httpx.Response:
    return httpx.post(f"{server.url}/api/rooms/{code}/join", json=body, timeout=10)


async def test_a_full_rooms_newcomer_can_watch_and_sits_when_a_seat_frees(server):
    host = server.create("Ann")
    ann = await Client(server, host["code"], host["token"]).connect()
    for level_ in ["easy"] * 9:
        await ok(ann, {"type": "add_bot", "level": level_})
    full = post_join(server, host["code"], {"name": "Dee"})
    assert full.status_code == 409 and full.json()["error"]["code"] == "room_full"
    # the same checks as a join: a taken name, a bad flag
    taken = post_join(server, host["code"], {"name": "ann", "watch": True})
    assert taken.status_code == 409 and taken.json()["error"]["code"] == "name_taken"
    assert post_join(server, host["code"], {"name": "Dee", "watch": "yes please"}).status_code == 400
    watching = post_join(server, host["code"], {"name": "Dee", "watch": True})
    assert watching.status_code == 200, watching.text
    dee_info = watching.json()
    assert dee_info["spectator"] is True
    dee = await Client(server, host["code"], dee_info["token"]).connect()
    await level([ann, dee])
    assert [s["name"] for s in ann.view["room"]["spectators"]] == ["Dee"]
    assert dee.view["hand"] == [] and all(p["id"] != dee.you for p in dee.view["players"])
    # a bot removed in the lobby: the seat is free and the next start seats Dee
    bot = next(p["id"] for p in ann.view["players"] if p["bot"])
    await ok(ann, {"type": "remove_seat", "player_id": bot})
    await ok(ann, {"type": "start"})
    await level([ann, dee])
    assert any(p["id"] == dee.you for p in ann.view["players"]) and len(dee.view["hand"]) > 0
    for c in (ann, dee):
        await c.close()
