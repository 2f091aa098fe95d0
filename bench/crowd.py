"""A crowd of phones for the city benchmarks (bench/city.py, bench/storm.py): rooms set up over
HTTP, and sockets that behave as the browser client does (web/js/net.js): hello with the token,
the client's own ping every ``PING_EVERY_S``, and when a socket fails or is closed, a reconnect
after a jittered exponential backoff, spread over the ``retry_ms`` a restarting (close 1012) or
busy (1013) server gives. Driven from worker processes (:func:`run_worker`) so the
generator is not what limits the server.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import multiprocessing as mp
import os
import random
import socket
import struct
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx
import websockets

from bench.loadgen_table import apply_ops, ws_url

#: the browser client's heartbeat (web/js/net.js PING_EVERY_MS)
PING_EVERY_S = 15.0
CLK = os.sysconf("SC_CLK_TCK")
#: Linux's option that has the kernel stamp each read with when its bytes reached the socket
SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)


def stamp_reads(ws: Any, on_read: Callable[[bytes, float], None]) -> bool:
    """Have the socket under ``ws`` (a websockets asyncio connection, on the selector loop's
    socket transport) read with ``recvmsg`` and the kernel's receive stamp, and call
    ``on_read(data, stamp)`` (wall-clock seconds) before its protocol sees ``data``; False
    (nothing changed) where the transport is not that one or the kernel does not stamp.

    Why: a reply's round trip read by the generator's loop includes the time this process
    waited for a CPU, and on a machine whose cores the generator shares with the server that
    wait is part of any tail it reads. The kernel stamps the bytes when they reach this socket
    (on loopback, in the server's own send): the stamp less the send time is the server's
    latency as a phone on a machine of its own would see it. Of the reads that returned the
    bytes, the stamp is the last one's (TCP, tcp_recvmsg), never earlier than the reply."""
    transport = ws.transport
    sock = getattr(transport, "_sock", None)
    if (sock is None or getattr(transport, "_read_ready_cb", None) is None
            or not hasattr(transport, "_read_ready__on_eof")):
        return False
    try:
        sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
    except OSError:
        return False
    max_size = transport.max_size

    def read() -> None:
        if transport._conn_lost:
            return
        try:
            data, ancillary, _flags, _address = sock.recvmsg(max_size, 64)
        except (BlockingIOError, InterruptedError):
            return
        except (SystemExit, KeyboardInterrupt):
            raise
        except BaseException as exc:
            transport._fatal_error(exc, "Fatal read error on socket transport")
            return
        if not data:
            transport._read_ready__on_eof()
            return
        for level, kind, raw in ancillary:
            if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS and len(raw) >= 16:
                seconds, nanoseconds = struct.unpack("qq", raw[:16])
                on_read(data, seconds + nanoseconds / 1e9)
        transport._protocol.data_received(data)

    transport._read_ready_cb = read
    return True


def raise_open_files() -> None:
    """The soft limit of open files raised to the hard one: a worker holds thousands of sockets."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def keep_collector_young(tally: Tally) -> None:
    """No full collection in a generator process, and the pauses of the young ones kept in
    ``tally``. A phone's collector is no part of the server's latency, but a generator's full
    collection over its thousands of views stopped every phone of the process for 0.1-0.6 s,
    measured as the server's round trip; a benchmark's process lives minutes."""
    gc.set_threshold(700, 10, 1_000_000)
    started: list[float] = []

    def timed(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            started[:] = [time.perf_counter()]
        elif started:
            tally.collector_pauses_ms.append((time.perf_counter() - started[0]) * 1000)

    gc.callbacks.append(timed)


def own_cpu_s() -> float:
    """This process's user + system CPU seconds."""
    t = os.times()
    return t.user + t.system


def backoff_s(attempt: int, rng: random.Random, close_code: int | None = None,
              hint_ms: int | None = None) -> float:
    """The wait before reconnect ``attempt`` (1, 2, ...), as web/js/net.js computes it: full
    jitter over an exponential ceiling; a restarting (1012) or busy (1013) server's ``retry_ms``
    hint spreads its sockets over that long; a restart without one, over at least 3 s."""
    if hint_ms and close_code in (1012, 1013):
        return hint_ms / 1000 * rng.uniform(0.1, 1.0)
    ceiling = min(10.0, 0.4 * 2 ** min(attempt - 1, 5))
    if close_code == 1012:
        ceiling = max(ceiling, 3.0)
    return rng.uniform(ceiling / 4, ceiling)


@dataclass
class Seat:
    """One socket's seat: the room, the token, and what it knows of the room."""

    code: str
    token: str
    acts: bool = True  # a human who plays (a screen only watches)
    me: str = ""
    view: dict[str, Any] = field(default_factory=dict)
    version: int = 0


@dataclass
class Tally:
    """What a worker saw: welcome times (first, and after every reconnect), refusals and errors by
    kind, actions and their round trips."""

    welcomes: int = 0
    first_welcome_s: list[float] = field(default_factory=list)
    rewelcome_s: list[float] = field(default_factory=list)
    failures: dict[str, int] = field(default_factory=dict)
    errors: dict[str, int] = field(default_factory=dict)
    latencies_ms: list[float] = field(default_factory=list)
    #: the same round trips to the kernel's stamp of the reply (:func:`stamp_reads`)
    stamped_ms: list[float] = field(default_factory=list)
    unstamped: int = 0
    actions: int = 0
    pings: int = 0
    collector_pauses_ms: list[float] = field(default_factory=list)  # the generator's own

    def fail(self, kind: str) -> None:
        self.failures[kind] = self.failures.get(kind, 0) + 1

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


async def make_room(http: httpx.AsyncClient, humans: int, bots: list[str], screen: bool,
                    rules: dict[str, Any] | None = None) -> list[Seat]:
    """A room of ``humans`` seats (the host first), ``bots`` added by the host over its socket
    later (:func:`add_bots`), and a screen watching if ``screen``."""
    made = await http.post("/api/rooms", json={"name": "Host", "rules": rules or {"turn_timer_s": 0}})
    made.raise_for_status()
    host = made.json()
    seats = [Seat(host["code"], host["token"])]
    for i in range(1, humans):
        joined = await http.post(f"/api/rooms/{host['code']}/join", json={"name": f"P{i}"})
        joined.raise_for_status()
        seats.append(Seat(host["code"], joined.json()["token"]))
    if screen:
        watched = await http.post(f"/api/rooms/{host['code']}/watch", json={"name": "TV"})
        watched.raise_for_status()
        seats.append(Seat(host["code"], watched.json()["token"], acts=False))
    return seats


async def make_rooms(url: str, count: int, humans: int, bots_every: int = 0, screen_every: int = 0,
                     parallel: int = 16) -> list[list[Seat]]:
    """``count`` rooms, made ``parallel`` at a time; every ``bots_every``-th has two of its
    humans' places taken by bots (added at start), every ``screen_every``-th a screen."""
    gate = asyncio.Semaphore(parallel)
    async with httpx.AsyncClient(base_url=url, timeout=60) as http:
        async def one(i: int) -> list[Seat]:
            async with gate:
                bots = bool(bots_every) and i % bots_every == 0
                return await make_room(http, humans - 2 if bots else humans, [],
                                       bool(screen_every) and i % screen_every == 0)
        return list(await asyncio.gather(*(one(i) for i in range(count))))


class Phone:
    """One socket as the browser client keeps it: connected, welcomed, pinging, reconnecting."""

    def __init__(self, url: str, seat: Seat, tally: Tally, rng: random.Random) -> None:
        self.url = url
        self.seat = seat
        self.tally = tally
        self.rng = rng
        self.ws: Any = None
        self.welcomed = asyncio.Event()
        self.changed = asyncio.Event()
        self.pending: tuple[str, float] | None = None  # (message id, sent at)
        self.pending_key = b""  # the pending id as its ack carries it
        self.sent_wall = 0.0  # when it was sent, on the kernel's stamps' clock
        self.acked_at: float | None = None  # the kernel's stamp of the read that brought its ack
        self.ids = 0
        self.closed_by_us = False

    async def keep(self, started: float) -> None:
        """Connect and stay connected until :meth:`stop`; every (re)connect is timed from
        ``started`` or from the drop that preceded it."""
        attempt = 0
        since = started
        first = True
        while not self.closed_by_us:
            code: int | None = None
            hint: int | None = None
            try:
                async with websockets.connect(f"{ws_url(self.url)}/ws/{self.seat.code}", max_size=2**20,
                                              compression=None, open_timeout=30, ping_interval=None,
                                              close_timeout=2) as ws:
                    self.ws = ws
                    stamp_reads(ws, self._read)
                    await ws.send(json.dumps({"type": "hello", "token": self.seat.token}))
                    pinger = asyncio.create_task(self._ping())
                    try:
                        async for raw in ws:
                            if self._receive(json.loads(raw)):
                                (self.tally.first_welcome_s if first else self.tally.rewelcome_s).append(
                                    time.perf_counter() - since)
                                first = False
                                attempt = 0
                    finally:
                        pinger.cancel()
                    code, reason = ws.close_code, ws.close_reason
                    hint = _hint(reason)
            except (TimeoutError, OSError, websockets.exceptions.WebSocketException) as exc:
                code = getattr(getattr(exc, "rcvd", None), "code", None)
                hint = _hint(getattr(getattr(exc, "rcvd", None), "reason", ""))
                status = getattr(getattr(exc, "response", None), "status_code", None)
                self.tally.fail(f"close {code}" if code else f"http {status}" if status
                                else type(exc).__name__)
            finally:
                self.ws = None
                self.welcomed.clear()
            if self.closed_by_us:
                return
            if code is not None and code not in (1000, 1001, 1006, 1012, 1013):
                self.tally.fail(f"close {code}")
                if code >= 4000:
                    return  # the client gives up (web/js/net.js FATAL)
            attempt += 1
            if attempt == 1:
                since = time.perf_counter()
            await asyncio.sleep(backoff_s(attempt, self.rng, code, hint))

    def _read(self, data: bytes, stamp: float) -> None:
        if self.pending_key and self.acked_at is None and self.pending_key in data:
            self.acked_at = stamp

    def _receive(self, msg: dict[str, Any]) -> bool:
        kind = msg["type"]
        seat = self.seat
        welcomed = False
        if kind == "welcome":
            seat.view, seat.version, seat.me = msg["state"], msg["version"], msg["you"]
            self.tally.welcomes += 1
            self.welcomed.set()
            welcomed = True
        elif kind == "patch":
            seat.view = apply_ops(seat.view, msg["ops"])
            seat.version = msg["version"]
        elif kind == "ack" and self.pending and msg.get("id") == self.pending[0]:
            read_ms = (time.perf_counter() - self.pending[1]) * 1000
            self.tally.latencies_ms.append(read_ms)
            # unstamped (the id split over two reads, or no stamps here): as the loop read it
            self.tally.stamped_ms.append(read_ms if self.acked_at is None
                                         else min(read_ms, (self.acked_at - self.sent_wall) * 1000))
            self.tally.unstamped += self.acked_at is None
            self.tally.actions += 1
            self.pending = None
        elif kind == "error":
            self.tally.errors[msg["code"]] = self.tally.errors.get(msg["code"], 0) + 1
            if self.pending and msg.get("id") == self.pending[0]:
                self.pending = None
        self.changed.set()
        return welcomed

    async def _ping(self) -> None:
        await asyncio.sleep(self.rng.uniform(0, PING_EVERY_S))
        while True:
            with contextlib.suppress(Exception):
                await self.ws.send('{"type":"ping"}')
                self.tally.pings += 1
            await asyncio.sleep(PING_EVERY_S)

    async def send(self, msg: dict[str, Any]) -> bool:
        ws = self.ws
        if ws is None or not self.welcomed.is_set():
            return False
        self.ids += 1
        msg["id"] = f"{self.seat.me}-{self.ids}-{self.rng.randrange(1 << 30)}"
        self.pending_key = f'"{msg["id"]}"'.encode()
        self.acked_at = None
        self.sent_wall = time.time()
        self.pending = (msg["id"], time.perf_counter())
        try:
            await ws.send(json.dumps(msg))
        except websockets.exceptions.WebSocketException:
            self.pending = None
            return False
        return True

    async def stop(self) -> None:
        self.closed_by_us = True
        if self.ws is not None:
            with contextlib.suppress(Exception):
                await self.ws.close()


def _hint(reason: str | None) -> int | None:
    """The ``retry_ms`` a busy server's close reason carries (app/transport/admission.py)."""
    if not reason:
        return None
    try:
        value = json.loads(reason).get("retry_ms")
    except (ValueError, AttributeError):
        return None
    return int(value) if isinstance(value, int | float) else None


def move_for(seat: Seat, rng: random.Random) -> dict[str, Any] | None:
    """A legal move for ``seat`` now (as bench.loadgen_table's players choose), or None; the
    host also starts the lobby and every rematch."""
    view = seat.view
    room = view.get("room") or {}
    status = room.get("status")
    if room.get("host") == seat.me and status in ("lobby", "round_over", "match_over"):
        return {"type": "start" if status == "lobby" else "rematch"}
    game = view.get("game")
    if not game or status != "playing" or not game.get("legal"):
        return None
    pending = game.get("pending")
    mine = pending["player"] == seat.me if pending else game["turn"] == seat.me
    if not mine:
        return None
    legal = game["legal"]
    if legal["choose"]:
        key = pending["choice"] if pending["choice"] in ("target", "top") else "color"
        return {"type": "choose", key: rng.choice(legal["choose"])}
    if legal["play"]:
        return {"type": "play", "card": rng.choice(legal["play"]), "uno": len(view.get("hand", [])) == 2}
    if legal["draw"]:
        return {"type": "draw"}
    if legal["pass"]:
        return {"type": "pass"}
    return None


class Workers:
    """The generator's worker processes, each told one-word commands over a pipe and answering
    each: ``target(*args_of(w, start_at), pipe)`` runs in worker ``w``; they start connecting
    at ``start_at`` (past their own start-up). ``nice`` puts them behind the server in the
    scheduler, as if they ran on a machine of their own."""

    def __init__(self, target: Callable[..., None], args_of: Callable[[int, float], tuple[Any, ...]],
                 workers: int, nice: int = 0) -> None:
        ctx = mp.get_context("spawn")
        self.start_at = time.time() + 1.5 * workers
        self.links: list[Any] = []
        self.procs: list[Any] = []
        for w in range(workers):
            parent, child = ctx.Pipe()
            proc = ctx.Process(target=target, args=(*args_of(w, self.start_at), child), daemon=True)
            proc.start()
            if nice:
                os.setpriority(os.PRIO_PROCESS, proc.pid, nice)
            self.links.append(parent)
            self.procs.append(proc)

    def ask(self, command: str) -> list[Any]:
        for link in self.links:
            link.send(command)
        return [link.recv() for link in self.links]

    def welcomed(self) -> int:
        return sum(self.ask("count"))

    def stop(self) -> None:
        if any(p.is_alive() for p in self.procs):
            self.ask("stop")
        for proc in self.procs:
            proc.join(10)
