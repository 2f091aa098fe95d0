"""Scripted players that survive faults, and the audit run after every game.

A :class:`Player` plays one seat over a real WebSocket the way the browser client does: when its
socket dies it says hello again with its token on another live server process, and a message
left without an answer is sent again with the same ``id``. It can also re-send an answered
message (the id must not apply twice) and double-click (the same message twice at once).
:func:`audit` then checks the room in Redis against what the players saw and were told.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
from collections import Counter
from typing import Any

import jsonpatch
import orjson
import redis
import websockets

from app.rooms.model import Room
from engine import GameState, Record, digest, replay

from .harness import Client, ServerProcess

RETRY_S = 0.05  # the client's back-off between retries (as the browser client backs off)


class Player:
    def __init__(self, servers: list[ServerProcess], home: int, code: str, token: str) -> None:
        self.servers = servers
        self.home = home
        self.code = code
        self.token = token
        self.client: Client | None = None
        self.earlier: list[dict[str, Any]] = []  # what the sockets before this one received
        self.acked: list[str] = []  # ids of game actions answered with ack
        self.reconnects = 0
        self.resent = 0
        self.double_clicked = 0

    @property
    def view(self) -> dict[str, Any]:
        assert self.client is not None
        return self.client.view

    @property
    def messages(self) -> list[dict[str, Any]]:
        """Every message this player's sockets received, the ones before a reconnect first."""
        return self.earlier + (self.client.messages if self.client is not None else [])

    @property
    def version(self) -> int:
        return self.client.version if self.client is not None else 0

    def live_servers(self) -> list[ServerProcess]:
        n = len(self.servers)
        order = [self.servers[(self.home + i) % n] for i in range(n)]
        return [s for s in order if s.proc is not None and s.proc.poll() is None]

    async def connect(self, server: ServerProcess | None = None, timeout: float = 30.0) -> None:
        """Say hello on ``server`` (default: the first live one from home), retrying while no
        process or Redis can take it."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            for candidate in [server] if server is not None else self.live_servers():
                try:
                    client = await Client(candidate, self.code, self.token).connect()
                except (OSError, TimeoutError, websockets.WebSocketException):
                    continue
                if self.client is not None:
                    self.earlier.extend(self.client.messages)
                self.client = client
                return
            if loop.time() > deadline:
                raise TimeoutError(f"no server took the hello of {self.token[:4]}...")
            await asyncio.sleep(RETRY_S)

    async def reconnect(self) -> None:
        self.reconnects += 1
        if self.client is not None and self.client.ws is not None:
            await self.client.ws.close()
        await self.connect()

    async def request(self, msg: dict[str, Any], msg_id: str | None = None,
                      timeout: float = 60.0) -> dict[str, Any]:
        """Send until answered: the same id after a dead socket or an ``unavailable``."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        mid = msg_id or f"m{next(Client._ids)}"
        while True:
            if loop.time() > deadline:
                raise TimeoutError(f"{msg} got no answer")
            try:
                assert self.client is not None
                answer = await self.client.send(msg, msg_id=mid)
            except (websockets.ConnectionClosed, TimeoutError, OSError):
                await self.reconnect()
                continue
            if answer["type"] == "error" and answer["code"] == "unavailable":
                await asyncio.sleep(RETRY_S)
                continue
            return answer

    async def act(self, move: dict[str, Any], rng: random.Random, resend: float = 0.0,
                  double: float = 0.0) -> dict[str, Any]:
        """A game action; now and then re-sent after its answer or sent twice at once."""
        mid = f"m{next(Client._ids)}"
        if rng.random() < double and self.client is not None:
            self.double_clicked += 1
            with contextlib.suppress(websockets.ConnectionClosed):
                await self.client.ws.send(json.dumps({**move, "id": mid}))
        answer = await self.request(move, mid)
        if answer["type"] == "ack":
            self.acked.append(mid)
        if rng.random() < resend:
            self.resent += 1
            again = await self.request(move, mid)
            assert again == answer, (answer, again)  # the first answer, not a second application
        return answer

    async def catch_up(self, version: int, timeout: float = 10.0) -> None:
        """Reach ``version`` (patches, or a new hello if the socket died on the way)."""
        for _ in range(5):
            try:
                assert self.client is not None
                await self.client.until_view(lambda v: self.client.version >= version, timeout)
                return
            except TimeoutError:  # (before OSError, which it is a kind of)
                # a commit whose broadcast was lost with a dying process: a gap is resynced
                await self.request({"type": "sync"})
            except (websockets.ConnectionClosed, OSError):
                await self.reconnect()
        port = self.client.server.port if self.client is not None else None
        raise TimeoutError(f"{self.code}: {self.client and self.client.you} on the server at port {port} "
                           f"stuck at version {self.version} < {version}")

    def my_turn(self) -> bool:
        return self.client is not None and self.client.my_turn()

    def choose(self, rng: random.Random) -> dict[str, Any]:
        assert self.client is not None
        return self.client.choose_move(rng)


async def level(players: list[Player], store: redis.Redis, prefix: str, code: str,
                settle_s: float = 120.0) -> int:
    """Every player on the stored version. Bots may move on meanwhile: with no think time they
    play turn after turn, and once every human is out they play the round to its end, so the
    room is given time, not a number of tries, to settle."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + settle_s
    while loop.time() < deadline:
        stored = int(store.hget(f"{prefix}:{{{code}}}:room", "v") or 0)
        await asyncio.gather(*(p.catch_up(stored) for p in players))
        if int(store.hget(f"{prefix}:{{{code}}}:room", "v") or 0) == stored:
            return stored
    raise AssertionError(f"the room never settled in {settle_s:.0f} s")


async def play_round(players: list[Player], store: redis.Redis, prefix: str, code: str,
                     rng: random.Random, *, resend: float = 0.0, double: float = 0.0,
                     faults: dict[int, Any] | None = None, think_s: float = 0.0,
                     until: float | None = None) -> int:
    """Play until the round is over (or the loop's clock passes ``until``); ``faults[n]``
    runs after the n-th human action; a human thinks ``think_s`` before each move."""
    loop = asyncio.get_running_loop()
    actions = 0
    while True:
        await level(players, store, prefix, code)
        if players[0].view["room"]["status"] != "playing" or (until is not None and loop.time() > until):
            return actions
        actor = next((p for p in players if p.my_turn()), None)
        if actor is None:  # a bot's move, or a timer's: it is on its way
            await players[0].catch_up(players[0].version + 1, timeout=20)
            continue
        if think_s:
            await asyncio.sleep(think_s * rng.uniform(0.5, 1.5))  # a human's think time, not a wait
            await level(players, store, prefix, code)
            if not actor.my_turn():
                continue
        await actor.act(actor.choose(rng), rng, resend, double)
        actions += 1
        if faults and actions in faults:
            await faults[actions]()


def stored_steps(store: redis.Redis, prefix: str, code: str) -> list[list[Any]]:
    """The record steps of the room's round, kept beside the room in a list of their own."""
    return [orjson.loads(raw) for raw in store.lrange(f"{prefix}:{{{code}}}:steps", 0, -1)]


def stored_room_and_steps(store: redis.Redis, prefix: str,
                          code: str) -> tuple[int, dict[str, Any], list[list[Any]]]:
    """The room and its round's steps as one commit left them: read in one transaction, so a
    commit (a timer's, a bot's) cannot fall between the two reads."""
    with store.pipeline(transaction=True) as pipe:
        pipe.hmget(f"{prefix}:{{{code}}}:room", ["v", "d"])
        pipe.lrange(f"{prefix}:{{{code}}}:steps", 0, -1)
        (version, document), steps = pipe.execute()
    assert version is not None and document is not None
    return int(version), orjson.loads(document), [orjson.loads(raw) for raw in steps]


async def audit(players: list[Player], store: redis.Redis, prefix: str, code: str,
                acked_before: dict[int, int]) -> None:
    """After a round: cards conserved, the record replays to the stored state, every
    acknowledged action is in the record exactly once, and every player holds the stored
    version with the view a fresh sync gives."""
    version, document, recorded = stored_room_and_steps(store, prefix, code)
    room = Room.from_dict(document)  # the server's own reading (the rules are written once)
    assert room.game is not None and room.record is not None
    state = GameState.from_dict(room.game)
    assert state.card_count() == state.deck_size
    record = Record.from_dict({**room.record, "rules": room.record_rules(), "steps": recorded})
    assert digest(replay(record)) == digest(state)
    steps = [(step[0], step[3]) for step in recorded if len(step) > 3]
    counts = Counter(steps)
    assert all(n == 1 for n in counts.values()), [k for k, n in counts.items() if n > 1]
    for i, p in enumerate(players):
        assert p.client is not None and p.client.you is not None
        mine = {mid for who, mid in steps if who == p.client.you}
        assert mine == set(p.acked[acked_before.get(i, 0):]), p.client.you
    for p in players:
        at = version
        for _ in range(10):
            await p.catch_up(at)
            seen, seen_version = p.view, p.version
            before = len(p.client.messages)
            assert (await p.request({"type": "sync"}))["type"] == "ack"
            welcome = next(m for m in p.client.messages[before:] if m["type"] == "welcome")
            assert welcome["version"] >= seen_version
            if welcome["version"] == seen_version:
                assert welcome["state"] == seen, (p.client.you, seen_version,
                                                  jsonpatch.make_patch(seen, welcome["state"]).patch)
                break
            # the room moved on between the two (a catch window's expiry or a bot's catch in a
            # round the soak's clock cut short): compare again at the newer version
            at = welcome["version"]
        else:
            raise AssertionError(f"{p.client.you}: the room kept moving through ten syncs")
