"""The few lines of RESP the hot paths need, on connections of their own, parsed by hiredis.

Every commit and every other process's commit message pass here. redis-py's asyncio client
spends several times more Python per command than the command costs (pool lock and health
check, retry wrapper, observability hooks, per-argument packing); these paths know their
commands in advance and only need bytes out and replies back.
"""

from __future__ import annotations

import asyncio
import ssl
from typing import Any

import hiredis
from redis.asyncio.connection import SSLConnection, UnixDomainSocketConnection, parse_url
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import NoScriptError, ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

CONNECT_TIMEOUT_S = 2.0


def pack(*parts: str | bytes | int | float) -> bytes:
    """One command in RESP (hiredis packs it in C: a commit's ~4 KB document and a dozen
    arguments cost ~2 us there against ~6 us in Python). Anything else (None, a bool, an enum)
    is a TypeError, not a guess (the Python packer sent ``True`` as ``b"True"``)."""
    return hiredis.pack_command(parts)


def reply_error(error: hiredis.ReplyError) -> ResponseError:
    """A Redis error reply as redis-py's exception (NOSCRIPT gets its own type)."""
    text = str(error)
    return NoScriptError(text) if text.startswith("NOSCRIPT") else ResponseError(text)


async def connect(url: str, *, select_db: bool = True) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """Open a connection to the Redis of ``url`` (redis://, rediss://, unix://), AUTH and SELECT
    done; raises OSError / TimeoutError / redis ConnectionError."""
    o: dict[str, Any] = parse_url(url)
    if o.get("connection_class") is UnixDomainSocketConnection:
        opened = asyncio.open_unix_connection(o["path"])
    else:
        context = ssl.create_default_context() if o.get("connection_class") is SSLConnection else None
        opened = asyncio.open_connection(o.get("host", "localhost"), int(o.get("port", 6379)), ssl=context)
    reader, writer = await asyncio.wait_for(opened, CONNECT_TIMEOUT_S)
    setup: list[bytes] = []
    if o.get("password"):
        setup.append(pack("AUTH", o["username"], o["password"]) if o.get("username")
                     else pack("AUTH", o["password"]))
    if select_db and int(o.get("db", 0) or 0):
        setup.append(pack("SELECT", int(o["db"])))
    if setup:
        writer.write(b"".join(setup))
        for _ in setup:
            line = await asyncio.wait_for(reader.readline(), CONNECT_TIMEOUT_S)
            if not line.startswith(b"+OK"):
                writer.close()
                raise RedisConnectionError(f"Redis refused: {line.decode(errors='replace').strip()}")
    return reader, writer


class RawConnection:
    """One connection that runs a batch of commands at a time and returns their replies (error
    replies as exception objects, like redis-py's ``raise_on_error=False``). Connects lazily;
    a lost or stalled connection raises redis' ConnectionError / TimeoutError for the batch and
    is opened again for the next."""

    def __init__(self, url: str, timeout_s: float = 5.0) -> None:
        self._url = url
        self._timeout_s = timeout_s
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._parser = hiredis.Reader()

    async def execute(self, commands: list[tuple[Any, ...]]) -> list[Any]:
        """Send ``commands`` and return their replies. A connection that was open before the call
        and turns out dead (Redis restarted, the socket was cut while idle) is opened again and
        the batch sent once more: the callers' commands are safe to repeat (a commit checks the
        room's version and the message id, an index write sets the same value)."""
        reused = self._writer is not None
        try:
            return await self._execute(commands)
        except RedisConnectionError:
            if not reused:
                raise
        return await self._execute(commands)

    async def _execute(self, commands: list[tuple[Any, ...]]) -> list[Any]:
        try:
            async with asyncio.timeout(self._timeout_s):
                if self._writer is None:
                    self._reader, self._writer = await connect(self._url)
                    self._parser = hiredis.Reader()
                reader, parser = self._reader, self._parser
                assert reader is not None
                self._writer.write(b"".join([pack(*command) for command in commands]))
                replies: list[Any] = []
                while len(replies) < len(commands):
                    reply = parser.gets()
                    if reply is False:
                        data = await reader.read(1 << 16)
                        if not data:
                            raise RedisConnectionError("connection closed by Redis")
                        parser.feed(data)
                        continue
                    replies.append(reply_error(reply) if isinstance(reply, hiredis.ReplyError) else reply)
                return replies
        except TimeoutError:
            self.close()
            raise RedisTimeoutError("Redis did not answer in time") from None
        except (OSError, RedisConnectionError, hiredis.ProtocolError) as exc:
            self.close()
            raise RedisConnectionError(f"Redis connection lost: {exc}") from exc
        except BaseException:  # cancelled mid-batch: the replies would belong to nobody
            self.close()
            raise

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
        self._reader = self._writer = None
