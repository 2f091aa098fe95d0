"""Other processes' commits on a Redis Cluster (``REDIS_CLUSTER``): sharded pub/sub.

A room's channel (``<prefix>:{CODE}``) is a shard channel: the commit script publishes it with
``SPUBLISH`` on the room's own primary, which delivers it to that node's subscribers only, so a
commit wakes its shard and nobody else (a plain ``PUBLISH`` goes over the cluster bus to every
node). This subscriber keeps one ``Subscriber`` (``SSUBSCRIBE``) per primary and puts each
channel on its slot's owner. When a slot moves (Redis unsubscribes the channel: a reshard) or a
node's connection is lost (a failover), the slot map is read again and the channels that moved
are subscribed where they now live; then every local socket is caught up on what was committed
meanwhile (the hub's ``on_reconnect``), as after any lost subscription.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable

from app.storage.shards import Address, ShardMap, node_url
from app.storage.subscriber import RETRY_AFTER_S, Subscriber

log = logging.getLogger("mercyless.subscriber")


class _AllConnected:
    """``connected.is_set()`` as the relay asks it: every node's subscription is up."""

    def __init__(self, owner: ShardedSubscriber) -> None:
        self._owner = owner

    def is_set(self) -> bool:
        subs = self._owner.nodes()
        return bool(subs) and all(sub.connected.is_set() for sub in subs)


class ShardedSubscriber:
    def __init__(self, shards: ShardMap, on_message: Callable[[bytes, bytes], None],
                 on_reconnect: Callable[[], None]) -> None:
        self.shards = shards
        self._on_message = on_message
        self._on_reconnect = on_reconnect
        self.channels: set[bytes] = set()
        self._where: dict[bytes, Address] = {}
        self._subs: dict[Address, tuple[Subscriber, asyncio.Task[None]]] = {}
        self._reroute = asyncio.Event()
        self.connected = _AllConnected(self)
        self.reroutes = 0  # the tests look

    def nodes(self) -> list[Subscriber]:
        wanted = set(self._where.values())
        return [sub for address, (sub, _) in self._subs.items() if sub.channels or address in wanted]

    def _node(self, address: Address) -> Subscriber:
        held = self._subs.get(address)
        if held is None:
            sub = Subscriber(node_url(self.shards.url, address), self._on_message, self._on_reconnect,
                             sharded=True, on_moved=self._moved)
            held = self._subs[address] = (sub, asyncio.create_task(sub.run(), name=f"listener {address}"))
        return held[0]

    def _moved(self, channel: bytes | None) -> None:
        self._reroute.set()

    async def subscribe(self, channel: str) -> None:
        name = channel.encode()
        self.channels.add(name)
        await self.shards.ready()
        address = self._where[name] = self.shards.owner(name)
        await self._node(address).subscribe(channel)

    async def unsubscribe(self, channel: str) -> None:
        name = channel.encode()
        self.channels.discard(name)
        address = self._where.pop(name, None)
        held = self._subs.get(address) if address else None
        if held is not None:
            await held[0].unsubscribe(channel)

    async def run(self) -> None:
        try:
            await self.shards.ready()
            for name in self.channels:
                address = self._where[name] = self.shards.owner(name)
                self._node(address).channels.add(name)  # subscribed as its connection opens
            while True:
                await self._reroute.wait()
                self._reroute.clear()
                await self.shards.refresh()
                await self._route_again()
        finally:
            for _, task in self._subs.values():
                task.cancel()

    async def _route_again(self) -> None:
        """Put every channel on its slot's owner. The local sockets are caught up only once a
        moved channel is confirmed where it now lives: a catch-up read before that could miss a
        commit published in between (a node still connecting catches up itself as its
        subscriptions are confirmed; one that did not confirm in time is routed again later)."""
        moves: list[tuple[Subscriber, bytes]] = []
        for name in list(self.channels):
            address = self.shards.owner(name)
            before = self._where.get(name)
            node = self._node(address)
            if before == address and name in node.confirmed:
                continue
            if before is not None and before != address and before in self._subs:
                old = self._subs[before][0]
                if name in old.channels:
                    with contextlib.suppress(Exception):
                        await old.unsubscribe(name.decode())
            self._where[name] = address
            moves.append((node, name))
        live = set(self.shards.primaries())
        for address in [a for a, (sub, _) in self._subs.items() if not sub.channels and a not in live]:
            self._subs.pop(address)[1].cancel()
        if not moves:
            return
        self.reroutes += 1
        log.info("cluster channels moved: catching up")
        results = await asyncio.gather(*(node.subscribe(name.decode()) for node, name in moves),
                                       return_exceptions=True)
        if any(r is None for r in results):
            self._on_reconnect()
        if any(isinstance(r, BaseException) and not isinstance(r, ConnectionError) for r in results):
            # not confirmed in time (a node refusing the slot, a reply lost): try again shortly
            asyncio.get_running_loop().call_later(RETRY_AFTER_S, self._reroute.set)

    async def close(self) -> None:
        for sub, task in self._subs.values():
            await sub.close()
            task.cancel()
