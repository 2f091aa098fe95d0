"""Hostile input: 10,000+ malformed, mistyped, forged, oversized, out-of-turn and replayed frames.

Nothing may crash, nothing may change (the room's version and stored document stay the same),
and the server answers health checks throughout.
"""

from __future__ import annotations

import asyncio
import json
import random

import httpx
import pytest
import websockets

from .harness import Client, ServerProcess, real_async_client, real_redis_available

FRAMES = 10_500


def _hostile(rng: random.Random, me: str, other: str, other_room_player: str, hand: list[str],
             not_in_hand: str, old_id: str) -> str | bytes:
    pick = rng.randrange(16)
    mid = f"f{rng.randrange(10**9)}"
    if pick == 0:
        return rng.choice(["{", "}", "[1,2", '{"type":', "nul", "\x00", "", " ", '"\\ud800"',
                           "NaN", "Infinity", "1e999999", "{'a': 1}"])
    if pick == 1:
        depth = rng.choice([100, 1000, 2000])  # within the 4 KiB frame limit
        return "[" * depth + "]" * depth
    if pick == 2:
        return '{{"type": "play", "id": "{}", "card": {}}}'.format(mid, "9" * rng.randrange(20, 4000))
    if pick == 3:
        return f'{{"type": "play", "id": "{mid}", "card": "\\ud800"}}'
    if pick == 4:
        return json.dumps({"type": rng.choice(["play", "draw", "catch", "set_rules"]), "id": mid,
                           "card": rng.choice([1, None, [], {}, True]), "target": 5, "rules": []})
    if pick == 5:
        return json.dumps({"type": "draw", "id": mid, "player": other, "seat": 0, "admin": True})
    if pick == 6:
        return json.dumps({"type": rng.choice(["hello", "shutdown", "", "PLAY", "debug"]), "id": mid})
    if pick == 7:
        return json.dumps({"type": "play", "id": mid, "card": not_in_hand})
    if pick == 8:
        return json.dumps({"type": "catch", "id": mid, "target": rng.choice([other, other_room_player, me,
                                                                              "nobody"])})
    if pick == 9:
        return json.dumps({"type": "remove_seat", "id": mid, "player_id": other})
    if pick == 10:
        return json.dumps({"type": "play", "id": mid, "card": rng.choice(hand), "color": "purple",
                           "target": other_room_player})
    if pick == 11:
        return json.dumps({"type": "play", "id": old_id, "card": rng.choice(hand)})  # replayed id
    if pick == 12:
        return json.dumps({"type": "choose", "id": mid, "color": rng.choice(["red", "x", ""])})
    if pick == 13:
        return json.dumps({"type": "uno", "id": mid})
    if pick == 14:
        return json.dumps({"id": mid, "type": "react", "reaction": "<script>"})
    return bytes(rng.randrange(256) for _ in range(rng.randrange(1, 40)))


@pytest.fixture
def server():
    """On the real Redis: the stored document is read straight from it."""
    if not real_redis_available():
        pytest.fail("the real Redis at 127.0.0.1:6379 is not running (CI starts it)")
    proc = ServerProcess(redis="real", rate_burst=100000, rate_per_s=100000, max_frame_bytes=4096).start()
    yield proc
    err = proc.stop()
    assert "Traceback" not in err, err[-3000:]


async def test_ten_thousand_hostile_frames_change_nothing(server):
    a = server.create("Ann")
    code = a["code"]
    b = server.join(code, "Bob")
    other_room = server.create("Zed")
    ann = await Client(server, code, a["token"]).connect()
    bob = await Client(server, code, b["token"]).connect()
    await ann.send({"type": "start"})
    await ann.until_view(lambda v: v["room"]["status"] == "playing")
    await bob.until_view(lambda v: v["room"]["status"] == "playing")
    # the fuzzer plays as whoever is NOT on turn, and never calls UNO with one card
    turn = ann.view["game"]["turn"]
    fuzzer = bob if turn == ann.you else ann
    other = ann if fuzzer is bob else bob
    # an accepted message id to replay later: a reaction (it bumps the version once, now)
    old = await fuzzer.send({"type": "react", "reaction": "gg"})
    assert old["type"] == "ack"
    old_id = next(k for k, v in fuzzer.answers.items() if v is old)
    await other.until_view(lambda v, f=fuzzer: other.version == f.version)
    redis = real_async_client()
    key = f"{server.prefix}:{{{code}}}:room"
    before = await redis.hgetall(key)
    version_before = fuzzer.version
    hand = list(fuzzer.view["hand"])
    deck_codes = {"r-1", "g-draw2", "w-draw10", "b-skipall", "y-discard"}
    not_in_hand = next(c for c in sorted(deck_codes) if c not in hand)
    rng = random.Random(2024)
    ws = fuzzer.ws
    sent = closed = 0
    async with httpx.AsyncClient(base_url=server.url) as http:
        while sent < FRAMES:
            frame = _hostile(rng, fuzzer.you, other.you, other_room["player_id"], hand, not_in_hand, old_id)
            try:
                await ws.send(frame)
                sent += 1
            except websockets.ConnectionClosed:
                closed += 1
                ws = await _reconnect(server, code, fuzzer.token)
            if sent % 500 == 0:
                assert (await http.get("/healthz")).status_code == 200
                # drain what came back, so the server's outbox never fills
                await _drain(ws)
        await _drain(ws, quiet=0.5)
        assert (await http.get("/healthz")).status_code == 200
    after = await redis.hgetall(key)
    assert closed == 0
    assert after[b"v"] == before[b"v"] and int(after[b"v"]) == version_before
    assert after[b"d"] == before[b"d"]
    # oversized frames close the socket with 1009; the game itself is untouched (the socket
    # closing is a disconnect, which the table does see)
    game_before = json.loads(before[b"d"])["game"]
    for _ in range(20):
        ws = await _reconnect(server, code, fuzzer.token)
        await ws.recv()  # welcome
        await ws.send(json.dumps({"type": "draw", "id": "big", "pad": "x" * 5000}))
        with pytest.raises(websockets.ConnectionClosed) as closed_by:
            while True:
                await asyncio.wait_for(ws.recv(), 5)
        assert closed_by.value.rcvd is not None and closed_by.value.rcvd.code == 1009
    final = json.loads((await redis.hgetall(key))[b"d"])
    assert final["game"] == game_before
    await redis.aclose()


async def _reconnect(server, code, token):
    ws = await websockets.connect(f"{server.ws_url}/ws/{code}", max_size=2**20)
    await ws.send(json.dumps({"type": "hello", "token": token}))
    return ws


async def _drain(ws, quiet: float = 0.05) -> None:
    while True:
        try:
            await asyncio.wait_for(ws.recv(), quiet)
        except (TimeoutError, websockets.ConnectionClosed):
            return
