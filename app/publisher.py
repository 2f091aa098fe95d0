"""PUBLISH on a connection of its own, written straight to the socket, for the relayed sockets'
traffic (app/relay.py).

A relayed move is published twice (the client's frame to the room's home, the home's frames
back); through the group commit each publish woke a task to send it and another to read its
reply. Here ``publish`` writes the command to the transport at once, and the replies (how many
processes listened) come back in order, to a callback each, from the protocol's
``data_received``: no task at all. Commands published while the connection opens wait for it,
in order; when it fails they are answered with the error, and the next publish opens it again
(at most every ``RETRY_AFTER_S``, so an outage is not a connection attempt per frame).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import ssl
import time
from collections import deque
from collections.abc import Callable
from typing import Any

import hiredis
from redis.asyncio.connection import SSLConnection, UnixDomainSocketConnection, parse_url
from redis.exceptions import ConnectionError as RedisConnectionError

from .rawredis import CONNECT_TIMEOUT_S, pack, reply_error

log = logging.getLogger("mercyless.publisher")

RETRY_AFTER_S = 0.5
_SKIP = pack(b"CLIENT", b"REPLY", b"SKIP")


def _ignore(result: int | Exception) -> None:
    """The reply of a publish whose sender wants none (when Redis sends it anyway)."""


#: what a publish's callback gets: the number of subscribers that received it, or the error
Then = Callable[[int | Exception], None]


class Publisher(asyncio.Protocol):
    def __init__(self, url: str, on_ready: Callable[[], None] | None = None) -> None:
        self._url = url
        self._on_ready = on_ready
        self._transport: asyncio.Transport | None = None
        self._parser = hiredis.Reader()
        self._waiting: deque[Then] = deque()  # callbacks of the commands sent, in order
        self._backlog: list[tuple[bytes, Then]] = []  # published while the connection opens
        self._opening: asyncio.Task[None] | None = None
        self._failed_at = -1e9
        self.skips = True  # False once Redis refused CLIENT REPLY SKIP
        self._since = 0.0  # when the oldest unanswered command was sent, or last answered

    @property
    def ready(self) -> bool:
        """Whether a publish now goes straight out (the connection is open)."""
        return self._transport is not None and self._opening is None

    def connect_soon(self) -> None:
        """Open the connection if it is not (at most every ``RETRY_AFTER_S``); ``on_ready`` is
        called once it is."""
        if (self._transport is None and self._opening is None
                and time.monotonic() - self._failed_at >= RETRY_AFTER_S):
            self._opening = asyncio.create_task(self._open())

    async def until_ready(self) -> bool:
        """Open the connection if need be and wait for it; whether it is open."""
        self.connect_soon()
        opening = self._opening
        if opening is not None:
            await asyncio.shield(opening)
        return self.ready

    def publish(self, channel: bytes | str, payload: bytes, then: Then | None, *,
                reply: bool = True) -> None:
        """Publish ``payload``; ``then`` gets the receiver count or the error (never raises).
        With ``reply=False`` Redis is asked not to answer (``CLIENT REPLY SKIP``): each reply
        is a wake-up of this process, and most relayed frames need none; ``then`` then hears
        only of a connection known to be down when the frame is published."""
        command = pack(b"PUBLISH", channel, payload)
        if not reply and self.skips and self._transport is not None and self._opening is None:
            self._transport.write(_SKIP + command)
            return
        if then is None:
            then = _ignore
        if self._transport is not None and self._opening is None:
            self._transport.write(command)
            if not self._waiting:
                self._since = time.monotonic()
            self._waiting.append(then)
            return
        if self._opening is None and time.monotonic() - self._failed_at < RETRY_AFTER_S:
            then(RedisConnectionError("Redis unreachable"))
            return
        self._backlog.append((command, then))
        if self._opening is None:
            self._opening = asyncio.create_task(self._open())

    async def published(self, channel: bytes | str, payload: bytes) -> int:
        """``publish`` for a caller that waits: the receiver count (raises the error)."""
        future: asyncio.Future[int | Exception] = asyncio.get_running_loop().create_future()
        self.publish(channel, payload, lambda result: future.done() or future.set_result(result))
        result = await future
        if isinstance(result, Exception):
            raise result
        return result

    async def _open(self) -> None:
        loop = asyncio.get_running_loop()
        try:
            o: dict[str, Any] = parse_url(self._url)
            if o.get("connection_class") is UnixDomainSocketConnection:
                opening = loop.create_unix_connection(lambda: self, o["path"])
            else:
                context = ssl.create_default_context() if o.get("connection_class") is SSLConnection else None
                opening = loop.create_connection(lambda: self, o.get("host", "localhost"),
                                                 int(o.get("port", 6379)), ssl=context)
            transport, _ = await asyncio.wait_for(opening, CONNECT_TIMEOUT_S)
            if o.get("password"):
                auth = ((o["username"], o["password"]) if o.get("username") else (o["password"],))
                transport.write(pack(b"AUTH", *auth))
                self._waiting.append(self._authenticated)
        except Exception as exc:  # unreachable: every waiting publish learns it
            self._failed_at = time.monotonic()
            backlog, self._backlog = self._backlog, []
            for _, then in backlog:
                then(RedisConnectionError(f"Redis unreachable: {exc}"))
            return
        finally:
            self._opening = None
        backlog, self._backlog = self._backlog, []
        if not self._waiting:
            self._since = time.monotonic()
        transport.write(b"".join(command for command, _ in backlog))
        self._waiting.extend(then for _, then in backlog)
        if self._on_ready is not None:
            self._on_ready()

    def _authenticated(self, result: int | Exception) -> None:
        if isinstance(result, Exception):
            log.warning("Redis refused the publisher's AUTH: %s", result)
            if self._transport is not None:
                self._transport.close()

    # -- asyncio.Protocol ------------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = transport  # type: ignore[assignment]
        self._parser = hiredis.Reader()

    def unanswered_for(self) -> float:
        """Seconds the oldest command sent has waited for its reply (0: none waits)."""
        return time.monotonic() - self._since if self._waiting else 0.0

    def abort(self) -> None:
        """Drop a connection that stopped answering (half-open): the next publish opens another."""
        if self._transport is not None:
            self._transport.abort()

    def data_received(self, data: bytes) -> None:
        self._since = time.monotonic()
        self._parser.feed(data)
        while (reply := self._parser.gets()) is not False:
            if not self._waiting:
                continue
            if isinstance(reply, hiredis.ReplyError) and not str(reply).startswith("WRONGPASS"):
                # a PUBLISH is never refused: this Redis refused CLIENT REPLY (a managed one
                # may): publish with replies from now on, on a new connection, since the
                # replies no longer pair with the callbacks
                log.warning("Redis refused CLIENT REPLY SKIP (%s): publishing with replies", reply)
                self.skips = False
                self.abort()
                return
            then = self._waiting.popleft()
            try:
                then(reply_error(reply) if isinstance(reply, hiredis.ReplyError) else reply)
            except Exception:  # one caller's bug must not stop the others' replies
                log.exception("publish callback failed")

    def connection_lost(self, exc: Exception | None) -> None:
        self._transport = None  # opened again at the next publish (a failed open waits a little)
        waiting, self._waiting = self._waiting, deque()
        for then in waiting:  # sent, perhaps delivered: the callers treat it as lost
            with contextlib.suppress(Exception):
                then(RedisConnectionError("Redis connection lost"))

    def close(self) -> None:
        if self._transport is not None:
            self._transport.close()
