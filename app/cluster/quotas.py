"""Per-address quotas over a minute (HTTP joins, rooms created) and the bound on rooms a
deployment holds, counted in Redis so that every process sees the same counts.

A Redis error lets the request through: the quotas guard against abuse, and refusing every
player while Redis is away would not (the request then meets the outage itself).
"""

from __future__ import annotations

import contextlib

from redis.exceptions import RedisError

from app.storage.store import RoomStore

WINDOW_S = 60


class Quotas:
    def __init__(self, store: RoomStore) -> None:
        self.store = store

    def _key(self, kind: str, address: str) -> str:
        return f"{self.store.prefix}:quota:{kind}:{address}"

    @property
    def _rooms_key(self) -> str:
        return f"{self.store.prefix}:rooms:created"

    async def take(self, kind: str, address: str, per_min: int) -> bool:
        """Count one ``kind`` request from ``address``; False once it is past ``per_min`` in
        the current minute (0: no limit)."""
        if per_min <= 0:
            return True
        key = self._key(kind, address)
        try:
            async with self.store.redis.pipeline(transaction=False) as pipe:
                pipe.incr(key)
                pipe.expire(key, WINDOW_S, nx=True)
                count, _ = await pipe.execute()
        except RedisError:
            return True
        return int(count) <= per_min

    async def room_fits(self, now_ms: int, max_rooms: int) -> bool:
        """Fewer than ``max_rooms`` rooms were created within a room's lifetime (the store's
        TTL): an upper bound on the rooms held, since an idle room expires after it."""
        if max_rooms <= 0:
            return True
        try:
            async with self.store.redis.pipeline(transaction=False) as pipe:
                pipe.zremrangebyscore(self._rooms_key, "-inf", now_ms - self.store.ttl_ms)
                pipe.zcard(self._rooms_key)
                _, count = await pipe.execute()
        except RedisError:
            return True
        return int(count) < max_rooms

    async def room_created(self, code: str, now_ms: int) -> None:
        """Count the new room; the index lives as long as the newest room would (idle)."""
        with contextlib.suppress(RedisError):
            async with self.store.redis.pipeline(transaction=False) as pipe:
                pipe.zadd(self._rooms_key, {code: now_ms})
                pipe.pexpire(self._rooms_key, self.store.ttl_ms)
                await pipe.execute()
