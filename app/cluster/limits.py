"""Per-address limits: failed joins (so room codes cannot be walked) and open sockets.

Failed joins are counted in Redis (``<prefix>:fails:<ip>``, one minute), so every process of a
deployment sees the same count; sockets per address are counted per process.
"""

from __future__ import annotations

from collections import Counter

from redis.exceptions import RedisError

from app.storage.store import RoomStore


class AddressLimits:
    def __init__(self, store: RoomStore, failed_joins_per_min: int, sockets_per_ip: int) -> None:
        self.store = store
        self.failed_joins_per_min = failed_joins_per_min
        self.sockets_per_ip = sockets_per_ip
        self.sockets: Counter[str] = Counter()

    def _key(self, ip: str) -> str:
        return f"{self.store.prefix}:fails:{ip}"

    async def joins_blocked(self, ip: str) -> bool:
        if self.failed_joins_per_min <= 0:
            return False
        try:
            count = await self.store.redis.get(self._key(ip))
        except RedisError:
            return False
        return count is not None and int(count) >= self.failed_joins_per_min

    async def join_failed(self, ip: str) -> None:
        try:
            async with self.store.redis.pipeline(transaction=False) as pipe:
                pipe.incr(self._key(ip))
                pipe.expire(self._key(ip), 60, nx=True)
                await pipe.execute()
        except RedisError:
            pass

    def open_socket(self, ip: str) -> bool:
        if self.sockets_per_ip > 0 and self.sockets[ip] >= self.sockets_per_ip:
            return False
        self.sockets[ip] += 1
        return True

    def close_socket(self, ip: str) -> None:
        self.sockets[ip] -= 1
        if self.sockets[ip] <= 0:
            del self.sockets[ip]
