"""The local Redis Cluster the cluster tests run on (bench/rediscluster.py): 3 primaries with
a replica each, a primary's SIGKILL failed over to its replica, a slot moved with its keys."""

from __future__ import annotations

import pytest
import redis
from redis.cluster import RedisCluster

from bench.rediscluster import LocalCluster


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    local = LocalCluster(tmp_path_factory.mktemp("cluster")).start()
    yield local
    local.stop()


def test_the_cluster_has_three_primaries_each_with_a_replica(cluster):
    primaries = cluster.primaries()
    assert len(primaries) == 3
    assert sum(len(cluster.slots_of(p)) for p in primaries) == 16384
    client = RedisCluster.from_url(cluster.url)
    for i in range(30):
        client.set(f"k{i}", i)
    assert [int(client.get(f"k{i}")) for i in range(30)] == list(range(30))
    replicas = [n for n in cluster.nodes if n not in primaries]
    assert len(replicas) == 3
    assert all(n.client().info("replication")["role"] == "slave" for n in replicas)
    client.close()


def test_a_slot_moves_with_its_keys_and_a_killed_primary_is_replaced_by_its_replica(cluster):
    client = RedisCluster.from_url(cluster.url)
    slot = client.keyslot("{moving}:a")
    client.set("{moving}:a", "1")
    source = cluster.owner(slot)
    target = next(p for p in cluster.primaries() if p is not source)
    cluster.migrate_slot(slot, target)
    assert cluster.owner(slot) is target
    assert target.client().execute_command("CLUSTER", "COUNTKEYSINSLOT", slot) == 1
    with pytest.raises(redis.exceptions.MovedError):
        source.client().get("{moving}:a")
    assert client.get("{moving}:a") == b"1"  # the client follows MOVED

    target.client().execute_command("WAIT", 1, 2000)
    cluster.kill(target)
    promoted = cluster.wait_promoted(slot, target)
    assert promoted is not target and promoted.alive
    assert promoted.client().get("{moving}:a") == b"1"
    client.close()
