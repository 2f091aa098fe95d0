"""A Redis Cluster under play (REDIS_CLUSTER=true): 3 primaries with a replica each
(bench/rediscluster.py), 3 app processes on it, scripted players of rooms on every shard
spread over the processes (their sockets relayed to each room's home). A primary is killed
(SIGKILL) mid-game and its replica promoted; a room's slot is migrated to another primary under
play. Every room plays on, and the audit after each round (tests/app/scripted.py) finds no
acknowledged action lost or applied twice, and each player's view shows no other seat's cards.
"""

from __future__ import annotations

import asyncio
import random

import pytest
from redis.cluster import RedisCluster

from bench.rediscluster import LocalCluster

from .harness import ServerProcess, failed
from .scripted import Player, audit, level, play_round

FAST_PRESENCE = {"node_beat_ms": 200, "node_ttl_ms": 1500}


@pytest.fixture
def on_cluster(tmp_path, request):
    cluster = LocalCluster(tmp_path / "redis").start()
    servers: list[ServerProcess] = []
    try:
        for _ in range(3):
            server = ServerProcess(redis="real", prefix="cl", redis_cluster="true", **FAST_PRESENCE)
            server.env["REDIS_URL"] = cluster.url
            servers.append(server.launch())
        for server in servers:
            server.wait_started()
        yield cluster, servers
    finally:
        logs = [s.stop() for s in servers]
        cluster.stop()
        if failed(request):  # the servers' news (warnings up) of the faults, for the report
            for server, log in zip(servers, logs, strict=True):
                print(f"--- the server on port {server.port} ---")
                print("\n".join(log.splitlines()[-200:]))
    for log in logs:
        for mark in ("Traceback", '"level":"error"'):
            at = log.find(mark)
            assert at < 0, log[max(0, at - 500):at + 3000]


async def open_room(servers: list[ServerProcess], shift: int) -> tuple[str, list[Player]]:
    """A room of 3 humans and a bot, its seats on every process."""
    host = servers[shift % 3].create("Ann", {"turn_timer_s": 0})
    code = host["code"]
    infos = [host] + [servers[(shift + i) % 3].join(code, name) for i, name in enumerate(["Bob", "Cat"], 1)]
    players = [Player(servers, (shift + i) % 3, code, info["token"]) for i, info in enumerate(infos)]
    for p in players:
        await p.connect()
    assert (await players[0].request({"type": "add_bot", "level": "normal"}))["type"] == "ack"
    return code, players


async def rooms_on_every_shard(servers, client: RedisCluster, cluster: LocalCluster, per_shard: int = 1):
    """Rooms opened until each primary holds ``per_shard`` of them."""
    rooms: dict[int, list[tuple[str, list[Player]]]] = {}
    shift = 0
    while len(rooms) < 3 or any(len(v) < per_shard for v in rooms.values()):
        code, players = await open_room(servers, shift)
        shift += 1
        owner = cluster.owner(client.keyslot(f"cl:{{{code}}}:room")).port
        if len(rooms.get(owner, [])) < per_shard:
            rooms.setdefault(owner, []).append((code, players))
        else:
            for p in players:
                await p.client.close()
        assert shift < 60
    return [room for held in rooms.values() for room in held]


def no_other_hand(players: list[Player]) -> None:
    """No player was shown another seat's cards: the seats show a count, and another player's
    draws came without the cards (protocol.md: only the drawer's own copy has them)."""
    for p in players:
        assert p.client is not None
        assert all(isinstance(seat["cards"], int) for seat in p.view["players"])
        # every socket's messages: a player who reconnected after the failover saw the draws
        # before it on the socket that died
        others = [e for m in p.messages if m["type"] == "patch" for e in m["events"]
                  if e.get("kind") in ("drew", "took_stack") and e.get("player") != p.client.you]
        assert others, "no other seat drew: nothing was checked"
        assert not [e for e in others if "cards" in e], others


async def play_rooms(rooms, client, faults_for) -> None:
    async def one(i: int, code: str, players: list[Player]) -> None:
        rng = random.Random(100 + i)
        assert (await players[0].request({"type": "start"}))["type"] == "ack"
        await level(players, client, "cl", code)
        marks = {j: len(p.acked) for j, p in enumerate(players)}
        await play_round(players, client, "cl", code, rng, resend=0.2, double=0.05, faults=faults_for(i))
        await level(players, client, "cl", code)
        await audit(players, client, "cl", code, marks)
        no_other_hand(players)

    games = [one(i, code, players) for i, (code, players) in enumerate(rooms)]
    await asyncio.wait_for(asyncio.gather(*games), 240)


def command_calls(cluster: LocalCluster) -> dict[str, int]:
    """Calls of each command over the live nodes (INFO commandstats)."""
    calls: dict[str, int] = {}
    for node in cluster.nodes:
        if node.alive:
            for name, stats in node.client().info("commandstats").items():
                calls[name] = calls.get(name, 0) + int(stats["calls"])
    return calls


def assert_sharded(cluster: LocalCluster) -> None:
    """Commits and the relay went over sharded pub/sub (no cluster-wide PUBLISH), and the
    commits waited for a replica."""
    calls = command_calls(cluster)
    assert calls.get("cmdstat_spublish", 0) > 0, calls
    assert calls.get("cmdstat_publish", 0) == 0, calls
    assert calls.get("cmdstat_wait", 0) > 0, calls


async def test_rooms_on_every_shard_play_through_a_primarys_failover(on_cluster):
    cluster, servers = on_cluster
    client = RedisCluster.from_url(cluster.url)
    rooms = await rooms_on_every_shard(servers, client, cluster)
    killed = asyncio.Event()

    async def kill_a_primary() -> None:
        if killed.is_set():
            return
        killed.set()
        code = rooms[0][0]
        slot = client.keyslot(f"cl:{{{code}}}:room")
        primary = cluster.owner(slot)
        cluster.kill(primary)
        await asyncio.to_thread(cluster.wait_promoted, slot, primary)

    await play_rooms(rooms, client, lambda i: {6: kill_a_primary} if i == 0 else {})
    assert killed.is_set()
    assert_sharded(cluster)
    client.close()


async def test_rooms_play_on_while_their_slots_migrate_to_another_primary(on_cluster):
    cluster, servers = on_cluster
    client = RedisCluster.from_url(cluster.url)
    rooms = await rooms_on_every_shard(servers, client, cluster)
    moved: list[tuple[int, int]] = []

    def migrate(i: int):
        async def fault() -> None:
            slot = client.keyslot(f"cl:{{{rooms[i][0]}}}:room")
            source = cluster.owner(slot)
            target = next(p for p in cluster.primaries() if p is not source)
            await asyncio.to_thread(cluster.migrate_slot, slot, target)
            assert cluster.owner(slot) is target
            moved.append((slot, target.port))
        return fault

    await play_rooms(rooms, client, lambda i: {4 + 2 * i: migrate(i)})
    assert len(moved) == len(rooms)
    assert_sharded(cluster)
    client.close()
