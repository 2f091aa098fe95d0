"""PUBLISH on a connection of its own, written straight to the socket, for the relayed sockets'
traffic (app/transport/relay.py).

A relayed move is published twice (the client's frame to the room's home, the home's frames
back); through the group commit each publish woke a task to send it and another to read its
reply. Here ``publish`` writes the command to the transport at once, and the replies (how many
processes listened) come back in order, to a callback each, from the protocol's
``data_received``: no task at all. Publishes that need no answer ask Redis for none
(``CLIENT REPLY SKIP``, once a probe on the new connection found that Redis honours it): each
reply was a wake-up of the process.

Each connection is a ``_Connection`` of its own, with the callbacks of the commands sent on it:
a connection that is lost fails its own callbacks and nobody else's, and replies can never pair
with the commands of another connection. Commands published while a connection opens wait for
it, in order; when it fails they are answered with the error, and the next publish opens another
(at most every ``RETRY_AFTER_S``, so an outage is not a connection attempt per frame).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import ssl
import time
from collections import deque
from collections.abc import Callable
from typing import Any

import hiredis
from redis.asyncio.connection import SSLConnection, UnixDomainSocketConnection, parse_url
from redis.exceptions import ConnectionError as RedisConnectionError

from app.storage.rawredis import CONNECT_TIMEOUT_S, pack, reply_error

log = logging.getLogger("mercyless.publisher")

RETRY_AFTER_S = 0.5
MAX_BUFFERED = 8 << 20  # bytes waiting in the transport: past this Redis is not reading them
_SKIP = pack(b"CLIENT", b"REPLY", b"SKIP")
_PROBE = _SKIP + pack(b"ECHO", b"a") + pack(b"ECHO", b"b")  # one reply ("b") if skipping works

#: what a publish's callback gets: the number of subscribers that received it, or the error
Then = Callable[[int | Exception], None]


def _ignore(result: int | Exception) -> None:
    """The reply of a publish whose sender wants none (when Redis sends it anyway)."""


class _Connection(asyncio.Protocol):
    """One connection to Redis and the callbacks of the commands sent on it, in order."""

    def __init__(self, publisher: Publisher) -> None:
        self.publisher = publisher
        self.transport: asyncio.Transport | None = None
        self.parser = hiredis.Reader()
        self.waiting: deque[Then] = deque()
        self.since = time.monotonic()  # the oldest unanswered command's time, or the last reply's
        self.lost = False

    def send(self, command: bytes, then: Then | None) -> None:
        assert self.transport is not None
        self.transport.write(command)
        if then is not None:
            if not self.waiting:
                self.since = time.monotonic()
            self.waiting.append(then)

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        self.since = time.monotonic()
        self.parser.feed(data)
        while (reply := self.parser.gets()) is not False:
            if not self.waiting:
                continue
            then = self.waiting.popleft()
            try:
                then(reply_error(reply) if isinstance(reply, hiredis.ReplyError) else reply)
            except Exception:  # one caller's bug must not stop the others' replies
                log.exception("publish callback failed")

    def connection_lost(self, exc: Exception | None) -> None:
        self.drop(RedisConnectionError("Redis connection lost"))

    def drop(self, error: Exception) -> None:
        """Give this connection up at once: the publisher stops using it, and every command
        sent on it and not answered learns it was lost (perhaps delivered)."""
        if self.lost:
            return
        self.lost = True
        self.publisher.lost(self)
        if self.transport is not None:
            self.transport.abort()
        waiting, self.waiting = self.waiting, deque()
        for then in waiting:
            with contextlib.suppress(Exception):
                then(error)


class Publisher:
    def __init__(self, url: str, on_ready: Callable[[], None] | None = None, *,
                 command: bytes = b"PUBLISH") -> None:
        """``command``: ``SPUBLISH`` for a shard channel on a cluster's node (app.storage.shardpub)."""
        self._url = url
        self._command = command
        self._on_ready = on_ready
        self._conn: _Connection | None = None  # the open connection
        self._backlog: list[tuple[bytes, Then]] = []  # published while a connection opens
        self._opening: asyncio.Task[None] | None = None
        self._failed_at = -1e9
        self.skips = False  # True once this Redis is found to honour CLIENT REPLY SKIP

    @property
    def ready(self) -> bool:
        """Whether a publish now goes straight out (a connection is open)."""
        return self._conn is not None

    def connect_soon(self) -> None:
        """Open a connection if none is open or opening (a failed attempt is not repeated
        for ``RETRY_AFTER_S``); ``on_ready`` is called once it is open."""
        if (self._conn is None and self._opening is None
                and time.monotonic() - self._failed_at >= RETRY_AFTER_S):
            self._opening = asyncio.create_task(self._open())

    async def until_ready(self) -> bool:
        """Open a connection if need be and wait for it; whether one is open."""
        self.connect_soon()
        opening = self._opening
        if opening is not None:
            await asyncio.shield(opening)
        return self.ready

    def publish(self, channel: bytes | str, payload: bytes, then: Then | None, *,
                reply: bool = True) -> None:
        """Publish ``payload``; ``then`` gets the receiver count or the error (never raises).
        With ``reply=False`` Redis is asked not to answer: ``then`` then hears only of a
        connection lost under the publish."""
        command = pack(self._command, channel, payload)
        conn = self._conn
        if conn is not None:
            if not reply and self.skips:
                conn.send(_SKIP + command, None)
            else:
                conn.send(command, then or _ignore)
            return
        if then is None:
            then = _ignore
        if self._opening is None and time.monotonic() - self._failed_at < RETRY_AFTER_S:
            then(RedisConnectionError("Redis unreachable"))
            return
        self._backlog.append((command, then))
        self.connect_soon()

    async def published(self, channel: bytes | str, payload: bytes) -> int:
        """``publish`` for a caller that waits: the receiver count (raises the error)."""
        return await published_by(self.publish, channel, payload)

    async def _open(self) -> None:
        loop = asyncio.get_running_loop()
        conn = _Connection(self)
        try:
            o: dict[str, Any] = parse_url(self._url)
            if o.get("connection_class") is UnixDomainSocketConnection:
                opening = loop.create_unix_connection(lambda: conn, o["path"])
            else:
                context = ssl.create_default_context() if o.get("connection_class") is SSLConnection else None
                opening = loop.create_connection(lambda: conn, o.get("host", "localhost"),
                                                 int(o.get("port", 6379)), ssl=context)
            await asyncio.wait_for(opening, CONNECT_TIMEOUT_S)
            if conn.lost:  # gone before it could be used
                raise RedisConnectionError("connection lost as it opened")
        except Exception as exc:  # unreachable: every waiting publish learns it
            self._failed_at = time.monotonic()
            backlog, self._backlog = self._backlog, []
            for _, then in backlog:
                then(RedisConnectionError(f"Redis unreachable: {exc}"))
            return
        finally:
            self._opening = None
        if o.get("password"):
            auth = ((o["username"], o["password"]) if o.get("username") else (o["password"],))
            conn.send(pack(b"AUTH", *auth), self._authenticated)
        conn.send(_PROBE, functools.partial(self._probed, conn))
        self._conn = conn
        backlog, self._backlog = self._backlog, []
        for command, then in backlog:
            conn.send(command, then)
        if self._on_ready is not None:
            self._on_ready()

    def _probed(self, conn: _Connection, result: int | Exception) -> None:
        """Whether this Redis skips replies: the probe's first ``ECHO`` is answered only when
        it does not (a managed Redis may refuse ``CLIENT``). Until the answer comes, every
        publish asks for its reply, which is right either way."""
        self.skips = result == b"b"
        if not self.skips:
            log.warning("Redis does not skip replies (%s): publishing with replies", result)
            conn.waiting.appendleft(_ignore)  # the two ECHOs' replies come next
            conn.waiting.appendleft(_ignore)

    def _authenticated(self, result: int | Exception) -> None:
        if isinstance(result, Exception):
            log.warning("Redis refused the publisher's AUTH: %s", result)
            self.abort()

    def lost(self, conn: _Connection) -> None:
        """``conn`` is given up (the next publish opens another)."""
        if self._conn is conn:
            self._conn = None

    def stalled(self, after_s: float) -> bool:
        """Whether the open connection has left a command unanswered for ``after_s``, or holds
        more unsent bytes than Redis would let pile up (a half-open connection)."""
        conn = self._conn
        if conn is None or conn.transport is None:
            return False
        waited = time.monotonic() - conn.since if conn.waiting else 0.0
        return waited > after_s or conn.transport.get_write_buffer_size() > MAX_BUFFERED

    def abort(self) -> None:
        """Drop the open connection now (its unanswered publishes learn it was lost)."""
        if self._conn is not None:
            self._conn.drop(RedisConnectionError("publisher connection dropped"))

    def close(self) -> None:
        self.abort()


async def published_by(publish: Callable[..., None], channel: bytes | str, payload: bytes) -> int:
    """Wait for a callback-style ``publish``: the receiver count, or its error raised."""
    future: asyncio.Future[int | Exception] = asyncio.get_running_loop().create_future()
    publish(channel, payload, lambda result: future.done() or future.set_result(result))
    result = await future
    if isinstance(result, Exception):
        raise result
    return result
