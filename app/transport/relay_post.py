"""What one process sends the others for the relay (app/transport/relay.py): numbered messages on a
publisher of its own, and every record of a loop turn for a process in one batch.

A message is numbered only when it goes out on an open connection: one that could not be sent
is refused (or, from the home, kept until the connection is back) and leaves no gap, so a Redis
outage costs the relayed sockets nothing but the time it lasts. Only a message lost after it
went out (the connection died under it) shows as a gap, which the receiver's ``in_order`` finds.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Callable
from typing import Protocol

from redis.exceptions import ConnectionError as RedisConnectionError

from app.storage import pubsub
from app.storage.shards import ShardMap
from app.transport.relay_wire import BATCH, SEQ, Link

log = logging.getLogger("mercyless.relay")

MAX_KEPT = 1000  # records kept for a process while the relay connection is down


class Owner(Protocol):
    """What the relay does when the post cannot deliver."""

    def unsent(self, link: Link, payload: bytes) -> None: ...
    def lost(self, home: str, links: list[Link], result: int | Exception) -> None: ...
    def close_links_to(self, home: str) -> None: ...
    def end_sessions_of(self, node: str) -> None: ...


class Post:
    def __init__(self, node_id: str, redis_url: str, channel_of: Callable[[str], str],
                 owner: Owner, shards: ShardMap | None = None) -> None:
        """``shards``: a Redis Cluster's (each process's channel published on its own shard)."""
        self.publisher = pubsub.talker(redis_url, shards, on_ready=self.flush)
        self._channel_of = channel_of
        self._owner = owner
        self._node_bytes = bytes((len(node_id),)) + node_id.encode()
        self.next_out: dict[str, int] = {}  # node -> the number of the next message to it
        self.next_in: dict[str, int] = {}  # node -> the number its next message should carry
        self.batches: dict[str, list[bytes]] = {}  # node -> the home's records for its next batch
        # node (a home) -> the clients' frames for its next batch: (socket, frame, record); the
        # socket and frame are None for a socket gone
        self.to_home: dict[str, list[tuple[Link | None, bytes | None, bytes]]] = {}
        self.gone_later: list[tuple[str, bytes]] = []  # (home, record): closed while it was down
        self._flushing = False

    def header(self, node: str, kind: bytes) -> bytes:
        seq = self.next_out.get(node, 0)
        self.next_out[node] = seq + 1
        return kind + self._node_bytes + SEQ.pack(seq & 0xFFFFFFFF)

    async def send_waiting(self, node: str, kind: bytes, body: bytes) -> bool:
        """Send to ``node`` now; whether anyone listened there."""
        if not await self.publisher.until_ready():
            raise RedisConnectionError("relay connection down")
        return bool(await self.publisher.published(self._channel_of(node),
                                                   self.header(node, kind) + body))

    def send(self, node: str, kind: bytes, body: bytes,
             failed: Callable[[int | Exception], None] | None = None) -> bool:
        """Send to ``node`` without waiting for Redis's answer; False when the connection is
        down (nothing was sent). ``failed`` hears of a connection lost under the message."""
        if not self.publisher.ready:
            self.publisher.connect_soon()
            return False
        self.publisher.publish(self._channel_of(node), self.header(node, kind) + body,
                               failed, reply=False)
        return True

    def in_order(self, sender: str, seq: int) -> bool:
        """Whether the message numbered ``seq`` from ``sender`` follows the last one heard
        (the first one heard from a process starts its count). After a gap nothing said
        between the two is trusted: the sockets relayed between this process and ``sender``
        are closed (their clients reconnect and resync)."""
        expected = self.next_in.get(sender)
        self.next_in[sender] = (seq + 1) & 0xFFFFFFFF
        if expected is None or seq in (expected, 0):  # 0: the sender starts its count over
            return True
        log.warning("relay messages from %s lost (%d, expected %d): its relayed sockets close",
                    sender, seq, expected)
        self._owner.close_links_to(sender)
        self._owner.end_sessions_of(sender)
        return False

    def forget(self, node: str) -> None:
        self.next_in.pop(node, None)
        self.next_out.pop(node, None)

    # -- the loop turn's batches ----------------------------------------------------------------

    def queue(self, node: str, record: bytes) -> None:
        """A record of the home's (a socket's frames or close, a pong, leaving) for ``node``."""
        batch = self.batches.get(node)
        if batch is None:
            batch = self.batches[node] = []
        batch.append(record)
        self._flush_soon()

    def relay_frame(self, home: str, link: Link, payload: bytes, record: bytes) -> bool:
        """A client's frame for its home, in this turn's batch; False when the connection is
        down (nothing is queued: the frame is answered at the edge, ``Relay.unsent``)."""
        if not self.publisher.ready:
            self.publisher.connect_soon()
            return False
        to_home = self.to_home.get(home)
        if to_home is None:
            to_home = self.to_home[home] = []
        to_home.append((link, payload, record))
        self._flush_soon()
        return True

    def socket_gone(self, home: str, record: bytes) -> None:
        """A relayed socket closed: its session on ``home`` must end, now or once the
        connection is back."""
        if self.publisher.ready:
            self.to_home.setdefault(home, []).append((None, None, record))
            self._flush_soon()
        else:
            self.gone_later.append((home, record))

    def _flush_soon(self) -> None:
        if not self._flushing:
            self._flushing = True
            # every record this loop turn makes for a process (a move's patches to each of its
            # relayed seats, the frames its clients sent) in one message to it
            asyncio.get_running_loop().call_soon(self.flush)

    def flush(self) -> None:
        self._flushing = False
        if not self.batches and not self.to_home and not self.gone_later:
            return
        if not self.publisher.ready:  # the home's records are kept, in order, until it is back
            self.publisher.connect_soon()
            self._refuse_to_home()
            for node, records in list(self.batches.items()):
                if len(records) > MAX_KEPT:
                    log.warning("relay to %s down too long: its relayed sessions end", node)
                    del self.batches[node]
                    self._owner.end_sessions_of(node)
            return
        for home, record in self.gone_later:
            self.to_home.setdefault(home, []).append((None, None, record))
        self.gone_later = []
        batches, self.batches = self.batches, {}
        to_home, self.to_home = self.to_home, {}
        for node in batches.keys() | to_home.keys():
            records = batches.get(node, [])
            carried = to_home.get(node, ())
            links = [link for link, payload, _ in carried if link is not None and payload is not None]
            for link in links:
                link.sent += 1
            records.extend(record for _, _, record in carried)
            self.send(node, BATCH, b"".join(records),
                      functools.partial(self._owner.lost, node, links) if links else None)

    def _refuse_to_home(self) -> None:
        """The connection went down under client frames waiting for this turn's batch: they
        are answered as if it had been down when they came (a gone socket's record waits)."""
        to_home, self.to_home = self.to_home, {}
        for home, carried in to_home.items():
            for link, payload, record in carried:
                if link is None or payload is None:
                    self.gone_later.append((home, record))
                else:
                    self._owner.unsent(link, payload)
