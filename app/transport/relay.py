"""Sockets relayed to their room's home process, so a room spread over processes by a balancer
that ignores the room is still played by one of them: spread over three processes that each
rebuild the room and make their sockets' views on every commit, a move cost each about twice a
single process's CPU (docs/benchmarks.md). A room's home is the process that took its first
socket (or took it over from one found gone); another process that gets a socket of the room
relays its frames both ways through Redis pub/sub on each process's own channel. The home runs
the socket's whole session (app/transport/session.py) on a ``RelayedSocket``; the relaying
process keeps the edge: the handshake, the per-address limits, a gate that answers pings and
cuts off a flood (app/transport/gate.py), and the queue that drops a reader too slow to keep up.

The home is a routing hint, never a lock: two processes that both think they are a room's home
are correct, only slower. A lost relay ends in a state the protocol handles: a home that stops
listening (a ping with no receiver twice, or silence for ``relay_silence_ms``) has its relayed
sockets closed with 1012 and is taken over; a relaying process gone silent has its sessions
ended by the home (its players disconnected); a gap in a sender's numbered stream (Redis
restarted under it) closes the sockets relayed between the two with 1012. While the relay's
connection is down a client's message gets ``unavailable`` (it retries with the same id).
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

import orjson
from redis.exceptions import RedisError

from app.core.protocol import Close, Err, dumps
from app.processes.limits import TokenBucket
from app.rooms.intent import error
from app.transport.connection import Connection
from app.transport.gate import PONG_TEXT, YIELD_EVERY, Verdict, gate, seconds
from app.transport.relay_post import Post
from app.transport.relay_wire import (
    BATCH,
    BINARY,
    CLOSE,
    GONE,
    LEAVING,
    LEAVING_RECORD,
    OPEN,
    PING,
    PONG,
    PONG_RECORD,
    SEQ,
    TEXT,
    Link,
    RelayedSocket,
    client_record,
    close_record,
    frames_record,
    gone_record,
    is_ping,
    key_bytes,
    message_id,
    read_batch,
)
from app.transport.session import session

if TYPE_CHECKING:
    from app.transport.asgi import RawSocket
    from app.transport.parts import SocketParts

log = logging.getLogger("mercyless.relay")

FORGET_AFTER_S = 300.0  # a process nothing is relayed with, unheard of this long, is forgotten
MISSED_PINGS = 2  # pings in a row that found no receiver: the home is gone


class Relay:
    def __init__(self, parts: SocketParts) -> None:
        self.parts = parts
        self.node_id = parts.rooms.node_id
        self.store = parts.store
        assert parts.settings.redis_url is not None
        self.post = Post(self.node_id, parts.settings.redis_url, self.store.node_channel, self,
                         shards=self.store.shards)
        self.links: dict[str, Link] = {}  # relayed from here: key -> the client's socket
        self.relayed: dict[str, RelayedSocket] = {}  # relayed to here: key -> its session's socket
        self._keys = itertools.count(1)
        self._heard: dict[str, float] = {}  # node -> when a message from it last came (monotonic)
        self._missed: dict[str, int] = {}  # home -> pings in a row that found no receiver
        self._gone: dict[str, float] = {}  # node -> until when it is not relayed to (monotonic)
        self._alive: dict[str, float] = {}  # node -> when its heartbeat was last found fresh
        self._task: asyncio.Task[None] | None = None
        self._sessions: set[asyncio.Task[None]] = set()
        self.leaving = False  # this process is stopping (see leave)

    def start(self) -> None:
        self._task = asyncio.create_task(self._watch(), name="relay")
        self.post.publisher.connect_soon()

    def leave(self) -> None:
        """This process is stopping: every process it relays with hears so now, before its
        sockets close. Theirs relayed here close (1012) and their clients come back through
        them, which take the rooms over instead of relaying back here; the sessions relayed
        from here end. A socket opened to it meanwhile is closed with 1012 and the same word."""
        self.leaving = True
        nodes = (self._heard.keys() | {link.home for link in self.links.values()}
                 | {ws.node for ws in self.relayed.values()})
        for node in nodes:
            self.post.queue(node, LEAVING_RECORD)
        self.post.flush()

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
        for link in list(self.links.values()):
            link.conn.close(Close.RESTART)
        self.post.publisher.close()

    # -- the relaying side ----------------------------------------------------------------------

    async def home_of(self, code: str) -> str | None:
        """The process to relay a socket of ``code`` to; None: serve it here (this process is
        the room's home now, or the room does not exist)."""
        home = await self.store.claim_home(code, self.node_id)
        if home in ("", self.node_id):
            return None
        if not await self._reachable(home):
            home = await self.store.claim_home(code, self.node_id, replacing=home)
            if home in ("", self.node_id):
                return None
        return home

    async def _reachable(self, node: str) -> bool:
        now = time.monotonic()
        if self._gone.get(node, 0) > now:
            return False
        if now - self._alive.get(node, -1e9) < self.parts.settings.node_beat_ms / 1000:
            return True
        beat = await self.store.node_beat_ms(node)
        if beat is None or self.parts.clock.now_ms() - beat > self.parts.settings.node_ttl_ms:
            return False
        self._alive[node] = now
        return True

    async def serve(self, ws: RawSocket, code: str, home: str) -> bool:
        """Relay ``ws`` (not yet accepted) to ``home`` until either side closes it; False when
        ``home`` did not listen (``ws`` is accepted then, and the caller serves it here)."""
        settings = self.parts.settings
        await ws.accept()
        key = f"{self.node_id}.{next(self._keys)}"
        conn = Connection(ws, code, "", outbox_limit=settings.outbox_limit,
                          send_timeout_s=settings.send_timeout_s)
        self._heard.setdefault(home, time.monotonic())
        opening = orjson.dumps([self.node_id, key, code, ws.client_host,
                                {k: v for k, v in ws.headers.items() if k in ("origin", "host")}])
        try:
            listening = await asyncio.wait_for(self.post.send_waiting(home, OPEN, opening),
                                               settings.relay_silence_ms / 1000)
        except (RedisError, TimeoutError):  # served here: its hello meets the same outage
            return False
        if not listening:
            self._give_up(home)
            return False
        if self._gone.get(home, 0) > time.monotonic():  # it said it is leaving while we waited
            return False
        # listed once the home has it: a give-up meanwhile (another socket found the home
        # gone) must not close this socket, which is served here then
        link = self.links[key] = Link(conn, home)
        self.parts.metrics.relayed.set(len(self.links))
        limit = settings.max_frame_bytes
        prefix = key_bytes(key)
        # the home applies the player's rate limit; this gate, with twice its allowance for
        # messages, keeps a flood from piling up in the home and cuts it off, and answers the
        # pings here (with an allowance of their own, as on the home: a player who clicks fast
        # still gets pongs)
        clock = seconds(self.parts.clock.speed)
        door = gate(settings, TokenBucket(settings.rate_burst * 2, settings.rate_per_s * 2, clock), clock)
        hello = True  # the first frame goes to the home as it came, as a local one is read
        try:
            while not conn.closed:
                message = await ws.receive()
                if message["type"] == "websocket.disconnect":
                    return True
                frame = message.get("text")
                kind = TEXT
                if frame is None:
                    frame, kind = message.get("bytes") or b"", BINARY
                if hello:
                    hello = False
                else:
                    verdict = door.admit(frame)
                    if verdict is not Verdict.MESSAGE:
                        if verdict is Verdict.PING:
                            conn.send(PONG_TEXT)
                        elif verdict is Verdict.FLOOD:
                            log.warning("relayed socket flooded: closed, its address slowed",
                                        extra={"room": code})
                            conn.close(Close.POLICY)
                            await self.parts.limits.flooded(ws.client_host)
                        elif door.over % YIELD_EVERY == 0:
                            await asyncio.sleep(0)  # (the other rooms' turn)
                        # past this gate's limit, past the home's too: the home gave the notice
                        continue
                if len(frame) > limit:  # the home answers too_large and closes (1009)
                    kind, payload = TEXT, b"x" * (limit + 1)
                else:
                    payload = frame if type(frame) is bytes else frame.encode()  # type: ignore[union-attr]
                # not waited for, nor answered: it goes in this loop turn's batch to the home,
                # after this socket's earlier frames, and a home that stopped listening is
                # found by the pings
                if not self.post.relay_frame(home, link, payload, client_record(kind, prefix, payload)):
                    self.unsent(link, payload)
        finally:
            self.links.pop(key, None)
            self.parts.metrics.relayed.set(len(self.links))
            if not link.closed_by_home:  # a session must not outlive its socket
                self.post.socket_gone(home, gone_record(prefix))
            conn.close(Close.RESTART if not link.closed_by_home else Close.NORMAL)
            await conn.wait_closed()

    def unsent(self, link: Link, payload: bytes) -> None:
        """A client's frame the relay connection could not take: a hello ends the socket (the
        client tries again), a ping is answered here, a message gets ``unavailable`` (the
        client retries the same id)."""
        if not link.sent:
            link.conn.close(Close.TRY_AGAIN_LATER)
        elif is_ping(payload):
            link.conn.send(PONG_TEXT)
        else:
            link.conn.send(dumps(error(message_id(payload), Err.UNAVAILABLE, "unavailable, try again")))

    def lost(self, home: str, links: list[Link], result: int | Exception) -> None:
        """Client frames that went out to ``home`` and whose fate is unknown (the connection
        was lost under them, or nobody listened): answering them here could contradict the
        home's answers, so their sockets close and the clients reconnect and retry."""
        if isinstance(result, Exception):
            for link in links:
                link.conn.close(Close.RESTART)
        elif not result:  # the home went away under these sockets
            self._give_up(home)

    def _give_up(self, home: str) -> None:
        """``home`` does not listen: close the sockets relayed to it (their clients reconnect,
        and the room's next socket takes the room over) and relay nothing to it for a while."""
        self._gone[home] = time.monotonic() + self.parts.settings.node_ttl_ms / 1000
        self._missed.pop(home, None)
        self._heard.pop(home, None)
        self._alive.pop(home, None)
        self.close_links_to(home)

    def close_links_to(self, home: str) -> None:
        """Close the sockets relayed to ``home`` with 1012: their clients reconnect."""
        for link in list(self.links.values()):
            if link.home == home:
                link.conn.close(Close.RESTART)

    # -- the home's side ------------------------------------------------------------------------

    def send_frames(self, node: str, key: str, texts: Sequence[str | bytes]) -> None:
        self.post.queue(node, frames_record(key, texts))

    def send_close(self, node: str, key: str, code: int) -> None:
        self.post.queue(node, close_record(key, code))

    def end_sessions_of(self, node: str) -> None:
        """End the sessions relayed from ``node``; their clients are told to reconnect (1012),
        if the close reaches them."""
        for ws in list(self.relayed.values()):
            if ws.node == node:
                ws.end(Close.RESTART)

    def _open(self, body: bytes) -> None:
        node, key, code, client_host, headers = orjson.loads(body)
        self._heard[node] = time.monotonic()
        if self.leaving:
            self.post.queue(node, LEAVING_RECORD)
            self.post.queue(node, close_record(key, Close.RESTART))
            return
        ws = self.relayed[key] = RelayedSocket(self, node, key, code, client_host, headers)
        task = asyncio.create_task(self._session(ws), name=f"relayed-{key}")
        self._sessions.add(task)  # held: the loop keeps only weak references to tasks
        task.add_done_callback(self._sessions.discard)

    async def _session(self, ws: RelayedSocket) -> None:
        try:
            await session(ws, self.parts, ws.code)  # type: ignore[arg-type]
        except Exception:
            log.exception("relayed session failed", extra={"room": ws.code})
        finally:
            self.relayed.pop(ws.key, None)
            await ws.close(Close.NORMAL)

    # -- both sides -----------------------------------------------------------------------------

    def on_message(self, data: bytes) -> None:
        """A message on this process's channel: kind, sender, number, then what it carries."""
        kind = data[:1]
        size = data[1]
        sender = data[2:2 + size].decode()
        (seq,) = SEQ.unpack_from(data, 2 + size)
        body = memoryview(data)[6 + size:]
        self._heard[sender] = time.monotonic()
        self.post.in_order(sender, seq)  # a gap closes what it concerns; this message still counts
        if kind == BATCH:
            self._missed.pop(sender, None)
            self._batch(body, sender)
        elif kind == OPEN:
            self._open(bytes(body))
        elif kind == PING:
            self.post.queue(sender, PONG_RECORD)

    def _batch(self, data: memoryview, sender: str) -> None:
        for kind, key, count, frames in read_batch(data):
            if kind == PONG:  # the batch was heard: nothing more to do
                continue
            if kind == LEAVING:
                log.info("relay: process %s is stopping", sender)
                self._give_up(sender)
                self.end_sessions_of(sender)
                continue
            if kind in (TEXT, BINARY, GONE):  # a client's, for a session here
                ws = self.relayed.get(key)
                if ws is None:  # ended meanwhile
                    continue
                if kind == TEXT:
                    ws.feed({"type": "websocket.receive", "text": frames[0].decode("utf-8", "replace")})
                elif kind == BINARY:
                    ws.feed({"type": "websocket.receive", "bytes": frames[0]})
                else:
                    ws.feed({"type": "websocket.disconnect", "code": Close.NORMAL})
                continue
            link = self.links.get(key)
            if link is None:  # a socket gone meanwhile
                continue
            if kind == CLOSE:
                link.closed_by_home = True
                link.conn.close(count)
            else:
                link.conn.send_frames(frames)

    def heard_again(self) -> None:
        """This process's channel is listened to again after a lost connection: whoever was
        silent meanwhile gets a fresh hearing."""
        now = time.monotonic()
        for node in self._heard:
            self._heard[node] = now
        self._missed.clear()

    async def _watch(self) -> None:
        settings = self.parts.settings
        every = settings.relay_ping_ms / 1000
        while True:
            await asyncio.sleep(every)
            try:
                await self._check(settings.relay_silence_ms / 1000)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("relay check failed")

    async def _check(self, silence_s: float) -> None:
        if self.post.publisher.stalled(silence_s):
            log.warning("relay publisher connection stalled: reconnecting")
            self.post.publisher.abort()
        self.post.flush()  # frames kept while the connection was down
        subscriber = self.parts.rooms.subscriber
        if subscriber is None or not subscriber.connected.is_set():
            return  # deaf ourselves: nobody is judged (heard_again restarts the count)
        now = time.monotonic()
        homes = list({link.home for link in self.links.values()})
        answers = await asyncio.gather(*(asyncio.wait_for(self.post.send_waiting(home, PING, b""), silence_s)
                                         for home in homes), return_exceptions=True)
        for home, listening in zip(homes, answers, strict=True):
            if isinstance(listening, BaseException):  # our own connection: the stall check's
                if isinstance(listening, asyncio.CancelledError):
                    raise listening
                continue
            missed = 0 if listening else self._missed.get(home, 0) + 1
            self._missed[home] = missed
            if missed >= MISSED_PINGS or now - self._heard.get(home, now) > silence_s:
                log.warning("relay home %s gone", home)
                self._give_up(home)
        for node in {ws.node for ws in self.relayed.values()}:
            if now - self._heard.get(node, now) > silence_s:
                log.warning("relaying process %s silent: its sockets end", node)
                self.end_sessions_of(node)
                self._heard.pop(node, None)
        for node in [n for n, until in self._gone.items() if until <= now]:
            del self._gone[node]
        self._forget_idle(now)

    def _forget_idle(self, now: float) -> None:
        """What is known of processes nothing is relayed with any more goes after a while (each
        restart is a new process id; an old count starts over harmlessly: a gap closes only
        the sockets relayed with the sender, and there are none)."""
        in_use = {link.home for link in self.links.values()} | {ws.node for ws in self.relayed.values()}
        known = self._heard.keys() | self.post.next_in.keys() | self.post.next_out.keys() | self._alive.keys()
        for node in known - in_use:
            last = max(self._heard.get(node, 0.0), self._alive.get(node, 0.0))
            if now - last > FORGET_AFTER_S:
                for table in (self._heard, self._missed, self._alive):
                    table.pop(node, None)
                self.post.forget(node)
