"""Group commit: the Redis commands of many rooms that are ready at the same moment travel in
one pipeline.

Each room's actor still waits for its own commit, so nothing changes within a room (its
commits stay serial and each learns its own result). Across rooms, one round trip serves
every commit queued while the previous batch was in flight. That matters more for CPU than for
latency: each redis-py ``execute`` goes through the pool's lock and health check, the retry
wrapper and the observability hooks, which cost several times more Python than packing the
commands (a profile at saturation put 17% of the server's samples there). On the real Redis
the batch goes over a connection of its own in plain RESP (``rawredis``).
"""

from __future__ import annotations

import asyncio
from typing import Any

import redis.asyncio as aioredis

from app.storage.rawredis import RawConnection

#: One command: its arguments as redis-py's ``execute_command`` takes them.
Command = tuple[Any, ...]


class GroupCommit:
    """``raw``: a connection of its own to the Redis (None: redis-py's pipeline, as for the tests'
    in-process fakeredis)."""

    def __init__(self, redis: aioredis.Redis, max_batch: int = 128, raw: RawConnection | None = None) -> None:
        self._redis = redis
        self._raw = raw
        self._max_batch = max_batch
        self._queue: list[tuple[tuple[Command, ...], asyncio.Future[list[Any]]]] = []
        self._drainer: asyncio.Task[None] | None = None
        self.batches = 0  # batches sent, and the commands in them (the tests check the grouping)
        self.commands = 0

    async def execute(self, *commands: Command) -> list[Any]:
        """Run ``commands`` in order in a shared pipeline and return their results; a command
        that failed in Redis comes back as its exception object (as ``raise_on_error=False``),
        a lost connection raises here."""
        future: asyncio.Future[list[Any]] = asyncio.get_running_loop().create_future()
        self._queue.append((commands, future))
        if self._drainer is None:
            # started on the loop's next turn: every commit queued in this turn joins the batch
            self._drainer = asyncio.create_task(self._drain())
        return await future

    async def _drain(self) -> None:
        try:
            while self._queue:
                batch, self._queue = self._queue[:self._max_batch], self._queue[self._max_batch:]
                await self._send(batch)
        finally:
            self._drainer = None
            if self._queue:  # cancelled with work left (shutdown): nobody will send it
                for _, future in self._queue:
                    future.cancel()
                self._queue = []

    async def _send(self, batch: list[tuple[tuple[Command, ...], asyncio.Future[list[Any]]]]) -> None:
        try:
            if self._raw is not None:
                results = await self._raw.execute([command for commands, _ in batch for command in commands])
            else:
                async with self._redis.pipeline(transaction=False) as pipe:
                    for commands, _ in batch:
                        for command in commands:
                            pipe.execute_command(*command)
                    results = await pipe.execute(raise_on_error=False)
        except asyncio.CancelledError:
            for _, future in batch:
                future.cancel()
            raise
        except Exception as exc:  # the connection: every commit of the batch failed alike
            for _, future in batch:
                if not future.done():
                    future.set_exception(exc)
            return
        self.batches += 1
        self.commands += len(results)
        start = 0
        for commands, future in batch:
            end = start + len(commands)
            if not future.done():  # its waiter may have been cancelled meanwhile
                future.set_result(results[start:end])
            start = end
