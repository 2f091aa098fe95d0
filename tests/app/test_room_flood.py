"""A flood of room creations slows the flooder and locks out nobody (docs/security.md): a room
nobody opens expires after UNCLAIMED_ROOM_TTL_MS and is not counted against MAX_ROOMS, and a
removed player is barred from their network, not from one address of it. Black-box over HTTP,
the client's address given by X-Forwarded-For (127.0.0.1 is a trusted proxy)."""

from __future__ import annotations

import time

import httpx

from .harness import Client, ServerProcess
from .tables import ok


def _create(server: ServerProcess, name: str, address: str) -> httpx.Response:
    return httpx.post(f"{server.url}/api/rooms", json={"name": name}, timeout=10,
                      headers={"x-forwarded-for": address})


async def test_rooms_nobody_opens_expire_soon_and_fill_nothing():
    server = ServerProcess(unclaimed_room_ttl_ms=1500, max_rooms=3, rooms_per_min=0).start()
    try:
        flood = [_create(server, f"Bot{i}", f"2001:db8:{i}::1") for i in range(12)]  # rotating /64s
        assert [r.status_code for r in flood] == [201] * 12  # never opened: none counted
        opened = server.create("Ann")
        await (await Client(server, opened["code"], opened["token"]).connect()).close()
        deadline = time.monotonic() + 20
        while any(httpx.get(f"{server.url}/api/rooms/{r.json()['code']}", timeout=10,
                            headers={"x-forwarded-for": "192.0.2.1"}).status_code != 404 for r in flood[:3]):
            assert time.monotonic() < deadline, "unopened rooms did not expire"
            time.sleep(0.2)
        # the opened room lives on (its TTL is a room's)
        assert httpx.get(f"{server.url}/api/rooms/{opened['code']}", timeout=10).status_code == 200
    finally:
        err = server.stop()
    assert "Traceback" not in err, err[-3000:]


async def test_a_removed_player_is_barred_from_their_network_not_one_address():
    server = ServerProcess().start()
    try:
        host = server.create("Ann")
        ann = await Client(server, host["code"], host["token"]).connect()
        joined = httpx.post(f"{server.url}/api/rooms/{host['code']}/join", json={"name": "Zed"}, timeout=10,
                            headers={"x-forwarded-for": "2001:db8:7:7::1"}).json()
        await ok(ann, {"type": "remove_seat", "player_id": joined["player_id"]})
        again = httpx.post(f"{server.url}/api/rooms/{host['code']}/join", json={"name": "Zoe"}, timeout=10,
                           headers={"x-forwarded-for": "2001:db8:7:7::2"})  # another name, same /64
        assert again.status_code == 403 and again.json()["error"]["code"] == "barred"
        other = httpx.post(f"{server.url}/api/rooms/{host['code']}/join", json={"name": "Zoe"}, timeout=10,
                           headers={"x-forwarded-for": "2001:db8:7:8::2"})
        assert other.status_code == 200
        await ann.close()
    finally:
        err = server.stop()
    assert "Traceback" not in err, err[-3000:]
