"""Per-address and per-player limits: failed joins (so room codes cannot be walked), floods,
hellos (so a reconnect loop cannot flood a room), open sockets, and the message buckets a
player's sockets share.

"Address" here is the client's network (app/core/networks.py: the /64 of an IPv6 address), so
that a host's many addresses are one client: every method takes the client's address as it came
and keys it itself.

Failed joins, floods and hellos are counted in Redis, so every process of a deployment sees the
same counts: ``<prefix>:fails:<net>`` (failed joins, one minute from the first), ``<prefix>:flood:<net>``
(a network whose socket flooded, ``FLOOD_BLOCK_S``), ``<prefix>:hellos:<net>`` and
``<prefix>:hellos:t:<token hash>`` (hellos, one minute from the first). A block, once seen, is
also kept here until it ends, so a blocked network's next sockets are refused without asking
Redis. Sockets per network are counted per process, and so are the message buckets (a player's
sockets share one, so a reconnect does not bring a fresh burst).
"""

from __future__ import annotations

import contextlib
import time
from collections import Counter
from collections.abc import Callable

from redis.exceptions import RedisError

from app.core.networks import network_key
from app.core.settings import Settings
from app.storage.store import RoomStore

WINDOW_MS = 60_000  # failed joins and hellos are counted a minute from the first
SWEEP_EVERY = 1024  # buckets made between two sweeps of the full ones


class TokenBucket:
    """``burst`` tokens, ``per_s`` more a second; ``clock`` is in seconds (monotonic)."""

    __slots__ = ("capacity", "clock", "rate", "stamp", "tokens")

    def __init__(self, burst: float, per_s: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.capacity = float(burst)
        self.tokens = float(burst)
        self.rate = per_s
        self.clock = clock
        self.stamp = clock()

    def take(self, now: float | None = None) -> bool:
        if now is None:
            now = self.clock()
        self.tokens = min(self.capacity, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        if self.tokens >= 1:
            self.tokens -= 1
            return True
        return False

    def full(self) -> bool:
        """As good as a new one: it would be full now."""
        return self.tokens + (self.clock() - self.stamp) * self.rate >= self.capacity


class AddressLimits:
    def __init__(self, store: RoomStore, settings: Settings,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.store = store
        self.failed_joins_per_min = settings.failed_joins_per_min
        self.sockets_per_ip = settings.sockets_per_ip
        self.flood_block_ms = int(settings.flood_block_s * 1000)
        self.hellos_per_token = settings.hellos_per_token_per_min
        self.hellos_per_ip = settings.hellos_per_ip_per_min
        self.clock = clock
        self.network = network_key(settings)  # a client's address -> what its limits count
        self.sockets: Counter[str] = Counter()
        self.blocked: dict[str, float] = {}  # network -> until when (clock) it is refused here
        self.buckets: dict[str, TokenBucket] = {}  # a player's message bucket, by room and player
        self._made = 0

    def _key(self, ip: str) -> str:
        return f"{self.store.prefix}:fails:{ip}"

    def _flood_key(self, ip: str) -> str:
        return f"{self.store.prefix}:flood:{ip}"

    # -- blocks: failed joins and floods -----------------------------------------------------------

    def blocked_here(self, ip: str) -> bool:
        """``ip``'s network is blocked as far as this process knows (no Redis)."""
        return self._blocked_here(self.network(ip))

    def _blocked_here(self, ip: str) -> bool:
        until = self.blocked.get(ip)
        if until is None:
            return False
        if until > self.clock():
            return True
        del self.blocked[ip]
        return False

    def _block(self, ip: str, ms: int) -> None:
        if ms <= 0:
            return
        now = self.clock()
        if len(self.blocked) >= 4096:  # (ended ones go first; the live ones are attacks)
            self.blocked = {k: until for k, until in self.blocked.items() if until > now}
        self.blocked[ip] = max(self.blocked.get(ip, 0.0), now + ms / 1000)

    async def admit(self, ip: str) -> bool:
        """A new socket from ``ip`` may open: the address is not blocked, here or (one look-up)
        as another process found it. Redis unreachable: it may."""
        ip = self.network(ip)
        if self._blocked_here(ip):
            return False
        if self.failed_joins_per_min <= 0 and self.flood_block_ms <= 0:
            return True
        try:
            async with self.store.redis.pipeline(transaction=False) as pipe:
                pipe.get(self._key(ip))
                pipe.pttl(self._key(ip))
                pipe.pttl(self._flood_key(ip))
                fails, fails_ttl, flood_ttl = await pipe.execute()
        except RedisError:
            return True
        if self.flood_block_ms > 0 and flood_ttl > 0:
            self._block(ip, flood_ttl)
        if self._too_many(fails):
            self._block(ip, fails_ttl if fails_ttl > 0 else WINDOW_MS)
        return not self._blocked_here(ip)

    def _too_many(self, fails: bytes | str | int | None) -> bool:
        return self.failed_joins_per_min > 0 and fails is not None and int(fails) >= self.failed_joins_per_min

    async def joins_blocked(self, ip: str) -> bool:
        """Joins from ``ip`` are refused: too many failed in the last minute."""
        if self.failed_joins_per_min <= 0:
            return False
        ip = self.network(ip)
        if self._blocked_here(ip):
            return True
        try:
            async with self.store.redis.pipeline(transaction=False) as pipe:
                pipe.get(self._key(ip))
                pipe.pttl(self._key(ip))
                fails, ttl = await pipe.execute()
        except RedisError:
            return False
        if self._too_many(fails):
            self._block(ip, ttl if ttl > 0 else WINDOW_MS)
            return True
        return False

    async def join_failed(self, ip: str) -> None:
        """A join or a hello from ``ip`` named no room, or a token the room does not know."""
        if self.failed_joins_per_min <= 0:
            return
        ip = self.network(ip)
        try:
            async with self.store.redis.pipeline(transaction=False) as pipe:
                pipe.incr(self._key(ip))
                pipe.pexpire(self._key(ip), WINDOW_MS, nx=True)
                pipe.pttl(self._key(ip))
                count, _, ttl = await pipe.execute()
        except RedisError:
            return
        if self._too_many(count):
            self._block(ip, ttl if ttl > 0 else WINDOW_MS)

    async def flooded(self, ip: str) -> None:
        """A socket from ``ip`` flooded: the address's new sockets are refused for a while, by
        every process."""
        if self.flood_block_ms <= 0:
            return
        ip = self.network(ip)
        self._block(ip, self.flood_block_ms)
        with contextlib.suppress(RedisError):
            await self.store.redis.set(self._flood_key(ip), b"1", px=self.flood_block_ms)

    # -- hellos -----------------------------------------------------------------------------------

    async def hello_allowed(self, ip: str, token_digest: str) -> bool:
        """One more hello with this token from this address is within the limits (counted in
        Redis, a minute from the first; refused ones count too). Redis unreachable: it is."""
        if self.hellos_per_token <= 0 and self.hellos_per_ip <= 0:
            return True
        prefix = self.store.prefix
        by_token, by_ip = f"{prefix}:hellos:t:{token_digest}", f"{prefix}:hellos:{self.network(ip)}"
        try:
            async with self.store.redis.pipeline(transaction=False) as pipe:
                for key in (by_token, by_ip):
                    pipe.incr(key)
                    pipe.pexpire(key, WINDOW_MS, nx=True)
                tokens, _, ips, _ = await pipe.execute()
        except RedisError:
            return True
        return ((self.hellos_per_token <= 0 or tokens <= self.hellos_per_token)
                and (self.hellos_per_ip <= 0 or ips <= self.hellos_per_ip))

    # -- sockets ----------------------------------------------------------------------------------

    def open_socket(self, ip: str) -> bool:
        ip = self.network(ip)
        if self.sockets_per_ip > 0 and self.sockets[ip] >= self.sockets_per_ip:
            return False
        self.sockets[ip] += 1
        return True

    def close_socket(self, ip: str) -> None:
        ip = self.network(ip)
        self.sockets[ip] -= 1
        if self.sockets[ip] <= 0:
            del self.sockets[ip]

    # -- message buckets --------------------------------------------------------------------------

    def bucket(self, key: str, burst: float, per_s: float,
               clock: Callable[[], float] = time.monotonic) -> TokenBucket:
        """The message bucket of the player ``key`` names, shared by their sockets on this
        process: a reconnect goes on with what the last socket left, not a fresh burst. Full
        ones are forgotten now and then (a full bucket is a new one)."""
        found = self.buckets.get(key)
        if found is not None and found.capacity == burst and found.rate == per_s:
            return found
        self._made += 1
        if self._made % SWEEP_EVERY == 0:
            self.buckets = {k: b for k, b in self.buckets.items() if not b.full()}
        made = self.buckets[key] = TokenBucket(burst, per_s, clock)
        return made
