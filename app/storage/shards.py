"""A Redis Cluster's shards for the hot paths (``REDIS_CLUSTER``): which primary serves a key's
slot, and the group commit's batches sent to each primary in plain RESP.

The slot map is redis-py's (``RedisCluster``'s nodes manager, read from ``CLUSTER SLOTS``);
what goes over it here is the commits' batch: grouped per primary, one pipeline to each at once,
redirections followed (``MOVED``: the map is read again and the command sent to the slot's new
owner; ``ASK``: sent once more to the importing node after ``ASKING``), and a lost primary
retried until its replica has taken its slots over (``CLUSTER_RETRY_MS``). Every command sent
here is safe to repeat (a commit checks the room's version and the message id; an index write
sets a value), so a batch whose reply was lost is sent again.

With ``ACK_REPLICAS`` each primary's batch ends with ``WAIT``: its commits are answered only once
that many of its replicas have them (or ``ACK_REPLICA_TIMEOUT_MS`` passed: then every command of
the batch answers with an error, so no client is told "done" about a write a failover could lose;
it retries, and a repeated message id gets the stored answer). A shard with fewer live replicas
than asked waits for those it has.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from redis.asyncio.cluster import ClusterPipeline, RedisCluster
from redis.crc import key_slot
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisClusterException, RedisError, ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

from app.storage.rawredis import RawConnection

log = logging.getLogger("mercyless.shards")

Address = tuple[str, int]
_REDIRECT_BACKOFF_S = 0.05
_DOWN_BACKOFF_S = 0.2


def _encoded(key: str | bytes) -> bytes:
    return key if isinstance(key, bytes) else str(key).encode()


def command_key(command: tuple[Any, ...]) -> bytes:
    """The key a command is routed by: a script's first key, else its first argument."""
    name = command[0].upper() if isinstance(command[0], str) else command[0].decode().upper()
    if name in ("EVALSHA", "EVAL") and int(command[2]) > 0:
        return _encoded(command[3])
    return _encoded(command[1])


#: what redis-py's cluster client raises from a connection that another call closed under it
#: (on a node's error it closes the node's connections, some of them in use or opening: a
#: transport closed, a writer gone); every caller here takes an outage for a ConnectionError
_TORN = (AttributeError, RuntimeError, RedisClusterException)  # and "no node reachable at all"


class GatedCluster(RedisCluster):
    """redis-py's asyncio cluster client, with at most ``gate`` calls (commands and pipelines)
    under way at once (the others queue, as the single Redis's blocking pool makes them: the
    cluster client refuses a node's connection past its limit), and a connection torn down
    under a call raised as ``ConnectionError`` rather than as the ``AttributeError`` or
    ``RuntimeError`` it surfaces as."""

    def __init__(self, *args: Any, gate: int = 64, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._gate = asyncio.Semaphore(gate)

    async def execute_command(self, *args: Any, **kwargs: Any) -> Any:
        async with self._gate:
            try:
                return await super().execute_command(*args, **kwargs)
            except _TORN as exc:
                raise RedisConnectionError(f"cluster connection torn down: {exc!r}") from exc

    def pipeline(self, transaction: Any | None = None, shard_hint: Any | None = None) -> ClusterPipeline:
        pipe = super().pipeline(transaction, shard_hint)
        execute = pipe.execute

        async def gated(raise_on_error: bool = True, allow_redirections: bool = True) -> list[Any]:
            async with self._gate:
                try:
                    return await execute(raise_on_error, allow_redirections)
                except _TORN as exc:
                    raise RedisConnectionError(f"cluster connection torn down: {exc!r}") from exc

        pipe.execute = gated  # type: ignore[method-assign]
        return pipe


def node_url(url: str, address: Address) -> str:
    """``url`` (its scheme, credentials and database) pointed at one node."""
    parts = urlsplit(url)
    auth = parts.netloc.rpartition("@")[0]
    netloc = f"{auth}@{address[0]}:{address[1]}" if auth else f"{address[0]}:{address[1]}"
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


class ShardMap:
    """The cluster's slots, as redis-py's client of it last read them."""

    def __init__(self, cluster: RedisCluster, url: str, refresh_ms: int = 5_000) -> None:
        """``refresh_ms``: the map is read again at least this often while it is used, so a
        replica that joined (the old primary back after a failover) is waited for."""
        self.cluster = cluster
        self.url = url
        self.refresh_ms = refresh_ms
        self._refreshing: asyncio.Task[None] | None = None
        self._read_at = 0.0
        self.refreshes = 0
        self._shape_of: object = None
        self._shape_cache: dict[Address, int] = {}

    async def ready(self) -> None:
        """The map is read (the first time: now; when older than ``refresh_ms``: in the
        background)."""
        now = asyncio.get_running_loop().time()
        if not self._read_at:
            await self.cluster.initialize()
            self._read_at = now
        elif now - self._read_at > self.refresh_ms / 1000 and self._refreshing is None:
            self._read_at = now
            self._refreshing = asyncio.ensure_future(self._refresh())

    @staticmethod
    def slot(key: str | bytes) -> int:
        return key_slot(_encoded(key))

    def owner(self, key: str | bytes) -> Address:
        try:
            node = self.cluster.nodes_manager.get_node_from_slot(self.slot(key))
        except (KeyError, RedisClusterException) as exc:  # not read yet, or the slot uncovered
            raise RedisConnectionError(f"no node serves {key!r}'s slot: {exc!r}") from exc
        return node.host, int(node.port)

    def _shape(self) -> dict[Address, int]:
        """Each primary and how many replicas the map lists for it; made again when redis-py
        read the map again (a new slots dict; 16384 slots are not walked per batch)."""
        slots = self.cluster.nodes_manager.slots_cache
        if self._shape_of is not slots:
            shape: dict[Address, int] = {}
            for nodes in slots.values():
                if nodes:
                    shape[(nodes[0].host, int(nodes[0].port))] = len(nodes) - 1
            self._shape_cache, self._shape_of = shape, slots
        return self._shape_cache

    def replicas(self, address: Address) -> int:
        """How many replicas the map lists for the primary at ``address``."""
        return self._shape().get(address, 0)

    def primaries(self) -> list[Address]:
        return sorted(self._shape())

    async def refresh(self) -> None:
        """Read the slot map again (one read at a time, shared by whoever asks meanwhile)."""
        if self._refreshing is None:
            self._refreshing = asyncio.ensure_future(self._refresh())
        try:
            await asyncio.shield(self._refreshing)
        except RedisError as exc:
            log.warning("cluster slots not read: %s", exc)

    async def _refresh(self) -> None:
        try:
            await self.cluster.nodes_manager.initialize()
            self.refreshes += 1
        except (RedisError, RedisClusterException) as exc:
            log.warning("cluster slots not read: %s", exc)
        finally:
            self._refreshing = None


class ShardedConnection:
    """The group commit's connection on a cluster: ``execute`` has ``RawConnection``'s contract
    (replies in order, error replies as exception objects, a lost connection raised)."""

    def __init__(self, shards: ShardMap, *, ack_replicas: int = 0, ack_timeout_ms: int = 1000,
                 retry_ms: int = 10_000, timeout_s: float = 5.0) -> None:
        self.shards = shards
        self.ack_replicas = ack_replicas
        self.ack_timeout_ms = ack_timeout_ms
        self.retry_ms = retry_ms
        self._timeout_s = timeout_s
        self._conns: dict[Address, RawConnection] = {}
        self.redirects = 0  # MOVED and ASK followed (the tests look)
        self.unacked = 0  # batches a replica did not confirm in time

    def _conn(self, address: Address) -> RawConnection:
        conn = self._conns.get(address)
        if conn is None:
            timeout = self._timeout_s + self.ack_timeout_ms / 1000
            conn = self._conns[address] = RawConnection(node_url(self.shards.url, address), timeout)
        return conn

    async def execute(self, commands: list[tuple[Any, ...]]) -> list[Any]:
        await self.shards.ready()
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.retry_ms / 1000
        replies: list[Any] = [None] * len(commands)
        asking: dict[int, Address] = {}
        pending = list(range(len(commands)))
        while True:
            groups: dict[Address, list[int]] = {}
            for i in pending:
                address = asking.get(i) or self.shards.owner(command_key(commands[i]))
                groups.setdefault(address, []).append(i)
            sends = [self._send(address, [commands[i] for i in idx], {i for i in idx if i in asking}, idx)
                     for address, idx in groups.items()]
            results: list[Any]
            if len(sends) == 1:  # one shard (the usual small batch): no task to gather
                try:
                    results = [await sends[0]]
                except Exception as exc:
                    results = [exc]
            else:
                results = await asyncio.gather(*sends, return_exceptions=True)
            retry: list[int] = []
            refresh = down = False
            last: Exception | None = None
            for (address, idx), result in zip(groups.items(), results, strict=True):
                if isinstance(result, BaseException):
                    if not isinstance(result, RedisConnectionError | RedisTimeoutError | OSError):
                        raise result
                    self._conns.pop(address, None)
                    retry += idx
                    refresh = down = True
                    last = result
                    continue
                for i, reply in zip(idx, result, strict=True):
                    asking.pop(i, None)
                    text = str(reply) if isinstance(reply, ResponseError) else ""
                    if text.startswith("MOVED"):
                        refresh = True
                    elif text.startswith("ASK"):
                        host, _, port = text.split()[2].rpartition(":")
                        asking[i] = (host, int(port))
                    elif text.startswith(("TRYAGAIN", "CLUSTERDOWN")):
                        down = True
                    else:
                        replies[i] = reply
                        continue
                    self.redirects += 1
                    retry.append(i)
                    last = reply
            if not retry:
                return replies
            if loop.time() > deadline:
                if isinstance(last, RedisConnectionError | RedisTimeoutError):
                    raise last
                raise RedisConnectionError(f"cluster did not settle: {last}")
            if down:
                await asyncio.sleep(_DOWN_BACKOFF_S)
            elif not refresh:
                await asyncio.sleep(_REDIRECT_BACKOFF_S if not asking else 0)
            if refresh:
                await self.shards.refresh()
            pending = sorted(retry)

    async def _send(self, address: Address, commands: list[tuple[Any, ...]], asking: set[int],
                    idx: list[int]) -> list[Any]:
        sent: list[tuple[Any, ...]] = []
        asked: list[bool] = []
        for i, command in zip(idx, commands, strict=True):
            if i in asking:
                sent.append(("ASKING",))
                asked.append(True)
            sent.append(command)
            asked.append(False)
        wait = min(self.ack_replicas, self.shards.replicas(address))
        if wait:
            sent.append(("WAIT", wait, self.ack_timeout_ms))
        replies = await self._conn(address).execute(sent)
        if wait:
            acked = replies.pop()
            if not isinstance(acked, int) or acked < wait:
                self.unacked += 1
                error = RedisConnectionError(f"not on {wait} replica(s) within {self.ack_timeout_ms} ms")
                return [error] * len(commands)
        return [reply for reply, is_asking in zip(replies, asked, strict=True) if not is_asking]

    def close(self) -> None:
        for conn in self._conns.values():
            conn.close()
        self._conns.clear()
