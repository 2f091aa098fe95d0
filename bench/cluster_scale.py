"""One Redis against a Redis Cluster: ``python -m bench.cluster_scale [--processes 1,2,3]``.

For each Redis (``--redis``: ``single``, a redis-server of its own; ``cluster``, 3 primaries
with a replica each, ``REDIS_CLUSTER=true`` and ``ACK_REPLICAS`` as ``--ack`` says; both by
default) and each process count n, it starts n server processes on it, drives ``--rooms`` rooms
for each process (so each process carries one process's load: the ratio shows what the
coordination costs) routed as ``--routing`` says (bench.loadgen_scale), and prints actions per
second, p50/p99, actions per server CPU-second (the app processes' CPU summed) with its ratio to
one process on the same Redis, and Redis CPU per action for each primary with its share of the
primaries' work. Every Redis runs here, so its CPU is read from /proc. With ``--ack 0,1`` the
cluster runs once with each ``ACK_REPLICAS``, side by side.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import tempfile
import uuid
from pathlib import Path

from bench.loadgen import game_run, run_fast, spawn
from bench.rediscluster import LocalCluster, _free_cluster_port, wait_for


class OneRedis:
    """A redis-server of the benchmark's own (no persistence, as the cluster's primaries' AOF is
    everysec: the same order of cost)."""

    def __init__(self, root: Path) -> None:
        self.port = _free_cluster_port()
        binary = shutil.which("redis-server")
        assert binary
        self.proc = subprocess.Popen([binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
                                      "--appendonly", "yes", "--appendfsync", "everysec", "--dir", str(root)],
                                     stdout=subprocess.DEVNULL)
        import redis
        wait_for(lambda: redis.Redis(port=self.port).ping(), 10, "redis up")
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.pids = [self.proc.pid]

    def stop(self) -> None:
        self.proc.kill()
        self.proc.wait(10)


async def _measure(url: str, env: dict[str, str], redis_pids: list[int], n: int,
                   args: argparse.Namespace) -> dict:
    prefix = f"cs-{uuid.uuid4().hex[:6]}"
    servers = [spawn(url, prefix, env) for _ in range(n)]
    try:
        return await game_run([u for _, u in servers], [p.pid for p, _ in servers], args.rooms * n,
                              args.clients, args.rate, args.duration, spread=args.routing == "spread",
                              redis_pids=redis_pids)
    finally:
        for proc, _ in servers:
            proc.terminate()
            proc.wait(10)


def _line(label: str, n: int, run: dict, base: float, ratios: list[float]) -> str:
    per_cpu = 1e6 / run["cpu_us_per_action"]
    shards = run["redis_cpu_us_per_action"]
    total = sum(shards) or 1.0
    each = " / ".join(f"{c:.0f}" for c in shards)
    share = " / ".join(f"{c / total:.0%}" for c in shards)
    paired = ""
    if ratios:
        each_ratio = ", ".join(f"{r:.0%}" for r in ratios)
        paired = f" [paired {sorted(ratios)[len(ratios) // 2]:.0%}: {each_ratio}]"
    return (f"{label:<16} {n} proc: {run['actions_per_s']:6.0f} actions/s, p50 {run['p50']:5.1f} ms, "
            f"p99 {run['p99']:6.1f} ms, {per_cpu:5.0f} actions/server CPU-s "
            f"({per_cpu / base:.0%} of 1){paired}, "
            f"Redis CPU-us/action per primary {each} (shares {share}), errors {run['errors']}")


def _index_share(before: dict[str, float], after: dict[str, float]) -> str:
    """The index keys' commands' share of the primaries' command time (INFO commandstats)."""
    spent = {k: after.get(k, 0.0) - before.get(k, 0.0) for k in after}
    total = sum(spent.values()) or 1.0
    index = sum(v for k, v in spent.items() if k in INDEX_COMMANDS)
    return f"index commands {index / total:.1%} of the primaries' command time"


#: the commands of the index keys (deadlines, history index, nodes, process rooms)
INDEX_COMMANDS = {"cmdstat_zadd", "cmdstat_zrem", "cmdstat_zrangebyscore", "cmdstat_zrange", "cmdstat_sadd",
                  "cmdstat_srem", "cmdstat_smembers", "cmdstat_zscore"}


def _command_usec(ports: list[int]) -> dict[str, float]:
    import redis
    out: dict[str, float] = {}
    for port in ports:
        for name, stats in redis.Redis(port=port).info("commandstats").items():
            out[name] = out.get(name, 0.0) + float(stats["usec"])
    return out


async def main_async(args: argparse.Namespace) -> None:
    counts = [int(x) for x in args.processes.split(",")]
    setups: list[tuple[str, str, dict[str, str], list[int], list[int]]] = []
    stops = []
    roots = []
    try:
        for kind in args.redis.split(","):
            root = tempfile.TemporaryDirectory(prefix="mercyless-bench-redis-")
            roots.append(root)
            if kind == "single":
                one = OneRedis(Path(root.name))
                stops.append(one.stop)
                setups.append(("1 Redis", one.url, {}, one.pids, [one.port]))
                continue
            cluster = LocalCluster(Path(root.name)).start()
            stops.append(cluster.stop)
            primaries = cluster.primaries()
            for ack in args.ack.split(","):
                env = {"REDIS_CLUSTER": "true", "ACK_REPLICAS": ack}
                setups.append((f"cluster ack={ack}", cluster.url, env,
                               [p.proc.pid for p in primaries], [p.port for p in primaries]))
        runs: dict[tuple[int, int], list[dict]] = {}
        for _ in range(args.repeat):  # interleaved: this machine's speed wanders between runs
            for s, (_label, url, env, pids, ports) in enumerate(setups):
                for n in counts:
                    before = _command_usec(ports)
                    run = await _measure(url, env, pids, n, args)
                    run["index"] = _index_share(before, _command_usec(ports))
                    runs.setdefault((s, n), []).append(run)
        for s, (label, *_rest) in enumerate(setups):
            base = None
            for n in counts:
                mine = runs[(s, n)]
                run = sorted(mine, key=lambda r: r["cpu_us_per_action"])[len(mine) // 2]
                base = base or 1e6 / sorted(runs[(s, counts[0])], key=lambda r: r["cpu_us_per_action"])[
                    len(mine) // 2]["cpu_us_per_action"]
                ratios = [runs[(s, counts[0])][i]["cpu_us_per_action"] / r["cpu_us_per_action"]
                          for i, r in enumerate(mine)] if n != counts[0] and args.repeat > 1 else []
                print(_line(label, n, run, base, ratios) + f"; {run['index']}", flush=True)
    finally:
        for stop in stops:
            stop()
        for root in roots:
            root.cleanup()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--redis", default="single,cluster")
    parser.add_argument("--ack", default="1", help="ACK_REPLICAS values for the cluster, e.g. 0,1")
    parser.add_argument("--processes", default="1,2,3")
    parser.add_argument("--rooms", type=int, default=20, help="rooms per process")
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--rate", type=float, default=None,
                        help="actions per client per second (default: as fast as answered)")
    parser.add_argument("--duration", type=float, default=15.0)
    parser.add_argument("--routing", choices=["room", "spread"], default="room")
    parser.add_argument("--repeat", type=int, default=1,
                        help="runs of each, interleaved; the median run is printed, and each count's "
                             "ratio to the first count within each repeat")
    run_fast(main_async(parser.parse_args(argv)))


if __name__ == "__main__":  # pragma: no cover
    main()
