"""Redis pub/sub for the processes, one face over a single Redis and a Redis Cluster.

What the hub and the relay call is :class:`Listener` and :class:`Talker`; which one they get is
decided here, once, from the store: on one Redis, one connection each way with ``SUBSCRIBE``
and ``PUBLISH`` (app/storage/subscriber.py, publisher.py); on a Redis Cluster, a connection to
each primary that holds a channel, with shard channels (``SSUBSCRIBE``, ``SPUBLISH``:
app/storage/shardsub.py, shardpub.py), so that a message crosses to one node, not the whole
cluster bus. Both are hand-written on plain RESP for the same reason as the commit's path
(app/storage/rawredis.py); docs/benchmarks.md "Redis clients" sets them beside redis-py.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any, Protocol

from app.storage.publisher import Publisher, Then
from app.storage.shardpub import ShardedPublisher
from app.storage.shards import ShardMap
from app.storage.shardsub import ShardedSubscriber
from app.storage.subscriber import Subscriber


class Connected(Protocol):
    def is_set(self) -> bool: ...


class Listener(Protocol):
    """Messages of the channels in ``channels`` (subscribed again on every reconnect), to
    ``on_message(channel, data)``; ``on_reconnect()`` after a time deaf (messages were lost)."""

    channels: set[bytes]

    @property
    def connected(self) -> Connected: ...

    def run(self) -> Coroutine[Any, Any, None]: ...

    async def subscribe(self, channel: str) -> None: ...

    async def unsubscribe(self, channel: str) -> None: ...

    async def close(self) -> None: ...


class Talker(Protocol):
    """Publishes, pipelined on its own connections; ``on_ready()`` once it can."""

    @property
    def ready(self) -> bool: ...

    def connect_soon(self) -> None: ...

    async def until_ready(self) -> bool: ...

    def publish(self, channel: bytes | str, payload: bytes, then: Then | None, *,
                reply: bool = True) -> None: ...

    async def published(self, channel: bytes | str, payload: bytes) -> int: ...

    def stalled(self, after_s: float) -> bool: ...

    def abort(self) -> None: ...

    def close(self) -> None: ...


def listener(url: str, shards: ShardMap | None, on_message: Callable[[bytes, bytes], None],
             on_reconnect: Callable[[], None]) -> Listener:
    """The listener for the Redis of ``url`` (``shards``: its cluster's map, if it is one)."""
    if shards is not None:
        return ShardedSubscriber(shards, on_message, on_reconnect)
    return Subscriber(url, on_message, on_reconnect)


def talker(url: str, shards: ShardMap | None, on_ready: Callable[[], None] | None = None) -> Talker:
    """The publisher for the Redis of ``url`` (``shards``: its cluster's map, if it is one)."""
    if shards is not None:
        return ShardedPublisher(shards, on_ready=on_ready)
    return Publisher(url, on_ready=on_ready)
