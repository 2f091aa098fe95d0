"""Many processes, one Redis: ``python -m bench.loadgen_scale [--processes 1,2,3 --rooms 40]``.

For each process count n it starts n server processes sharing one Redis and one key prefix,
drives the rooms (at saturation, or ``--rate``) and prints throughput, p50/p99 latency (send to
the patch at every seat) and actions per server CPU-second (the sum of the app processes' CPU
time). The last figure is the one that shows what coordination costs: on a machine with few
cores the load generator and Redis compete with the servers, so raw throughput cannot grow with
n. Two routings (``--routing``, both by default):

- ``room``: room r's players all on process r mod n, as a balancer that routes WebSockets by room
  code does (deploy/nginx.conf): a room's commits stay on its process;
- ``spread``: seat i of room r on process (r + i) mod n, as a balancer that ignores the room
  does: every room has players on every process (the worst case). Each room is played on its
  home, the process of its first socket (app/transport/relay.py); the other processes relay their
  sockets to it.

With ``--repeat`` each process count runs that many times, interleaved; the run with the
median CPU cost per action is printed, then each count's ratio to the first count within each
repeat and the median of those (see :func:`paired_ratios`).

With ``--per-process`` the rooms are ``--rooms`` for each process (n processes drive n times as
many rooms): each process then carries the same load as the single one, so the ratio shows the
cost of coordination alone. Without it the same rooms are shared out, and each process of a
larger count runs at a fraction of the load, where an action costs more whatever the
coordination (a process that handles 53 actions a second spends ~30% more CPU on each than one
that handles 160: its caches are cold between actions, and its fixed work is spread thinner;
docs/benchmarks.md).
"""

from __future__ import annotations

import argparse
import uuid

from bench.loadgen import game_run, run_fast, spawn


async def _measure(n: int, routing: str, args: argparse.Namespace) -> dict[str, float]:
    prefix = f"scale-{uuid.uuid4().hex[:6]}"
    servers = [spawn(args.redis, prefix) for _ in range(n)]
    try:
        urls = [url for _, url in servers]
        pids = [proc.pid for proc, _ in servers]
        rooms = args.rooms * n if args.per_process else args.rooms
        return await game_run(urls, pids, rooms, args.clients, args.rate, args.duration,
                              spread=routing == "spread")
    finally:
        for proc, _ in servers:
            proc.terminate()
            proc.wait(10)


async def main_async(args: argparse.Namespace) -> None:
    counts = [int(x) for x in args.processes.split(",")]
    routings = ["room", "spread"] if args.routing == "both" else [args.routing]
    for routing in routings:
        runs: dict[int, list[dict[str, float]]] = {n: [] for n in counts}
        for _ in range(args.repeat):  # interleaved: this machine's speed wanders between runs
            for n in counts:
                runs[n].append(await _measure(n, routing, args))
        print(f"routing by {routing}" + (f" ({args.rooms} rooms per process)" if args.per_process
                                          else f" ({args.rooms} rooms in all)") + ":")
        base = None
        for n in counts:
            # the run with the median CPU cost per action stands for the process count
            run = sorted(runs[n], key=lambda r: r["cpu_us_per_action"])[len(runs[n]) // 2]
            per_cpu = 1e6 / run["cpu_us_per_action"]
            base = base or per_cpu
            each = ", ".join(f"{1e6 / r['cpu_us_per_action']:.0f}" for r in runs[n])
            print(f"{n} process{'es' if n > 1 else '  '}: {run['actions_per_s']:6.0f} actions/s, "
                  f"p50 {run['p50']:6.1f} ms, p99 {run['p99']:6.1f} ms, {per_cpu:5.0f} actions per "
                  f"server CPU-second ({per_cpu / base:.0%} of 1 process), server CPU "
                  f"{run['cpu_share']:.0%}, errors {run['errors']}"
                  + (f"  [runs: {each}]" if args.repeat > 1 else ""), flush=True)
        if args.repeat > 1 and len(counts) > 1:
            print(paired_ratios(runs, counts), flush=True)


def paired_ratios(runs: dict[int, list[dict[str, float]]], counts: list[int]) -> str:
    """Each repeat's ratio to the first count's run of the same repeat, and their median.

    The runs of one repeat follow each other within a minute, while this machine's speed
    wanders over minutes (one process's figure moved from 887 to 984 between two repeats):
    the ratio within a repeat leaves that drift out, which the ratio of the medians of all the
    runs keeps in."""
    parts = []
    for n in counts[1:]:
        ratios = sorted(runs[counts[0]][i]["cpu_us_per_action"] / run["cpu_us_per_action"]
                        for i, run in enumerate(runs[n]))
        each = ", ".join(f"{r:.0%}" for r in ratios)
        parts.append(f"{n}: {ratios[len(ratios) // 2]:.0%} [{each}]")
    return f"paired by repeat, median ratio to {counts[0]} process(es): " + "; ".join(parts)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/0")
    parser.add_argument("--processes", default="1,2,3")
    parser.add_argument("--rooms", type=int, default=40)
    parser.add_argument("--per-process", action="store_true",
                        help="--rooms for each process (the load grows with the process count)")
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--rate", type=float, default=None,
                        help="actions per client per second (default: as fast as answered)")
    parser.add_argument("--duration", type=float, default=15.0)
    parser.add_argument("--repeat", type=int, default=1,
                        help="runs per process count, interleaved; the median is printed")
    parser.add_argument("--routing", choices=["room", "spread", "both"], default="both",
                        help="room: a room's players on one process; spread: seats over processes")
    run_fast(main_async(parser.parse_args(argv)))


if __name__ == "__main__":  # pragma: no cover
    main()
