"""Every patch a socket gets turns its copy into exactly the view the server holds for it, across
two processes' actors on one store, through everything that changes what a socket last saw:
lobby changes and the deal, plays with all three draw rules, bots, lost commit races and
reloads, catch-ups with and without the committed document, ``sync``, a hello that replaces a
socket, joins during a round (spectators), leaving, and rounds and matches that end (the
``revealed`` part comes and goes). The fan-out diffs each socket's last view against its new
one by way of the public game both were built from (app.rooms.diff.diff_view), so a socket whose
view and public game ever fell out of step would get a wrong patch here."""

from __future__ import annotations

import asyncio
import random
import secrets
from typing import Any

import fakeredis
import jsonpatch
import orjson
import pytest

from app.core.clock import StepClock
from app.core.protocol import parse_message
from app.core.settings import Settings
from app.processes.hub import Hub
from app.rooms import commands, lobby
from app.rooms.intent import Intent, no_change
from app.storage.store import RoomStore

CODE = "ABCD"


class ClientSocket:
    """A socket stand-in that keeps the client's copy: welcomes replace it, patches apply to it
    in version order."""

    def __init__(self, player: str) -> None:
        self.code, self.player = CODE, player
        self.view: dict[str, Any] | None = None
        self.public: dict[str, Any] | None = None
        self.version = 0
        self.closed = False
        self.copy: dict[str, Any] | None = None
        self.copy_version: int | None = None
        self.seen: dict[str, int] = {}
        self.answers: dict[str, list[str]] = {}  # message id -> the answers' types

    def send(self, text: str) -> None:
        msg = orjson.loads(text)
        kind = msg["type"]
        self.seen[kind] = self.seen.get(kind, 0) + 1
        if kind in ("ack", "error"):
            self.answers.setdefault(msg["id"], []).append(kind)
        if kind == "welcome":
            self.copy, self.copy_version = msg["state"], msg["version"]
        elif kind == "patch":
            assert self.copy is not None and msg["version"] == self.copy_version + 1
            self.copy = jsonpatch.apply_patch(self.copy, msg["ops"])
            self.copy_version = msg["version"]
            if any(op["path"].startswith("/game/revealed") for op in msg["ops"]):
                self.seen["revealed"] = self.seen.get("revealed", 0) + 1

    def send_frames(self, texts: list[str]) -> None:
        """As one write: a move's patch (or welcome) and, right behind it, its answer."""
        kinds = [orjson.loads(text)["type"] for text in texts]
        assert len(kinds) == 2 and kinds[0] in ("patch", "welcome") and kinds[1] == "ack", kinds
        self.seen["answered with a patch"] = self.seen.get("answered with a patch", 0) + 1
        for text in texts:
            self.send(text)

    def close(self, code: int = 1000) -> None:
        self.closed = True


def _may_act(view: dict[str, Any], me: str) -> bool:
    if view["room"]["status"] != "playing":
        return view["room"]["host"] == me
    legal = (view["game"] or {}).get("legal")
    return bool(legal and (legal["play"] or legal["choose"] or legal["draw"] or legal["pass"]))


def _move(view: dict[str, Any], me: str, rng: random.Random) -> dict[str, Any] | None:
    status, game = view["room"]["status"], view["game"]
    if status == "lobby" and view["room"]["host"] == me:
        others = [p["id"] for p in view["players"] if p["id"] != me]
        k = rng.random()
        if k < 0.15:
            return {"type": "add_bot", "level": "easy"}
        if k < 0.25 and others:
            return {"type": "remove_seat", "player_id": rng.choice(others)}
        if k < 0.35:
            draw = rng.choice(["one", "voluntary", "until_playable"])
            return {"type": "set_rules", "rules": {"draw": draw}}
        return {"type": "start"}
    if status in ("round_over", "match_over") and view["room"]["host"] == me:
        return {"type": "rematch"}
    if status == "playing" and game and game.get("legal"):
        legal, pending = game["legal"], game.get("pending")
        if legal["choose"]:
            field = pending["choice"] if pending["choice"] in ("target", "top") else "color"
            return {"type": "choose", field: rng.choice(legal["choose"])}
        for kind in ("play", "catch"):
            if legal[kind]:
                key = "card" if kind == "play" else "target"
                return {"type": kind, key: rng.choice(legal[kind])}
        for kind in ("draw", "pass", "uno"):
            if legal[kind]:
                return {"type": kind}
    if rng.random() < 0.05:
        return {"type": "react", "reaction": "gg"}
    if rng.random() < 0.01 and me != view["room"]["host"]:
        return {"type": "leave"}
    return None


async def _play(seed: int, steps: int) -> dict[str, int]:
    rng = random.Random(seed)
    server = fakeredis.FakeServer()
    clock = StepClock()
    settings = Settings(bot_delay_ms=0)
    hubs = [Hub(settings, RoomStore(fakeredis.FakeAsyncRedis(server=server), "t", 3_600_000), clock,
                publishes=False) for _ in range(2)]
    room, host, _ = lobby.new_room(CODE, "host", {"draw": ("one", "until_playable", "voluntary")[seed % 3],
                                                  "target_score": 200}, clock.ms)
    room.version = 1
    await hubs[0].store.commit(CODE, None, 1, orjson.dumps(room))
    sockets: list[ClientSocket] = []

    def attach(hub: Hub, player: str) -> None:
        """A hello on ``hub``: any older socket of the player is replaced (no commit)."""
        for h in hubs:
            old = h.sockets.get(CODE, {}).pop(player, None)
            if old is not None:
                old.close(4409)
        sock = ClientSocket(player)
        hub.sockets.setdefault(CODE, {})[player] = sock  # type: ignore[assignment]
        sockets.append(sock)

    async def join(hub: Hub, name: str) -> None:
        joined: list[str] = []

        def run(loaded: Any, now: int) -> Any:
            pid, _, _, events = lobby.join(loaded, name)
            joined.append(pid)
            return events

        if (await hub.submit(CODE, Intent("join", run)))["type"] == "ack":
            attach(rng.choice(hubs), joined[0])

    attach(hubs[0], host)
    for i in range(3):
        await join(rng.choice(hubs), f"p{i}")
    ids = 0

    async def answered(hub: Hub, sock: ClientSocket, msg: dict[str, Any]) -> None:
        """Sent as a socket's reader sends it: the room's actor answers the socket itself."""
        intent = commands.intent_for(parse_message(msg), sock, hub.settings, reply=sock)  # type: ignore[arg-type]
        answer = await hub.submit(CODE, intent)
        assert sock.answers.get(msg["id"]) == [answer["type"]], (seed, msg, sock.answers)

    for step in range(steps):
        clock.ms += rng.choice([1, 100, 500, 3000])
        hub = rng.choice(hubs)
        live = [s for s in hub.sockets.get(CODE, {}).values() if not s.closed]
        r = rng.random()
        if r < 0.08:  # a catch-up: with the committed document, or a read of Redis
            actor = hub.actor(CODE)
            if rng.random() < 0.5:
                version, document = await hub.store.load(CODE)
                actor.submit_remote(version, [], document)
            else:
                actor.submit_remote(None, [], None)
            await hub.submit(CODE, Intent("noop", no_change))
        elif r < 0.12 and live:
            ids += 1
            sock = rng.choice(live)
            await answered(hub, sock, {"type": "sync", "id": f"s{ids}"})
        elif r < 0.15 and live:
            attach(rng.choice(hubs), rng.choice(live).player)
        elif r < 0.19:
            await join(hub, f"n{step}")
        elif r < 0.23:
            await hub.submit(CODE, hub.actor(CODE).tick_intent())
            await hub.submit(CODE, Intent("noop", no_change))
        elif live:
            ready = [s for s in live if s.copy is not None]
            able = [s for s in ready if _may_act(s.copy, s.player)]
            if not ready:
                continue
            sock = rng.choice(able if able and rng.random() < 0.9 else ready)
            msg = _move(sock.copy, sock.player, rng)
            if msg is None:
                continue
            ids += 1
            if msg["type"] != "leave":
                await answered(hub, sock, {**msg, "id": f"m{ids}"})
                continue
            intent = commands.intent_for(parse_message({**msg, "id": f"m{ids}"}), sock, hub.settings)
            answer = await hub.submit(CODE, intent)
            if answer["type"] == "ack":
                sock.close()
        for h in hubs:
            for sock in h.sockets.get(CODE, {}).values():
                if not sock.closed and sock.view is not None:
                    assert sock.copy == sock.view and sock.copy_version == sock.version, (seed, step)
    for h in hubs:  # bots with no think time tick on for ever: stop the rooms' actors. A cancel
        # that lands in fakeredis's read just as its reply is there is lost (the actor reads on):
        # asked again until the actor is done
        for actor in h.actors.values():
            while not actor.task.done():
                actor.task.cancel()
                await asyncio.wait([actor.task], timeout=1)
    seen: dict[str, int] = {}
    for sock in sockets:
        for kind, n in sock.seen.items():
            seen[kind] = seen.get(kind, 0) + n
    seen["conflicts"] = int(sum(h.metrics.conflicts._value.get() for h in hubs))
    return seen


def _seeded(monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    """The same walk every run: the deals, the players' ids and so the bots' moves (seeded by
    the game's seed, app.rooms.bot_seats.seed) come from ``seed`` (the server draws them from
    ``secrets``)."""
    drawn = random.Random(seed)
    monkeypatch.setattr(secrets, "token_hex", lambda nbytes=None: drawn.randbytes(nbytes or 32).hex())


@pytest.mark.parametrize("seed", [0, 1, 2])
async def test_every_patch_turns_each_sockets_copy_into_its_view(seed, monkeypatch):
    _seeded(monkeypatch, seed)
    seen = await _play(seed, 600)
    # the walk went through what it is meant to: patches, welcomes, races, rounds that ended
    assert seen.get("patch", 0) > 300 and seen.get("welcome", 0) > 20, seen
    # a move that changed the room is answered in the write that carries its patch (a sync,
    # a refusal or a socket replaced meanwhile: on its own)
    assert seen["answered with a patch"] > 20 and seen["ack"] > seen["answered with a patch"], seen
    assert seen.get("error", 0) > 5, seen
    assert seen["conflicts"] > 5 and seen.get("revealed", 0) > 0, seen


_NOT_PLAYS = ("react", "leave", "add_bot", "remove_seat", "set_rules")


async def test_a_socket_welcomed_between_two_commits_is_patched_from_that_welcome(monkeypatch):
    """A socket that missed a commit and asked for ``sync`` is welcomed at the new version; the
    next patch must be diffed from that welcome's view and public game, not from the ones it
    had before (a key that changed and changed back, the turn of two players say, would
    otherwise never reach it)."""
    _seeded(monkeypatch, 3)
    rng = random.Random(3)
    clock = StepClock()
    hub = Hub(Settings(bot_delay_ms=0), RoomStore(fakeredis.FakeAsyncRedis(), "t", 3_600_000), clock,
              publishes=False)
    room, host, _ = lobby.new_room(CODE, "host", {}, clock.ms)
    room.version = 1
    await hub.store.commit(CODE, None, 1, orjson.dumps(room))
    joined: list[str] = []

    def join(loaded: Any, now: int) -> Any:
        pid, _, _, events = lobby.join(loaded, "guest")
        joined.append(pid)
        return events

    await hub.submit(CODE, Intent("join", join))
    socks = {pid: ClientSocket(pid) for pid in (host, joined[0])}
    hub.sockets[CODE] = dict(socks)  # type: ignore[arg-type]
    await hub.submit(CODE, Intent("noop", no_change))  # both welcomed
    ids = 0

    async def act() -> None:
        nonlocal ids
        for sock in socks.values():
            msg = _move(sock.view, sock.player, rng) if sock.view is not None else None
            if msg is not None and msg["type"] not in _NOT_PLAYS:
                ids += 1
                parsed = parse_message({**msg, "id": f"m{ids}"})
                await hub.submit(CODE, commands.intent_for(parsed, sock, hub.settings))
                return

    late = socks[joined[0]]
    welcomed = 0
    for _ in range(120):
        del hub.sockets[CODE][late.player]  # it misses the next commit
        version = late.version
        await act()
        hub.sockets[CODE][late.player] = late  # type: ignore[assignment]
        ids += 1
        sync = parse_message({"type": "sync", "id": f"s{ids}"})
        await hub.submit(CODE, commands.intent_for(sync, late, hub.settings))
        welcomed += late.version > version
        await act()
        assert late.copy == late.view and late.copy_version == late.version
    hub.actor(CODE).task.cancel()
    assert welcomed > 100
