"""Other processes' commits: a Redis pub/sub connection of the hub's own, read with hiredis.

redis-py's ``PubSub.get_message`` costs a health check, a retry wrapper and a timeout context
per message; with every room's players spread over processes each commit is a message, and a
profile put that machinery at about a tenth of the server's CPU. Here one socket read feeds
hiredis and every complete reply in it is handled in a loop.

``subscribe`` returns once Redis has confirmed the subscription, so a caller that reads the
room afterwards cannot miss a commit in between. When the connection drops, the subscriber
reconnects, subscribes to every channel again and calls ``on_reconnect`` (the hub then catches
each local socket up on what was committed meanwhile). A silent connection (a half-open socket)
is found with PINGs.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from typing import Any

import hiredis

from app.storage.rawredis import connect, pack

log = logging.getLogger("mercyless.subscriber")

PING_EVERY_S = 5.0
SILENT_AFTER_S = 15.0  # no byte for this long, PINGs included: the connection is dead
RETRY_AFTER_S = 0.5


class Subscriber:
    def __init__(self, url: str, on_message: Callable[[bytes, bytes], None],
                 on_reconnect: Callable[[], None], confirm_timeout_s: float = 5.0, *,
                 sharded: bool = False, on_moved: Callable[[bytes | None], None] | None = None) -> None:
        """``sharded``: one node of a cluster, its channels shard channels (SSUBSCRIBE);
        ``on_moved`` hears of a channel Redis unsubscribed because its slot moved, and (None)
        of the connection lost (app.storage.shardsub routes them again)."""
        self._url = url
        self._sub, self._unsub = ((b"SSUBSCRIBE", b"SUNSUBSCRIBE") if sharded
                                  else (b"SUBSCRIBE", b"UNSUBSCRIBE"))
        self._kinds = ((b"smessage", b"ssubscribe", b"sunsubscribe") if sharded
                       else (b"message", b"subscribe", b""))
        self._on_moved = on_moved
        self._on_message = on_message
        self._on_reconnect = on_reconnect
        self._confirm_timeout_s = confirm_timeout_s
        self.channels: set[bytes] = set()
        self.confirmed: set[bytes] = set()  # channels Redis confirmed on this connection
        self._writer: asyncio.StreamWriter | None = None
        self._waiting: dict[bytes, list[asyncio.Future[None]]] = {}
        self._last_heard = 0.0
        self.connected = asyncio.Event()
        self.disconnected = asyncio.Event()

    # -- what the hub calls ---------------------------------------------------------------------

    async def subscribe(self, channel: str) -> None:
        """Listen to ``channel``; returns once Redis confirmed it (raises ConnectionError when
        not connected: the channel is subscribed again on reconnect, and the hub catches up)."""
        name = channel.encode()
        self.channels.add(name)
        writer = self._writer
        if writer is None:
            raise ConnectionError("pub/sub connection down")
        confirmed: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiting.setdefault(name, []).append(confirmed)
        writer.write(pack(self._sub, name))
        await asyncio.wait_for(confirmed, self._confirm_timeout_s)

    async def unsubscribe(self, channel: str) -> None:
        name = channel.encode()
        self.channels.discard(name)
        self.confirmed.discard(name)
        if self._writer is not None:
            self._writer.write(pack(self._unsub, name))

    # -- the connection -------------------------------------------------------------------------

    async def run(self) -> None:
        first = True
        while True:
            try:
                reader, writer = await connect(self._url, select_db=False)  # channels span every db
                await self._listen(reader, writer, reconnected=not first)
            except asyncio.CancelledError:
                self._down()
                raise
            except (TimeoutError, OSError, ConnectionError, EOFError, hiredis.ProtocolError) as exc:
                if not first or self._writer is not None:
                    log.warning("pub/sub connection lost: %s", exc)
            first = False
            self._down()
            if self._on_moved is not None:
                self._on_moved(None)
            await asyncio.sleep(RETRY_AFTER_S)

    async def _listen(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, *,
                      reconnected: bool) -> None:
        parser = hiredis.Reader()
        loop = asyncio.get_running_loop()
        lost: asyncio.Future[None] = loop.create_future()

        def received(data: bytes) -> None:
            self._last_heard = time.monotonic()
            parser.feed(data)
            reply = parser.gets()
            while reply is not False:
                self._handle(reply)
                reply = parser.gets()

        # from here the transport hands each read to ``received`` at once: no task wakes to
        # read a commit (nothing was read past the connection's set-up, so nothing is buffered)
        writer.transport.set_protocol(_Feed(received, lost, writer.transport))
        confirmations: list[asyncio.Future[None]] = []
        if self.channels:
            for name in self.channels:
                confirmed: asyncio.Future[None] = loop.create_future()
                self._waiting.setdefault(name, []).append(confirmed)
                confirmations.append(confirmed)
            if self._sub == b"SUBSCRIBE":
                writer.write(pack(self._sub, *self.channels))
            else:  # a cluster node takes the shard channels of one slot per command
                writer.write(b"".join(pack(self._sub, name) for name in self.channels))
        self._writer = writer
        self._last_heard = time.monotonic()
        self.disconnected.clear()
        self.connected.set()
        pinger = asyncio.create_task(self._ping(writer))
        if confirmations or reconnected:
            # once listening again, whatever was committed while deaf is caught up
            caught_up = asyncio.create_task(self._catch_up_when(confirmations))
        try:
            await lost
        finally:
            if not lost.done():  # cancelled: the end of the connection is nobody's news
                lost.cancel()
            pinger.cancel()
            if confirmations or reconnected:
                caught_up.cancel()
            writer.close()

    async def _catch_up_when(self, confirmations: list[asyncio.Future[None]]) -> None:
        results = await asyncio.gather(*confirmations, return_exceptions=True)
        if not any(isinstance(r, BaseException) for r in results):
            self._on_reconnect()

    def _handle(self, reply: Any) -> None:
        if not isinstance(reply, list) or not reply:
            if isinstance(reply, hiredis.ReplyError):
                log.warning("pub/sub error reply: %s", reply)
                if str(reply).startswith("MOVED") and self._on_moved is not None:
                    self._on_moved(None)  # subscribed on a node that no longer has the slot
            return
        kind = reply[0]
        message, subscribed, unsubscribed = self._kinds
        if kind == message:
            try:
                self._on_message(reply[1], reply[2])
            except Exception:  # one bad message must not stop the others
                log.exception("bad commit message")
        elif kind == subscribed:
            if reply[1] in self.channels:
                self.confirmed.add(reply[1])
            for confirmed in self._waiting.pop(reply[1], []):
                if not confirmed.done():
                    confirmed.set_result(None)
        elif kind == unsubscribed and reply[1] in self.channels and self._on_moved is not None:
            # not asked for: the channel's slot moved to another node (a reshard, a failover)
            self.channels.discard(reply[1])
            self.confirmed.discard(reply[1])
            self._on_moved(reply[1])

    async def _ping(self, writer: asyncio.StreamWriter) -> None:
        while True:
            await asyncio.sleep(PING_EVERY_S)
            if time.monotonic() - self._last_heard > SILENT_AFTER_S:
                log.warning("pub/sub connection silent: reconnecting")
                writer.transport.abort()  # the read then fails, and run() connects again
                return
            writer.write(pack(b"PING"))

    def _down(self) -> None:
        self._writer = None
        self.confirmed.clear()
        self.connected.clear()
        self.disconnected.set()
        waiting, self._waiting = self._waiting, {}
        for futures in waiting.values():
            for confirmed in futures:
                if not confirmed.done():
                    confirmed.set_exception(ConnectionError("pub/sub connection lost"))

    async def close(self) -> None:
        with contextlib.suppress(Exception):
            if self._writer is not None:
                self._writer.close()


class _Feed(asyncio.Protocol):
    """The subscription's transport protocol once it is set up: every read goes straight to
    the subscriber; the end of the connection (or unreadable bytes) ends ``lost``."""

    def __init__(self, received: Callable[[bytes], None], lost: asyncio.Future[None],
                 transport: asyncio.BaseTransport) -> None:
        self._received = received
        self._lost = lost
        self._transport = transport

    def data_received(self, data: bytes) -> None:
        try:
            self._received(data)
        except hiredis.ProtocolError as exc:
            self._end(exc)
            self._transport.abort()

    def eof_received(self) -> bool:
        self._end(ConnectionError("closed by Redis"))
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self._end(exc or ConnectionError("closed by Redis"))

    def _end(self, exc: BaseException) -> None:
        if not self._lost.done():
            self._lost.set_exception(exc)
