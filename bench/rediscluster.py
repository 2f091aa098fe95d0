"""A local Redis Cluster for tests and benchmarks: 3 primaries and 3 replicas (redis-server on
free ports, each in a directory of its own, joined by ``redis-cli --cluster create``), stopped by
their pids.

``kill`` a primary (SIGKILL) and ``wait_promoted`` for its replica to take its slots;
``migrate_slot`` moves a slot (and its keys) from one primary to another under running traffic,
the way ``redis-cli --cluster reshard`` does it (SETSLOT IMPORTING/MIGRATING, MIGRATE, SETSLOT
NODE).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import redis

NODE_TIMEOUT_MS = 1000  # how long a silent primary takes to be failed over (plus an election)


def _free_cluster_port() -> int:
    """A port free for the node and for its cluster bus (port + 10000)."""
    while True:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if port + 10000 > 65535:
            continue
        with socket.socket() as bus:
            try:
                bus.bind(("127.0.0.1", port + 10000))
            except OSError:
                continue
        return port


def wait_for(condition, timeout: float = 30.0, what: str = "condition", every: float = 0.05):
    """Poll ``condition`` until it returns something true (that value), or fail after ``timeout``."""
    deadline = time.monotonic() + timeout
    last: Exception | None = None
    while time.monotonic() < deadline:
        try:
            value = condition()
            if value:
                return value
        except (redis.RedisError, OSError) as exc:
            last = exc
        time.sleep(every)  # polling another process's state: there is no event to wait on
    raise TimeoutError(f"{what} not met within {timeout} s (last error: {last})")


@dataclass
class Node:
    port: int
    dir: Path
    proc: subprocess.Popen[bytes] | None = None

    def client(self) -> redis.Redis:
        return redis.Redis(port=self.port, socket_timeout=2, socket_connect_timeout=1)

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None


@dataclass
class LocalCluster:
    root: Path
    replicas: int = 1  # per primary (0: 3 primaries alone)
    nodes: list[Node] = field(default_factory=list)

    def start(self) -> LocalCluster:
        binary = shutil.which("redis-server")
        assert binary and shutil.which("redis-cli"), "redis-server and redis-cli are needed"
        for i in range(3 * (1 + self.replicas)):
            self.nodes.append(self._launch(binary, self.root / f"node{i}"))
        for i, node in enumerate(self.nodes):
            for _ in range(3):
                # a port found free can be taken before the node binds it (by another test's
                # server, or as the bus port): that node exits, and starts again on another port
                up = wait_for(lambda n=node: n.proc.poll() is not None or n.client().ping(), 30,
                              f"node {node.port} up")
                if node.proc.poll() is None and up:
                    break
                node = self.nodes[i] = self._launch(binary, node.dir.with_name(node.dir.name + "-again"))
            else:
                raise RuntimeError(f"node {i} of the cluster would not start")
        subprocess.run(["redis-cli", "--cluster", "create", *[f"127.0.0.1:{n.port}" for n in self.nodes],
                        "--cluster-replicas", str(self.replicas), "--cluster-yes"],
                       check=True, capture_output=True, timeout=60)
        self.wait_healthy()
        return self

    @staticmethod
    def _launch(binary: str, where: Path) -> Node:
        node = Node(_free_cluster_port(), where)
        node.dir.mkdir(parents=True, exist_ok=True)
        node.proc = subprocess.Popen(
            [binary, "--port", str(node.port), "--bind", "127.0.0.1", "--cluster-enabled", "yes",
             "--cluster-config-file", "nodes.conf", "--cluster-node-timeout", str(NODE_TIMEOUT_MS),
             "--appendonly", "yes", "--appendfsync", "everysec", "--save", "",
             # a replica's first sync starts at once (Redis waits 5 s for more replicas to share
             # one transfer), and its primary pings it every second, not 10: a replica is listed
             # in CLUSTER SLOTS once its replication offset has moved past 0
             "--repl-diskless-sync-delay", "0", "--repl-ping-replica-period", "1",
             "--dir", str(node.dir)],
            stdout=subprocess.DEVNULL, cwd=node.dir)
        return node

    def wait_healthy(self, timeout: float = 30.0) -> None:
        """Every live node says the cluster is ok and agrees on 3 primaries, each serving slots."""
        def healthy() -> bool:
            for node in self.nodes:
                if not node.alive:
                    continue
                info = node.client().cluster("info")
                if info.get("cluster_state") != "ok":
                    return False
            if len(self.primaries()) != 3:
                return False
            if all(n.alive for n in self.nodes):  # and every replica listed under its primary
                live = next(n for n in self.nodes if n.alive).client()
                slots = live.execute_command("CLUSTER", "SLOTS")
                return all(len(entry) - 3 == self.replicas for entry in slots)
            return True
        wait_for(healthy, timeout, "cluster ok")

    def stop(self) -> None:
        for node in self.nodes:
            if node.alive:
                assert node.proc is not None
                os.kill(node.proc.pid, signal.SIGKILL)
                node.proc.wait(10)

    @property
    def url(self) -> str:
        """A URL naming one (live) node: a cluster client finds the rest."""
        return f"redis://127.0.0.1:{next(n for n in self.nodes if n.alive).port}/0"

    def _view(self) -> dict[int, dict]:
        live = next(n for n in self.nodes if n.alive)
        return {int(addr.rsplit(":", 1)[1].split("@")[0]): info
                for addr, info in live.client().cluster("nodes").items()}

    def primaries(self) -> list[Node]:
        """The live primaries that serve slots, as a live node sees them."""
        view = self._view()
        by_port = {n.port: n for n in self.nodes}
        return [by_port[p] for p, info in view.items()
                if "master" in info["flags"] and "fail" not in info["flags"] and info["slots"]
                and by_port[p].alive]

    def owner(self, slot: int) -> Node:
        by_port = {n.port: n for n in self.nodes}
        for port, info in self._view().items():
            if "master" in info["flags"] and "fail" not in info["flags"]:
                for start, *end in info["slots"]:
                    if int(start) <= slot <= int(end[0] if end else start):
                        return by_port[port]
        raise LookupError(slot)

    def slots_of(self, node: Node) -> list[int]:
        info = self._view()[node.port]
        return [s for start, *end in info["slots"]
                for s in range(int(start), int(end[0] if end else start) + 1)]

    def kill(self, node: Node) -> None:
        """SIGKILL ``node`` (by its pid)."""
        assert node.proc is not None
        os.kill(node.proc.pid, signal.SIGKILL)
        node.proc.wait(10)

    def wait_promoted(self, slot: int, dead: Node, timeout: float = 30.0) -> Node:
        """Wait until a live node (the dead primary's replica) owns ``slot`` and the cluster is
        ok again; returns it."""
        def promoted() -> Node | None:
            try:
                owner = self.owner(slot)
            except LookupError:  # failed, not yet replaced
                return None
            return owner if owner is not dead and owner.alive else None
        owner = wait_for(promoted, timeout, "a replica promoted")
        self.wait_healthy(timeout)
        return owner

    def node_id(self, node: Node) -> str:
        return node.client().cluster("myid").decode()

    def migrate_slot(self, slot: int, target: Node, batch: int = 100) -> None:
        """Move ``slot`` with its keys from its owner to ``target`` (a primary), live."""
        source = self.owner(slot)
        if source is target:
            return
        src, dst = source.client(), target.client()
        src_id, dst_id = self.node_id(source), self.node_id(target)
        dst.execute_command("CLUSTER", "SETSLOT", slot, "IMPORTING", src_id)
        src.execute_command("CLUSTER", "SETSLOT", slot, "MIGRATING", dst_id)
        while keys := src.execute_command("CLUSTER", "GETKEYSINSLOT", slot, batch):
            src.execute_command("MIGRATE", "127.0.0.1", target.port, "", 0, 5000, "KEYS", *keys)
        # the new owner first, then the old one (which then redirects to a node that already
        # owns the slot, never back and forth), then the rest (as redis-cli --cluster does)
        rest = [p for p in self.primaries() if p is not target and p is not source]
        for node in (target, source, *rest):
            node.client().execute_command("CLUSTER", "SETSLOT", slot, "NODE", dst_id)
