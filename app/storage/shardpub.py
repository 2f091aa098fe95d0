"""The relay's publisher on a Redis Cluster (``REDIS_CLUSTER``): each process's channel
(``<prefix>:node:<id>``) is a shard channel, published with ``SPUBLISH`` on its slot's primary.

``SPUBLISH`` counts the subscribers of the channel's shard, and they are all on that shard (every
process subscribes its channel there, app.storage.shardsub), so "nobody received it" means what
it means on one Redis: the home is gone. (A plain ``PUBLISH`` on a cluster counts the node that
ran it only.) One ``Publisher`` per primary, each with its own connection and callbacks; the
whole is ``ready`` when every primary's is. A reply that says the slot moved (``MOVED``), or a
lost primary, has the slot map read again; a publish sent with no reply to a node that lost the
slot is dropped by Redis, and the receiver's count of messages finds the gap (its relayed
sockets reconnect), as after any message lost in an outage.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from redis.exceptions import ResponseError

from app.storage.publisher import Publisher, Then, published_by
from app.storage.shards import Address, ShardMap, node_url


class ShardedPublisher:
    def __init__(self, shards: ShardMap, on_ready: Callable[[], None] | None = None) -> None:
        self.shards = shards
        self._on_ready = on_ready
        self._pubs: dict[Address, Publisher] = {}
        self._refreshing: asyncio.Task[None] | None = None

    def _pub(self, address: Address) -> Publisher:
        pub = self._pubs.get(address)
        if pub is None:
            pub = self._pubs[address] = Publisher(node_url(self.shards.url, address), self._on_ready,
                                                  command=b"SPUBLISH")
        return pub

    def _primaries(self) -> list[Publisher]:
        return [self._pub(address) for address in self.shards.primaries()]

    @property
    def ready(self) -> bool:
        pubs = self._primaries()
        return bool(pubs) and all(pub.ready for pub in pubs)

    @property
    def skips(self) -> bool:
        return all(pub.skips for pub in self._primaries())

    def connect_soon(self) -> None:
        if not self.shards.primaries():
            self._refresh_soon()
        for pub in self._primaries():
            pub.connect_soon()

    async def until_ready(self) -> bool:
        if not self.shards.primaries():
            await self.shards.ready()
        await asyncio.gather(*(pub.until_ready() for pub in self._primaries()))
        return self.ready

    def _refresh_soon(self) -> None:
        if self._refreshing is None:
            self._refreshing = asyncio.ensure_future(self._refresh())

    async def _refresh(self) -> None:
        try:
            await self.shards.refresh()
            live = set(self.shards.primaries())
            for address in [a for a in self._pubs if a not in live]:
                self._pubs.pop(address).close()
            self.connect_soon()
        finally:
            self._refreshing = None

    def _watch(self, then: Then | None) -> Then:
        def answered(result: int | Exception) -> None:
            if isinstance(result, Exception) and (not isinstance(result, ResponseError)
                                                  or str(result).startswith("MOVED")):
                self._refresh_soon()  # the slot moved, or its primary went
            if then is not None:
                then(result)
        return answered

    def publish(self, channel: bytes | str, payload: bytes, then: Then | None, *,
                reply: bool = True) -> None:
        pub = self._pub(self.shards.owner(channel))
        pub.publish(channel, payload, self._watch(then), reply=reply)

    async def published(self, channel: bytes | str, payload: bytes) -> int:
        return await published_by(self.publish, channel, payload)

    def stalled(self, after_s: float) -> bool:
        return any(pub.stalled(after_s) for pub in self._pubs.values())

    def abort(self) -> None:
        for pub in self._pubs.values():
            pub.abort()

    def close(self) -> None:
        for pub in self._pubs.values():
            pub.close()
