"""Redis storage of rooms.

Keys (every key of one room carries the Redis Cluster hash tag ``{CODE}``, and no command
touches two rooms, so the same code runs on a cluster or a managed Redis):

- ``<prefix>:{CODE}:room``     hash: ``v`` (version), ``d`` (the room document, JSON) and ``h``
  (the room's home: the process whose sockets the others relay to, app/transport/relay.py)
- ``<prefix>:{CODE}:answers``  hash: ``player:id`` -> the answer given to that message
- ``<prefix>:{CODE}:outbox``   list: finished rounds waiting for the database
- ``<prefix>:{CODE}`` channel  commits, published by the commit script itself (on a Redis
  Cluster a shard channel: ``SPUBLISH``, app/storage/shardsub.py)
- ``<prefix>:deadlines``       sorted set: room code -> its next deadline (an index only; the
  deadline itself is in the room document, re-checked by whoever picks it up)
- ``<prefix>:nodes``           sorted set: server process id -> its last heartbeat (ms)
- ``<prefix>:node:<id>`` channel  relayed socket traffic to and from that process (app/transport/relay.py)
- ``<prefix>:node:<id>:rooms``  set: rooms where that process holds sockets (so the seats a
  crashed process held can be found and marked disconnected)

A commit is one Lua script: check the version, write the document and the answer, refresh the
TTLs, publish. So a commit is all-or-nothing, and two processes can never both commit the same
version.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection
from typing import Any

import orjson
import redis.asyncio as aioredis
from redis.asyncio.cluster import RedisCluster
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import NoScriptError

from app.core.settings import Settings
from app.storage.batch import GroupCommit
from app.storage.rawredis import RawConnection
from app.storage.shards import GatedCluster, ShardedConnection, ShardMap

_COMMIT = """
local cur = redis.call('HGET', KEYS[1], 'v')
if (cur or '') ~= ARGV[1] then return {0, cur or ''} end
if ARGV[5] ~= '' then
  local prev = redis.call('HGET', KEYS[2], ARGV[5])
  if prev then return {2, prev} end
end
redis.call('HSET', KEYS[1], 'v', ARGV[2], 'd', ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
if ARGV[5] ~= '' then
  redis.call('HSET', KEYS[2], ARGV[5], ARGV[6])
end
if redis.call('EXISTS', KEYS[2]) == 1 then
  if redis.call('HLEN', KEYS[2]) > tonumber(ARGV[9]) then redis.call('DEL', KEYS[2]) end
  redis.call('PEXPIRE', KEYS[2], ARGV[4])
end
if ARGV[10] == '1' then redis.call('DEL', KEYS[4]) end
local n = tonumber(ARGV[11])
for i = 12, 11 + n do redis.call('RPUSH', KEYS[4], ARGV[i]) end
if redis.call('EXISTS', KEYS[4]) == 1 then redis.call('PEXPIRE', KEYS[4], ARGV[4]) end
for i = 12 + n, #ARGV - 1, 2 do
  local steps = table.concat(redis.call('LRANGE', KEYS[4], 0, -1), ',')
  redis.call('RPUSH', KEYS[3], ARGV[i] .. '[' .. steps .. ']' .. ARGV[i + 1])
end
if redis.call('EXISTS', KEYS[3]) == 1 then redis.call('PEXPIRE', KEYS[3], ARGV[4]) end
if ARGV[7] ~= '' then redis.call('PUBLISH', ARGV[8], ARGV[7]) end
return {1, ARGV[2]}
"""

# on a cluster the commit is published on the room's shard only (sharded pub/sub, Redis 7)
_COMMIT_SHARDED = _COMMIT.replace("redis.call('PUBLISH'", "redis.call('SPUBLISH'")
assert _COMMIT_SHARDED != _COMMIT

# the room's home: claimed when it has none, or taken over from ARGV[2] (a process found
# gone); never creates the hash of a room that does not exist (or expired)
_CLAIM_HOME = """
local home = redis.call('HGET', KEYS[1], 'h')
if home == ARGV[2] or (not home and ARGV[2] == '') then
  if redis.call('EXISTS', KEYS[1]) == 0 then return '' end
  redis.call('HSET', KEYS[1], 'h', ARGV[1])
  return ARGV[1]
end
return home or ''
"""

_REMEMBER = """
local prev = redis.call('HGET', KEYS[1], ARGV[1])
if prev then return {1, prev} end
if (redis.call('HGET', KEYS[2], 'v') or '') ~= ARGV[4] then return {0, ''} end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return {2, ''}
"""


#: where a finished round's history entry takes the round's steps list (the commit script puts
#: the list there)
STEPS_MARK = "\u0000steps"
_STEPS_MARK = orjson.dumps(STEPS_MARK)


class Stale(Exception):
    """The room moved on since it was loaded (another writer committed first)."""


class Duplicate(Exception):
    """The message id was answered before; ``answer`` is that first answer."""

    def __init__(self, answer: dict[str, Any]) -> None:
        super().__init__("duplicate message id")
        self.answer = answer


def open_redis(settings: Settings) -> tuple[aioredis.Redis, Callable[[], Awaitable[None]]]:
    """The Redis at ``REDIS_URL`` (the embedded store's too: app/storage/embedded.py gives its
    ``unix://`` URL), and how to close it."""
    redis = make_redis(settings)
    return redis, redis.aclose


def make_redis(settings: Settings) -> aioredis.Redis:
    if settings.redis_url and settings.redis_cluster:
        # redis-py's cluster client for everything but the commits' batches (app.storage.shards):
        # it follows MOVED and ASK and reads the slots again after a failover
        return GatedCluster.from_url(  # type: ignore[return-value]
            settings.redis_url, gate=settings.redis_max_connections,
            max_connections=settings.redis_max_connections,
            socket_connect_timeout=2, socket_timeout=5, decode_responses=False)
    if settings.redis_url:
        # a bounded pool that queues: hundreds of room actors may call at once, and a pool that
        # refuses past its size ("Too many connections") would refuse their commits
        # a connection found dead (Redis restarted while it sat in the pool) is opened again and
        # the command sent once more: every command here is safe to repeat (reads, version-checked
        # scripts, set-like writes)
        pool = aioredis.BlockingConnectionPool.from_url(
            settings.redis_url, max_connections=settings.redis_max_connections, timeout=5,
            health_check_interval=10, socket_connect_timeout=2, socket_timeout=5,
            retry=Retry(NoBackoff(), 1), retry_on_error=[RedisConnectionError])
        return aioredis.Redis(connection_pool=pool, decode_responses=False)
    raise ValueError("no REDIS_URL: start the embedded store first (app.main.with_embedded_store)")


class RoomStore:
    def __init__(self, redis: aioredis.Redis, prefix: str, ttl_ms: int, answers_kept: int = 4096,
                 url: str | None = None, settings: Settings | None = None) -> None:
        self.redis = redis
        self.prefix = prefix
        self.ttl_ms = ttl_ms
        self.answers_kept = answers_kept
        #: the cluster's slots (None: one Redis)
        settings = settings or Settings()
        self.shards = (ShardMap(redis, url, settings.cluster_refresh_ms)
                       if isinstance(redis, RedisCluster) and url else None)
        self._commit_source = _COMMIT_SHARDED if self.shards else _COMMIT
        self._commit = redis.register_script(self._commit_source)
        self._remember = redis.register_script(_REMEMBER)
        self._claim_home = redis.register_script(_CLAIM_HOME)
        self.deadlines_key = f"{prefix}:deadlines"
        self.nodes_key = f"{prefix}:nodes"
        # commits go over a connection of their own (plain RESP) when Redis is a real server
        raw: RawConnection | ShardedConnection | None = RawConnection(url) if url else None
        if self.shards is not None:
            raw = ShardedConnection(self.shards, ack_replicas=settings.ack_replicas,
                                    ack_timeout_ms=settings.ack_replica_timeout_ms,
                                    retry_ms=settings.cluster_retry_ms)
        self.group = GroupCommit(redis, raw=raw)

    def room_key(self, code: str) -> str:
        return f"{self.prefix}:{{{code}}}:room"

    def answers_key(self, code: str) -> str:
        return f"{self.prefix}:{{{code}}}:answers"

    def steps_key(self, code: str) -> str:
        return f"{self.prefix}:{{{code}}}:steps"

    def outbox_key(self, code: str) -> str:
        return f"{self.prefix}:{{{code}}}:outbox"

    def channel(self, code: str) -> str:
        return f"{self.prefix}:{{{code}}}"

    async def load(self, code: str) -> tuple[int, dict[str, Any]] | None:
        raw = await self.redis.hmget(self.room_key(code), ["v", "d"])
        if raw[0] is None or raw[1] is None:
            return None
        return int(raw[0]), orjson.loads(raw[1])

    async def exists(self, code: str) -> bool:
        return bool(await self.redis.exists(self.room_key(code)))

    async def commit(self, code: str, expected: int | None, version: int, document: bytes,
                     answer_field: str = "", answer: bytes = b"", message: bytes = b"",
                     outbox: list[bytes] | None = None, deadline: int | bool | None = False,
                     steps: list[bytes] | None = None, new_round: bool = False,
                     ttl_ms: int | None = None) -> None:
        """Write ``document`` as ``version`` if the stored version is ``expected`` (``None``: the
        room must not exist), with the message's answer, the round's new record ``steps``
        (``new_round``: the list starts again) and any finished rounds for the history writer
        (``outbox``: each gets the round's steps where it holds the steps mark), all or nothing;
        the room's keys live ``ttl_ms`` from now (default: the store's). Raises :class:`Stale`
        or :class:`Duplicate`."""
        keys = [self.room_key(code), self.answers_key(code), self.outbox_key(code), self.steps_key(code)]
        steps = steps or []
        entries: list[bytes] = []
        for entry in outbox or []:
            head, mark, tail = entry.partition(_STEPS_MARK)
            if not mark:
                raise ValueError("a finished round's entry must hold the steps mark")
            entries += [head, tail]
        args = ["" if expected is None else str(expected), str(version), document, ttl_ms or self.ttl_ms,
                answer_field, answer, message, self.channel(code), self.answers_kept,
                "1" if new_round else "", len(steps), *steps, *entries]
        if deadline is False:
            result = await self._commit(keys=keys, args=args)
        else:
            # one round trip, shared with the other rooms committing now (GroupCommit): the
            # commit, and the room's next deadline in the index (another key, so not in the
            # script: a cluster keeps them apart). If the commit loses, the caller indexes the
            # stored room's deadline again. EVALSHA itself, not the Script object: redis-py
            # checks a pipeline's scripts with a SCRIPT EXISTS round trip on every execute; a
            # Redis that lost its scripts (a restart) answers NOSCRIPT instead, and the script
            # is loaded and the commit sent again
            index: tuple[Any, ...] = (("ZREM", self.deadlines_key, code) if deadline is None
                                      else ("ZADD", self.deadlines_key, deadline, code))
            for attempt in (1, 2):
                result, indexed = await self.group.execute(
                    ("EVALSHA", self._commit.sha, len(keys), *keys, *args), index)
                if isinstance(result, NoScriptError) and attempt == 1:
                    await self.redis.script_load(self._commit_source)
                    continue
                for answer in (result, indexed):
                    if isinstance(answer, Exception):
                        raise answer
                break
        status = int(result[0])
        if status == 1:
            return
        if status == 2:
            raise Duplicate(orjson.loads(result[1]))
        raise Stale(code)

    async def answer(self, code: str, answer_field: str) -> dict[str, Any] | None:
        raw = await self.redis.hget(self.answers_key(code), answer_field)
        return orjson.loads(raw) if raw is not None else None

    async def remember(self, code: str, answer_field: str, answer: dict[str, Any],
                       version: int) -> dict[str, Any] | None:
        """Store an answer given without a commit (a refusal, or an ack that changed nothing)
        unless one exists; returns the earlier answer if there was one. An answer judged against
        ``version`` is only stored while the room is at ``version``
        (raises :class:`Stale` otherwise: judge it again against the room as it is)."""
        keys = [self.answers_key(code), self.room_key(code)]
        args = [answer_field, orjson.dumps(answer), self.ttl_ms, str(version)]
        status, prev = await self._remember(keys=keys, args=args)
        if int(status) == 0:
            raise Stale(code)
        return orjson.loads(prev) if int(status) == 1 else None

    async def set_deadline(self, code: str, at_ms: int | None, version: int | None = None) -> bool:
        """Index the room's next deadline. With ``version`` (the room's version ``at_ms`` was
        read from): True when the room is still at ``version`` after the write, so no commit
        after that version can have had its own deadline overwritten by this one. The check
        comes after the write, not in one script with it: the index and the room are on
        different hash slots of a cluster."""
        if at_ms is None:
            await self.redis.zrem(self.deadlines_key, code)
        else:
            await self.redis.zadd(self.deadlines_key, {code: at_ms})
        if version is None:
            return True
        return await self.redis.hget(self.room_key(code), "v") == str(version).encode()

    async def due_rooms(self, now_ms: int, limit: int = 100) -> list[str]:
        raw = await self.redis.zrangebyscore(self.deadlines_key, "-inf", now_ms, start=0, num=limit)
        return [r.decode() for r in raw]

    async def next_deadline(self) -> int | None:
        raw = await self.redis.zrange(self.deadlines_key, 0, 0, withscores=True)
        return int(raw[0][1]) if raw else None

    # -- server processes ---------------------------------------------------------------------

    def node_rooms_key(self, node: str) -> str:
        return f"{self.prefix}:node:{node}:rooms"

    async def beat(self, node: str, now_ms: int, ttl_ms: int, held: Collection[str] = (),
                   unlisted: Collection[str] = ()) -> tuple[bool, list[str]]:
        """Record ``node``'s heartbeat, list the rooms it ``held`` again and take out those
        ``unlisted``; returns (whether it had been given up for dead, the nodes whose last
        heartbeat is older than ``ttl_ms``)."""
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.zadd(self.nodes_key, {node: now_ms})
            pipe.zrangebyscore(self.nodes_key, "-inf", now_ms - ttl_ms)
            if held:
                pipe.sadd(self.node_rooms_key(node), *held)
            if unlisted:
                pipe.srem(self.node_rooms_key(node), *unlisted)
            pipe.pexpire(self.node_rooms_key(node), ttl_ms * 4)
            added, dead, *_ = await pipe.execute()
        return bool(added), [d.decode() for d in dead if d.decode() != node]

    def node_channel(self, node: str) -> str:
        return f"{self.prefix}:node:{node}"

    async def claim_home(self, code: str, node: str, replacing: str = "") -> str:
        """The room's home after making ``node`` its home if it had none (``replacing`` empty)
        or if it was ``replacing``; empty when the room does not exist."""
        home = await self._claim_home(keys=[self.room_key(code)], args=[node, replacing])
        return home.decode() if isinstance(home, bytes) else str(home or "")

    async def node_beat_ms(self, node: str) -> int | None:
        """``node``'s last heartbeat (None: it never beat, or it was given up for dead)."""
        score = await self.redis.zscore(self.nodes_key, node)
        return None if score is None else int(score)

    async def node_rooms(self, node: str) -> list[str]:
        return sorted(r.decode() for r in await self.redis.smembers(self.node_rooms_key(node)))

    async def hold_room(self, node: str, code: str, ttl_ms: int) -> None:
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.sadd(self.node_rooms_key(node), code)
            pipe.pexpire(self.node_rooms_key(node), ttl_ms * 4)
            await pipe.execute()

    async def release_room(self, node: str, code: str) -> None:
        await self.redis.srem(self.node_rooms_key(node), code)

    async def retire_node(self, node: str) -> None:
        """``node`` is stopping: no longer counted alive (its rooms' list stays for its sweep)."""
        await self.redis.zrem(self.nodes_key, node)

    async def forget_node(self, node: str) -> None:
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.delete(self.node_rooms_key(node))
            pipe.zrem(self.nodes_key, node)
            await pipe.execute()

    async def ping(self) -> bool:
        return bool(await self.redis.ping())
