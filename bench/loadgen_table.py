"""The load generator's table (bench/loadgen.py): scripted players on WebSockets, each room driven
so that whoever must act next acts, at most one action per interval, and the figures they
collect (every action's send time, every patch's arrival at each seat, errors by code).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import time
from typing import Any

import httpx
import websockets


def ws_url(url: str) -> str:
    """The WebSocket address of a server at ``url`` (http -> ws, https -> wss)."""
    return "ws" + url[len("http"):]


def apply_ops(doc: Any, ops: list[dict[str, Any]]) -> Any:
    """Apply the add/remove/replace operations the server sends (in place)."""
    for op in ops:
        parts = [p.replace("~1", "/").replace("~0", "~") for p in op["path"].split("/")[1:]]
        if not parts:
            doc = op["value"]
            continue
        parent = doc
        for p in parts[:-1]:
            parent = parent[int(p)] if isinstance(parent, list) else parent[p]
        last = parts[-1]
        if isinstance(parent, list):
            i = len(parent) if last == "-" else int(last)
            if op["op"] == "add":
                parent.insert(i, op["value"])
            elif op["op"] == "remove":
                del parent[i]
            else:
                parent[i] = op["value"]
        elif op["op"] == "remove":
            del parent[last]
        else:
            parent[last] = op["value"]
    return doc


class Stats:
    def __init__(self) -> None:
        self.sent: dict[tuple[str, int], float] = {}  # (room, version) -> send time
        self.arrivals: dict[tuple[str, int], list[float]] = {}
        self.actions = 0
        self.errors = 0
        self.error_codes: dict[str, int] = {}
        self.welcomes = 0  # whole views (first hello, or a version gap) rather than patches
        self.received = 0  # every frame the clients got (acks, patches, errors...)
        self.seats: dict[str, int] = {}

    def latencies_ms(self) -> list[float]:
        out = []
        for key, t0 in self.sent.items():
            arrived = self.arrivals.get(key, [])
            if len(arrived) == self.seats[key[0]]:
                out.append((max(arrived) - t0) * 1000)
        return out


class Player:
    def __init__(self, room: Room, token: str) -> None:
        self.room = room
        self.token = token
        self.view: dict[str, Any] = {}
        self.version = 0
        self.me = ""
        self.ws: Any = None
        self.pending_send: float | None = None
        self.ids = 0

    async def run(self, url: str, stats: Stats, stop: asyncio.Event) -> None:
        async with websockets.connect(f"{ws_url(url)}/ws/{self.room.code}", max_size=2**20,
                                      compression=None) as ws:
            self.ws = ws
            await ws.send(json.dumps({"type": "hello", "token": self.token}))
            reader = asyncio.create_task(self._read(stats))
            await stop.wait()
            reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await reader

    async def _read(self, stats: Stats) -> None:
        async for raw in self.ws:
            now = time.perf_counter()
            msg = json.loads(raw)
            kind = msg["type"]
            stats.received += 1
            if kind == "welcome":
                stats.welcomes += 1
                self.view, self.version, self.me = msg["state"], msg["version"], msg["you"]
            elif kind == "patch":
                self.view = apply_ops(self.view, msg["ops"])
                self.version = msg["version"]
                stats.arrivals.setdefault((self.room.code, self.version), []).append(now)
            elif kind == "ack":
                if self.pending_send is not None:
                    stats.sent[(self.room.code, self.version)] = self.pending_send
                    stats.actions += 1
                    self.pending_send = None
            elif kind == "error":
                stats.errors += 1
                stats.error_codes[msg["code"]] = stats.error_codes.get(msg["code"], 0) + 1
                self.pending_send = None
            self.room.changed.set()

    def move(self, rng: random.Random) -> dict[str, Any] | None:
        view = self.view
        game = view.get("game")
        room_status = view.get("room", {}).get("status")
        if room_status in ("round_over", "match_over") and view["room"]["host"] == self.me:
            return {"type": "rematch"}
        if not game or room_status != "playing" or not game.get("legal"):
            return None
        pending = game.get("pending")
        mine = pending["player"] == self.me if pending else game["turn"] == self.me
        if not mine:
            return None
        legal = game["legal"]
        if legal["choose"]:
            field = pending["choice"] if pending["choice"] in ("target", "top") else "color"
            return {"type": "choose", field: rng.choice(legal["choose"])}
        if legal["play"]:
            return {"type": "play", "card": rng.choice(legal["play"]), "uno": len(view["hand"]) == 2}
        if legal["draw"]:
            return {"type": "draw"}
        if legal["pass"]:
            return {"type": "pass"}
        return None


class Room:
    """Drives one room: whoever must act next acts, at most one action per ``interval``."""

    def __init__(self, code: str, interval: float, rng: random.Random) -> None:
        self.code = code
        self.interval = interval
        self.rng = rng
        self.players: list[Player] = []
        self.changed = asyncio.Event()
        self.acting = True

    async def drive(self) -> None:
        # Poisson arrivals from a random phase: rooms started in the same millisecond and paced
        # by a fixed interval stay in lockstep, so every room would act in one burst per interval
        # (a burst of 250 actions is ~200 ms of work), which no table of friends does
        next_at = time.perf_counter() + self.rng.uniform(0, self.interval)
        while self.acting:
            self.changed.clear()
            for player in self.players:
                if player.pending_send is None and player.move(self.rng) is not None:
                    break
            else:
                await self.changed.wait()
                continue
            wait = next_at - time.perf_counter()
            if wait > 0:
                await asyncio.sleep(wait)
            move = player.move(self.rng)
            if move is None or not self.acting:
                continue
            player.ids += 1
            move["id"] = f"{player.me}-{player.ids}"
            next_at = time.perf_counter() + (self.rng.expovariate(1 / self.interval) if self.interval else 0)
            player.pending_send = time.perf_counter()
            await player.ws.send(json.dumps(move))
            while player.pending_send is not None and self.acting:
                self.changed.clear()
                await self.changed.wait()


async def setup_rooms(url: str, rooms: int, clients: int, interval: float) -> list[Room]:
    out = []
    async with httpx.AsyncClient(base_url=url, timeout=30) as http:
        for r in range(rooms):
            host = (await http.post("/api/rooms", json={"name": "Host", "rules": {"turn_timer_s": 0}})).json()
            room = Room(host["code"], interval, random.Random(r))
            room.players.append(Player(room, host["token"]))
            for c in range(1, clients):
                j = (await http.post(f"/api/rooms/{host['code']}/join", json={"name": f"P{c}"})).json()
                room.players.append(Player(room, j["token"]))
            out.append(room)
    return out


WELCOME_TIMEOUT_S = 60.0


async def start_rooms(rooms: list[Room]) -> None:
    # a host whose socket failed (a saturated server let its handshake time out) never gets a
    # welcome: the run stops with that, rather than waiting for ever
    deadline = time.perf_counter() + WELCOME_TIMEOUT_S
    for room in rooms:
        host = room.players[0]
        while not host.me:
            if time.perf_counter() > deadline:
                raise RuntimeError(f"room {room.code}: its host had no welcome in {WELCOME_TIMEOUT_S:.0f} s "
                                   "(its socket failed, or the server is saturated)")
            await asyncio.sleep(0.01)
        await host.ws.send(json.dumps({"type": "start", "id": "start"}))
