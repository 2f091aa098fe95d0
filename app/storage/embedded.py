"""The in-process store (no ``REDIS_URL``), kept across restarts and crashes.

The embedded store is fakeredis, which lives in the process. To outlive it, every command that
may write is appended to a journal as it runs, the way Redis's append-only file keeps them
(RESP, in order). A command's caller gets its reply only once the record is in the file, so a
process killed at any moment (SIGKILL, a crash) has written every change it acknowledged. When
the process starts, the journal is replayed into a new store, then rewritten as one ``RESTORE``
per key; a clean stop rewrites it the same way, so it never grows past one night of commands.

The file is written by a thread of its own (the event loop never waits on the disk) and
flushed to the operating system for every batch, with an ``fsync`` at most once a second:
a killed process loses nothing acknowledged; a power cut loses at most the last second.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import queue
import threading
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import fakeredis
from fakeredis.aioredis import FakeAsyncRedisConnection
from redis.exceptions import RedisError

log = logging.getLogger("mercyless.store")

#: Commands that never change what is stored: left out of the journal. Anything else is
#: written (a read written by mistake costs a replay step; a write left out would be lost).
READS = frozenset({
    b"GET", b"MGET", b"STRLEN", b"EXISTS", b"TYPE", b"TTL", b"PTTL", b"KEYS", b"SCAN", b"DBSIZE",
    b"HGET", b"HMGET", b"HGETALL", b"HLEN", b"HEXISTS", b"HKEYS", b"HVALS", b"HSCAN",
    b"LRANGE", b"LLEN", b"LINDEX", b"SMEMBERS", b"SISMEMBER", b"SCARD", b"SSCAN",
    b"ZRANGE", b"ZRANGEBYSCORE", b"ZREVRANGE", b"ZCARD", b"ZCOUNT", b"ZSCORE", b"ZRANK", b"ZSCAN",
    b"PING", b"ECHO", b"INFO", b"TIME", b"CLIENT", b"HELLO", b"SELECT", b"PUBLISH", b"SUBSCRIBE",
    b"UNSUBSCRIBE", b"PSUBSCRIBE", b"PUNSUBSCRIBE", b"SPUBLISH", b"DUMP", b"WAIT",
})
FSYNC_EVERY_S = 1.0


def commands_in(packed: bytes) -> list[bytes]:
    """The RESP arrays in ``packed`` (what a client sends) that may write, each as sent."""
    found: list[bytes] = []
    at = 0
    while at < len(packed):
        name, end = _command_at(packed, at)
        if name.upper() not in READS:
            found.append(packed[at:end])
        at = end
    return found


def _command_at(data: bytes, at: int) -> tuple[bytes, int]:
    """The name of the command whose RESP array starts at ``at``, and where the array ends
    (ValueError: it is cut short or is no array of bulk strings)."""
    if data[at:at + 1] != b"*":
        raise ValueError("not a RESP array")
    line_end = data.index(b"\r\n", at)
    count = int(data[at + 1:line_end])
    at = line_end + 2
    name = b""
    for i in range(count):
        if data[at:at + 1] != b"$":
            raise ValueError("not a bulk string")
        line_end = data.index(b"\r\n", at)
        size = int(data[at + 1:line_end])
        at = line_end + 2
        if i == 0:
            name = data[at:at + size]
        at += size + 2
    if at > len(data):
        raise ValueError("cut short")
    return name, at


class Journal:
    """The append-only file of one embedded store."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._queue: queue.SimpleQueue[tuple[bytes, asyncio.Future[None]] | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._file: Any = None

    # -- start and stop -------------------------------------------------------------------------

    def restore(self, server: fakeredis.FakeServer) -> int:
        """Replay the journal into ``server`` (a record cut short by a crash is left out), then
        rewrite it as the store now is; returns how many commands were replayed."""
        replayed = 0
        if self.path.exists():
            replayed = _replay(self.path.read_bytes(), server)
        self._rewrite(_snapshot(server))
        return replayed

    def start(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._file = open(self.path, "ab")  # noqa: SIM115 - kept open by the writer thread
        self._thread = threading.Thread(target=self._write, name="journal", daemon=True)
        self._thread.start()

    async def close(self, server: fakeredis.FakeServer) -> None:
        """Write what is queued, then rewrite the journal as the store is (a clean stop)."""
        if self._thread is not None:
            self._queue.put(None)
            await asyncio.to_thread(self._thread.join)
            self._thread = None
        if self._file is not None:
            self._file.close()
            self._file = None
        snapshot = _snapshot(server)
        await asyncio.to_thread(self._rewrite, snapshot)

    # -- the journal ----------------------------------------------------------------------------

    async def append(self, records: list[bytes]) -> None:
        """Queue ``records`` for the file; returns once they are written to it."""
        assert self._loop is not None, "the journal is not started"
        written = self._loop.create_future()
        self._queue.put((b"".join(records), written))
        await written

    def _write(self) -> None:
        synced = time.monotonic()
        while True:
            item = self._queue.get()
            batch = [item]
            with contextlib.suppress(queue.Empty):
                while item is not None:
                    item = self._queue.get_nowait()
                    batch.append(item)
            records = [entry for entry in batch if entry is not None]
            if records:
                try:
                    self._file.write(b"".join(data for data, _ in records))
                    self._file.flush()  # with the OS: a killed process loses none of it
                    if time.monotonic() - synced >= FSYNC_EVERY_S:
                        os.fsync(self._file.fileno())
                        synced = time.monotonic()
                    failure = None
                except OSError as exc:
                    log.exception("journal write failed")
                    failure = exc
                assert self._loop is not None
                for _, written in records:
                    self._loop.call_soon_threadsafe(_settle, written, failure)
            if any(entry is None for entry in batch):
                with contextlib.suppress(OSError):
                    self._file.flush()
                    os.fsync(self._file.fileno())
                return

    def _rewrite(self, records: Iterable[bytes]) -> None:
        """Replace the file by ``records``, atomically (a crash leaves the old or the new one)."""
        temporary = self.path.with_name(self.path.name + ".new")
        with open(temporary, "wb") as out:
            for record in records:
                out.write(record)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, self.path)


def _settle(written: asyncio.Future[None], failure: OSError | None) -> None:
    if written.done():
        return
    if failure is None:
        written.set_result(None)
    else:  # the caller's command ran but is not kept: it answers as Redis would, with an error
        written.set_exception(RedisError(f"journal write failed: {failure}"))


def _pack(*args: bytes) -> bytes:
    parts = [b"*%d\r\n" % len(args)]
    for arg in args:
        parts.append(b"$%d\r\n%b\r\n" % (len(arg), arg))
    return b"".join(parts)


def _snapshot(server: fakeredis.FakeServer) -> list[bytes]:
    """The store as commands: one ``RESTORE`` per key, with its time left to live."""
    client = fakeredis.FakeRedis(server=server)
    records = []
    for key in client.scan_iter(count=1000):
        dumped = client.dump(key)
        ttl = client.pttl(key)
        if dumped is None or ttl == -2:  # gone meanwhile
            continue
        records.append(_pack(b"RESTORE", key, b"%d" % max(ttl, 0), dumped, b"REPLACE"))
    client.close()
    return records


def _replay(data: bytes, server: fakeredis.FakeServer) -> int:
    """Run the journal's commands on ``server`` in order; a record cut short ends it."""
    client = fakeredis.FakeRedis(server=server)
    connection = client.connection_pool.get_connection()
    replayed = 0
    at = 0
    try:
        while at < len(data):
            try:
                _, end = _command_at(data, at)
            except ValueError:
                log.warning("journal ends with a record cut short: %d bytes left out", len(data) - at)
                break
            connection.send_packed_command([data[at:end]])
            with contextlib.suppress(RedisError):  # as it answered then (a refused commit, say)
                connection.read_response()
            replayed += 1
            at = end
    finally:
        client.connection_pool.release(connection)
        client.close()
    return replayed


class JournaledConnection(FakeAsyncRedisConnection):
    """A connection to the embedded store whose writes reach the journal before their reply is
    read (``journal`` is set on a subclass made per store)."""

    journal: Journal

    async def send_packed_command(self, command: Any, check_health: bool = True) -> None:
        await super().send_packed_command(command, check_health)
        data = (command if isinstance(command, bytes) else command.encode() if isinstance(command, str)
                else b"".join(command))
        records = commands_in(data)
        if records:
            try:
                await self.journal.append(records)
            except BaseException:
                # cancelled (a stop), or the write failed: the command's reply waits unread on
                # this connection, and the next command sent on it would read it as its own
                await self.disconnect(nowait=True)
                raise


def open_embedded(path: str) -> tuple[fakeredis.FakeAsyncRedis, Journal | None, fakeredis.FakeServer]:
    """The embedded store: kept in the journal at ``path`` ("" keeps it in memory only)."""
    server = fakeredis.FakeServer()
    if not path:
        return fakeredis.FakeAsyncRedis(server=server), None, server
    journal = Journal(Path(path))
    replayed = journal.restore(server)
    if replayed:
        log.info("embedded store restored", extra={"commands": replayed, "path": path})
    connection_class = type("JournaledConnection", (JournaledConnection,), {"journal": journal})
    return fakeredis.FakeAsyncRedis(server=server, connection_class=connection_class), journal, server
