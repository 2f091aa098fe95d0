"""The cluster's hot paths on a local Redis Cluster (bench/rediscluster.py): the group commit's
batches per primary (app/storage/shards.py) follow MOVED and ASK and wait for a replica, and the
sharded subscriber (app/storage/shardsub.py) follows a room's channel when its slot moves."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal

import pytest
from redis.asyncio.cluster import RedisCluster as AsyncCluster
from redis.cluster import RedisCluster
from redis.exceptions import ConnectionError as RedisConnectionError

from app.storage.shards import GatedCluster, ShardedConnection, ShardMap
from app.storage.shardsub import ShardedSubscriber
from bench.rediscluster import LocalCluster


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    local = LocalCluster(tmp_path_factory.mktemp("shards")).start()
    yield local
    local.stop()


@pytest.fixture
async def shards(cluster):
    client = GatedCluster.from_url(cluster.url, gate=8)
    yield ShardMap(client, cluster.url)
    await client.aclose()


def _keys_on_every_primary(cluster: LocalCluster, sync: RedisCluster, tag: str) -> list[str]:
    keys: dict[int, str] = {}
    i = 0
    while len(keys) < 3:
        key = f"{{{tag}{i}}}:k"
        keys.setdefault(cluster.owner(sync.keyslot(key)).port, key)
        i += 1
    return list(keys.values())


async def test_a_batch_goes_to_each_keys_primary_and_comes_back_in_order(cluster, shards):
    sync = RedisCluster.from_url(cluster.url)
    keys = _keys_on_every_primary(cluster, sync, "order")
    conn = ShardedConnection(shards, ack_replicas=0)
    sets = [("SET", k, str(i)) for i, k in enumerate(keys)]
    replies = await conn.execute(sets + [("GET", k) for k in keys])
    assert replies == [b"OK"] * 3 + [b"0", b"1", b"2"]
    for i, key in enumerate(keys):  # each on its own primary, read there directly
        assert cluster.owner(sync.keyslot(key)).client().get(key) == str(i).encode()
    conn.close()
    sync.close()


async def test_moved_after_a_slot_migrated_and_ask_while_it_migrates_are_followed(cluster, shards):
    sync = RedisCluster.from_url(cluster.url)
    conn = ShardedConnection(shards, ack_replicas=0)
    key = "{moving-batch}:k"
    assert await conn.execute([("SET", key, "a")]) == [b"OK"]
    slot = sync.keyslot(key)
    source = cluster.owner(slot)
    target = next(p for p in cluster.primaries() if p is not source)
    cluster.migrate_slot(slot, target)  # the map the connection holds still names the source
    assert await conn.execute([("SET", key, "b"), ("GET", key)]) == [b"OK", b"b"]
    assert conn.redirects >= 1 and shards.refreshes >= 1
    assert target.client().get(key) == b"b"

    # half-way through a migration back: the key already moved, the slot not yet (ASK)
    src, dst = target.client(), source.client()
    dst.execute_command("CLUSTER", "SETSLOT", slot, "IMPORTING", cluster.node_id(target))
    src.execute_command("CLUSTER", "SETSLOT", slot, "MIGRATING", cluster.node_id(source))
    src.execute_command("MIGRATE", "127.0.0.1", source.port, "", 0, 5000, "KEYS", key)
    before = conn.redirects
    assert await conn.execute([("GET", key)]) == [b"b"]
    assert conn.redirects == before + 1  # one ASK, and no map read for it
    for node in (source, target, *[p for p in cluster.primaries() if p not in (source, target)]):
        node.client().execute_command("CLUSTER", "SETSLOT", slot, "NODE", cluster.node_id(source))
    conn.close()
    sync.close()


async def test_a_batch_is_answered_only_once_a_replica_has_it(cluster, shards):
    sync = RedisCluster.from_url(cluster.url)
    key = "{acked}:k"
    primary = cluster.owner(sync.keyslot(key))
    replica = next(n for n in cluster.nodes if n.alive and n not in cluster.primaries()
                   and n.client().info("replication")["master_port"] == primary.port)
    conn = ShardedConnection(shards, ack_replicas=1, ack_timeout_ms=300)
    assert await conn.execute([("SET", key, "1")]) == [b"OK"]
    assert conn.unacked == 0
    assert replica.proc is not None
    os.kill(replica.proc.pid, signal.SIGSTOP)
    try:
        replies = await conn.execute([("SET", key, "2")])
        assert isinstance(replies[0], RedisConnectionError)
        assert "replica" in str(replies[0]) and conn.unacked == 1
    finally:
        os.kill(replica.proc.pid, signal.SIGCONT)
    assert await conn.execute([("SET", key, "3")]) == [b"OK"]
    conn.close()
    sync.close()


async def test_a_rooms_channel_is_heard_on_its_shard_and_after_its_slot_moves(cluster, shards):
    heard: asyncio.Queue[tuple[bytes, bytes]] = asyncio.Queue()
    caught_up = asyncio.Event()
    sub = ShardedSubscriber(shards, lambda ch, data: heard.put_nowait((ch, data)), caught_up.set)
    task = asyncio.create_task(sub.run())
    publisher = AsyncCluster.from_url(cluster.url)
    sync = RedisCluster.from_url(cluster.url)
    channel = "t:{ROOMX}"
    try:
        with contextlib.suppress(ConnectionError):  # the node's connection is opening:
            await asyncio.wait_for(sub.subscribe(channel), 10)
        await asyncio.wait_for(caught_up.wait(), 10)  # subscribed as it opened, then caught up
        assert await publisher.execute_command("SPUBLISH", channel, "one") == 1
        assert await asyncio.wait_for(heard.get(), 5) == (channel.encode(), b"one")
        slot = sync.keyslot(channel)
        source = cluster.owner(slot)
        target = next(p for p in cluster.primaries() if p is not source)
        caught_up.clear()
        await asyncio.to_thread(cluster.migrate_slot, slot, target)
        await asyncio.wait_for(caught_up.wait(), 10)  # subscribed again where it lives, then caught up
        assert sub.reroutes >= 1
        assert await publisher.execute_command("SPUBLISH", channel, "two") == 1
        assert await asyncio.wait_for(heard.get(), 5) == (channel.encode(), b"two")
    finally:
        task.cancel()
        await sub.close()
        await publisher.aclose()
        sync.close()
