"""Per-address quotas over a minute (HTTP joins, rooms created, room look-ups, QR codes) and the
bound on rooms a deployment holds, counted in Redis so that every process sees the same counts.
An "address" is the client's network (app/core/networks.py): callers pass the client's address
as it came, and it is keyed here.

A Redis error lets the request through: the quotas guard against abuse, and refusing every
player while Redis is away would not (the request then meets the outage itself).
"""

from __future__ import annotations

import contextlib

from redis.exceptions import RedisError

from app.core.networks import network_key
from app.core.settings import Settings
from app.storage.store import RoomStore

WINDOW_S = 60


class Quotas:
    def __init__(self, store: RoomStore, settings: Settings) -> None:
        self.store = store
        self.network = network_key(settings)

    def _key(self, kind: str, address: str) -> str:
        return f"{self.store.prefix}:quota:{kind}:{self.network(address)}"

    @property
    def _rooms_key(self) -> str:
        return f"{self.store.prefix}:rooms:opened"

    async def take(self, kind: str, address: str, per_min: int) -> bool:
        """Count one ``kind`` request from ``address``; False once it is past ``per_min`` in
        the current minute (0: no limit)."""
        return await self.retry_after(kind, address, per_min) == 0

    async def retry_after(self, kind: str, address: str, per_min: int) -> int:
        """``take``, answered as the whole seconds until ``address``'s minute ends (an HTTP
        ``Retry-After``) once it is past ``per_min``; 0 within it."""
        if per_min <= 0:
            return 0
        key = self._key(kind, address)
        try:
            async with self.store.redis.pipeline(transaction=False) as pipe:
                pipe.incr(key)
                pipe.expire(key, WINDOW_S, nx=True)
                pipe.pttl(key)
                count, _, ttl_ms = await pipe.execute()
        except RedisError:
            return 0
        if int(count) <= per_min:
            return 0
        return max(1, -(-int(ttl_ms) // 1000)) if int(ttl_ms) > 0 else WINDOW_S

    async def room_fits(self, now_ms: int, max_rooms: int) -> bool:
        """Fewer than ``max_rooms`` rooms were opened (someone said hello in them) within a
        room's lifetime (the store's TTL): an upper bound on the rooms in use, since an idle room
        expires after it. A room nobody opens is not counted: it expires after
        UNCLAIMED_ROOM_TTL_MS, so a flood of creations cannot fill the server for everyone."""
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

    async def room_opened(self, code: str, now_ms: int) -> None:
        """Count the room someone said hello in (again: its time is the latest); the index lives
        as long as the newest room would (idle)."""
        with contextlib.suppress(RedisError):
            async with self.store.redis.pipeline(transaction=False) as pipe:
                pipe.zadd(self._rooms_key, {code: now_ms})
                pipe.pexpire(self._rooms_key, self.store.ttl_ms)
                await pipe.execute()
