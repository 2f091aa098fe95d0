"""A city's game night on one process: ``python -m bench.city [--rooms 2000] [--redis URL]``.

N rooms of five phones at a human pace (one action a room every ``--interval`` seconds on
average, exponential think times), phones as the browser client behaves (bench/crowd.py: its
own pings every 15 s, jittered reconnects); a third of the rooms are three humans and two bots
(easy, normal, hard in turn), one room in ten is watched by a TV screen. The generator is split
over ``--workers`` processes (a room's phones in one of them) and reports its own CPU.

Phases, on one server: every socket connects (over ``--spread`` s) and is welcomed; the hosts add
their bots; an idle window (``--idle`` s: pings and timers only) measures what an idle socket
costs; then ``--warmup`` s of play and ``--duration`` s measured. Printed per N: the actions'
round trip p50/p99 (sent to ack) as the generator's loop read the ack, and to the kernel's stamp
of the read that brought it (bench/crowd.py ``stamp_reads``: the generator's own waits for a CPU
left out, as for phones on machines of their own; the generator runs ``--generator-nice`` behind
the server for the same reason), server CPU per action and per idle socket-second, peak RSS of
the app and of its children (the embedded store's server, the bot workers), errors by code, the
generator's CPU. Several ``--rooms`` values run one after another, each on a fresh server, and
the largest that held p99 <= ``--target-ms`` is printed, by either reading.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import random
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
from prometheus_client.parser import text_string_to_metric_families

from bench import crowd
from bench.crowd import Phone, Seat, Tally, Workers, make_rooms, move_for, own_cpu_s, raise_open_files
from bench.front import nginx
from bench.loadgen import CLK, _free_port, cpu_seconds
from bench.rediscluster import LocalCluster
from bench.storm import forget_keys, process_rss_kb, start_server, tree_cpu_s, wait_all

LEVELS = ("easy", "normal", "hard")


def _worker(url: str, rooms: list[list[tuple[str, str, bool]]], bots: list[int], interval: float,
            spread_s: float, start_at: float, seed: int, conn: Any) -> None:
    raise_open_files()
    asyncio.run(_work(url, [[Seat(c, t, acts=a) for c, t, a in room] for room in rooms], bots, interval,
                      spread_s, start_at, seed, conn))


async def _drive(phones: list[Phone], interval: float, rng: random.Random, playing: asyncio.Event) -> None:
    """One room: whoever may act acts after a think time (the host starts and rematches)."""
    players = [p for p in phones if p.seat.acts]
    while True:
        await playing.wait()
        await asyncio.sleep(rng.expovariate(1 / interval) if interval > 0 else 0)
        for phone in players:
            if phone.pending is None and phone.welcomed.is_set():
                move = move_for(phone.seat, rng)
                if move is not None and await phone.send(move):
                    while phone.pending is not None and playing.is_set():
                        phone.changed.clear()
                        try:
                            await asyncio.wait_for(phone.changed.wait(), 10)
                        except TimeoutError:
                            phone.tally.errors["no_answer"] = phone.tally.errors.get("no_answer", 0) + 1
                            phone.pending = None
                    break


async def _work(url: str, rooms: list[list[Seat]], bots: list[int], interval: float, spread_s: float,
                start_at: float, seed: int, conn: Any) -> None:
    rng = random.Random(seed)
    tally = Tally()
    crowd.keep_collector_young(tally)
    phones = [[Phone(url, seat, tally, random.Random(rng.random())) for seat in room] for room in rooms]
    loop = asyncio.get_running_loop()

    async def connect(phone: Phone) -> None:
        await asyncio.sleep(max(0.0, start_at + rng.uniform(0, spread_s) - time.time()))
        await phone.keep(time.perf_counter())

    keepers = [asyncio.create_task(connect(p)) for room in phones for p in room]
    playing = asyncio.Event()
    drivers = [asyncio.create_task(_drive(room, interval, random.Random(rng.random()), playing))
               for room in phones]
    cpu0 = own_cpu_s()
    while True:
        command = await loop.run_in_executor(None, conn.recv)
        if command == "count":
            conn.send(sum(p.welcomed.is_set() for room in phones for p in room))
        elif command == "bots":  # each host adds its room's bots, acknowledged one by one
            added = 0
            for room, count in zip(phones, bots, strict=True):
                for i in range(count):
                    if await room[0].send({"type": "add_bot", "level": LEVELS[(added + i) % 3]}):
                        while room[0].pending is not None:
                            room[0].changed.clear()
                            await asyncio.wait_for(room[0].changed.wait(), 30)
                added += count
            conn.send(added)
        elif command == "play":
            playing.set()
            conn.send("playing")
        elif command == "pause":
            playing.clear()
            conn.send("paused")
        elif command == "tally":  # (versions: every commit of the rooms, the bots' moves too)
            versions = sum(max(p.seat.version for p in room) for room in phones)
            conn.send(dict(tally.as_dict(), cpu_s=own_cpu_s() - cpu0, versions=versions))
            cpu0 = own_cpu_s()
            for kept in (tally.first_welcome_s, tally.rewelcome_s, tally.latencies_ms, tally.stamped_ms,
                         tally.collector_pauses_ms):
                kept.clear()
            tally.failures.clear()
            tally.errors.clear()
            tally.actions = tally.pings = tally.unstamped = 0
        elif command == "stop":
            for room in phones:
                for phone in room:
                    await phone.stop()
            for task in keepers + drivers:
                task.cancel()
            await asyncio.gather(*keepers, *drivers, return_exceptions=True)
            conn.send("stopped")
            return


def city_workers(url: str, rooms: list[list[Seat]], bots: list[int], workers: int, interval: float,
                 spread_s: float, nice: int = 0) -> Workers:
    """The crowd split over ``workers`` processes, a room's phones in one of them."""
    return Workers(_worker, lambda w, at: (url, [[(s.code, s.token, s.acts) for s in room]
                                                 for room in rooms[w::workers]],
                                           bots[w::workers], interval, spread_s, at, w), workers, nice)


def _merge(tallies: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {"latencies_ms": [], "stamped_ms": [], "unstamped": 0, "collector_pauses_ms": [],
                           "errors": {}, "failures": {}, "actions": 0, "cpu_s": 0.0, "pings": 0,
                           "versions": 0}
    for tally in tallies:
        out["latencies_ms"] += tally["latencies_ms"]
        out["stamped_ms"] += tally["stamped_ms"]
        out["unstamped"] += tally["unstamped"]
        out["collector_pauses_ms"] += tally["collector_pauses_ms"]
        out["actions"] += tally["actions"]
        out["pings"] += tally["pings"]
        out["cpu_s"] += tally["cpu_s"]
        out["versions"] += tally["versions"]
        for key in ("errors", "failures"):
            for kind, n in tally[key].items():
                out[key][kind] = out[key].get(kind, 0) + n
    return out


def one_city(args: argparse.Namespace, rooms_n: int) -> dict[str, Any]:
    ports = [_free_port() for _ in range(args.processes)]
    prefix = f"city{ports[0]}"
    env = {"METRICS": "true", **dict(kv.split("=", 1) for kv in args.set)}
    if args.processes > 1 and not (args.redis or args.cluster):
        raise SystemExit("--processes past 1 share a Redis: give --redis or --cluster")
    servers: list[Any] = []
    city = None
    peak_rss = 0

    def cpu() -> float:
        return sum(tree_cpu_s(server.pid) for server in servers)

    def loop_cpu() -> float:  # the servers' own processes: their loops, without the bots' searches
        return sum(cpu_seconds(server.pid) for server in servers)

    def rss() -> int:
        return sum(process_rss_kb(server.pid) for server in servers)

    with contextlib.ExitStack() as stack:
        redis_url = args.redis
        if args.cluster:  # a local Redis Cluster of 3 primaries and 3 replicas (bench/rediscluster.py)
            cluster = LocalCluster(Path(tempfile.mkdtemp(prefix="mercyless-city-cluster-"))).start()
            stack.callback(cluster.stop)
            redis_url = cluster.url
            env = {**env, "REDIS_CLUSTER": "true"}
        else:  # (the servers stop first: callbacks run last-in first-out)
            stack.callback(forget_keys, redis_url, prefix)
        for port in ports:
            servers.append(start_server(port, redis_url, f"{tempfile.gettempdir()}/mercyless-city-{port}",
                                        prefix, env))
            stack.callback(_stop, servers[-1])
        url = (stack.enter_context(nginx(ports)) if args.processes > 1 else f"http://127.0.0.1:{ports[0]}")
        rooms = asyncio.run(make_rooms(url, rooms_n, args.seats, bots_every=args.bots_every,
                                       screen_every=args.screens_every))
        bots = [args.seats - sum(s.acts for s in room) for room in rooms]
        sockets = sum(len(room) for room in rooms)
        screens = sum(1 for room in rooms for s in room if not s.acts)
        city = city_workers(url, rooms, bots, args.workers, args.interval, args.spread, args.generator_nice)
        stack.callback(city.stop)
        took, count = wait_all(city, sockets, args.limit, city.start_at - time.time() + time.perf_counter())
        if took is None:
            raise RuntimeError(f"{count} of {sockets} sockets welcomed in {args.limit:.0f} s")
        city.ask("bots")
        city.ask("tally")  # the connecting phase's figures are the storm's business (bench.storm)
        cpu0 = cpu()
        time.sleep(args.idle)
        idle_cpu = cpu() - cpu0
        idle = _merge(city.ask("tally"))
        peak_rss = max(peak_rss, rss())
        city.ask("play")
        time.sleep(args.warmup)
        versions0 = _merge(city.ask("tally"))["versions"]
        histograms0 = server_histograms(ports)
        cpu0, loop_cpu0, waits0 = cpu(), loop_cpu(), machine_waits()
        t0 = time.perf_counter()
        while time.perf_counter() - t0 < args.duration:
            time.sleep(min(1.0, args.duration - (time.perf_counter() - t0)))
            peak_rss = max(peak_rss, rss())
        play_cpu, play_loop_cpu = cpu() - cpu0, loop_cpu() - loop_cpu0
        steal, pressure = (after - before for after, before in zip(machine_waits(), waits0, strict=True))
        elapsed = time.perf_counter() - t0
        histograms1 = server_histograms(ports)
        played = _merge(city.ask("tally"))
        city.ask("pause")
    lat = sorted(played["latencies_ms"])
    p99 = _p99(lat)
    stamped = sorted(played["stamped_ms"])
    idle_per_socket_us = idle_cpu / (sockets * args.idle) * 1e6
    actions = played["actions"]
    result = {
        "processes": args.processes,
        "rooms": rooms_n, "sockets": sockets, "screens": screens, "bot_rooms": sum(1 for b in bots if b),
        "actions": actions, "actions_per_s": actions / elapsed,
        "p50_ms": statistics.median(lat) if lat else float("nan"), "p99_ms": p99,
        # the same round trips to the kernel's stamp of the reply, the generator's own waits
        # for a CPU left out (bench/crowd.py stamp_reads)
        "stamped_p50_ms": statistics.median(stamped) if stamped else float("nan"),
        "stamped_p99_ms": _p99(stamped), "unstamped": played["unstamped"],
        "cpu_us_per_action": play_cpu / actions * 1e6 if actions else float("nan"),
        "commits": played["versions"] - versions0,
        "cpu_us_per_commit": play_cpu / max(1, played["versions"] - versions0) * 1e6,
        "idle_cpu_us_per_socket_s": idle_per_socket_us,
        "active_part_us_per_action": (play_cpu - idle_cpu / args.idle * elapsed) / actions * 1e6 if actions
        else float("nan"),
        "server_cpu_share": play_cpu / elapsed, "loop_cpu_share": play_loop_cpu / elapsed,
        "loop_cpu_us_per_action": play_loop_cpu / actions * 1e6 if actions else float("nan"),
        "peak_rss_mb": peak_rss / 1024,
        "errors": played["errors"], "retries": played["failures"],
        "full_collections": histogram_window(histograms0, histograms1,
                                             'mercyless_gc_pause_seconds{generation="2"}'),
        # and since the server started: the crowd's arrival, the bots, the idle window, play
        "full_collections_in_all": histogram_window({}, histograms1,
                                                    'mercyless_gc_pause_seconds{generation="2"}'),
        "loop_late": histogram_window(histograms0, histograms1, "mercyless_loop_late_seconds"),
        "inbox_to_commit": histogram_window(histograms0, histograms1, "mercyless_action_seconds"),
        "steal_share": steal / elapsed, "cpu_pressure_share": pressure / elapsed,
        "generator_longest_pause_ms": max(played["collector_pauses_ms"], default=0.0),
        "generator_cpu_share": (played["cpu_s"] + idle["cpu_s"]) / (elapsed + args.idle),
    }
    print(f"{rooms_n} rooms on {args.processes} process(es) ({sockets} sockets, {screens} screens, "
          f"{result['bot_rooms']} with bots): "
          f"{actions} actions in {elapsed:.0f} s ({result['actions_per_s']:.0f}/s), "
          f"p50 {result['p50_ms']:.1f} ms, p99 {p99:.1f} ms (to the kernel's stamp of the reply: "
          f"p50 {result['stamped_p50_ms']:.1f} ms, p99 {result['stamped_p99_ms']:.1f} ms, "
          f"{result['unstamped']} unstamped); "
          f"server CPU {result['cpu_us_per_action']:.0f} us/action "
          f"({result['active_part_us_per_action']:.0f} beyond the idle cost; "
          f"{result['cpu_us_per_commit']:.0f} per commit, the bots' moves too), "
          f"idle {idle_per_socket_us:.1f} us per socket-second, "
          f"{100 * result['server_cpu_share']:.0f}% of a core (its loop's process "
          f"{100 * result['loop_cpu_share']:.0f}%, {result['loop_cpu_us_per_action']:.0f} us/action); "
          f"peak RSS {result['peak_rss_mb']:.0f} MB (app and children); "
          f"server side: inbox to commit p99 <= {1000 * result['inbox_to_commit']['p99']:.0f} ms, "
          f"the loop late p99 <= {1000 * result['loop_late']['p99']:.0f} ms, "
          f"full collections {result['full_collections']['count']:.0f} "
          f"({1000 * result['full_collections']['sum']:.0f} ms in all; since the server started "
          f"{result['full_collections_in_all']['count']:.0f}, "
          f"{1000 * result['full_collections_in_all']['sum']:.0f} ms); "
          f"errors {played['errors'] or 'none'}; "
          f"retries {played['failures'] or 'none'}; "
          f"generator {100 * result['generator_cpu_share']:.0f}% of a core "
          f"in {args.workers} processes (its longest collection "
          f"{result['generator_longest_pause_ms']:.0f} ms); "
          f"the machine: steal {100 * result['steal_share']:.1f}% of a core, "
          f"some task waiting for a CPU {100 * result['cpu_pressure_share']:.0f}% of the time", flush=True)
    return result


def _p99(ordered: list[float]) -> float:
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] if ordered else float("nan")


def machine_waits() -> tuple[float, float]:
    """(steal, cpu_pressure) so far, in seconds: the time the hypervisor kept this machine's
    CPUs from it (/proc/stat), and the time some runnable task here waited for a CPU
    (/proc/pressure/cpu); both 0 where the kernel does not say."""
    steal = pressure = 0.0
    with contextlib.suppress(OSError, ValueError, IndexError):
        fields = Path("/proc/stat").read_text().splitlines()[0].split()
        steal = int(fields[8]) / CLK
    with contextlib.suppress(OSError, ValueError, IndexError):
        some = Path("/proc/pressure/cpu").read_text().splitlines()[0]
        pressure = int(some.rsplit("total=", 1)[1]) / 1e6
    return steal, pressure


def server_histograms(ports: list[int]) -> dict[str, dict[str, float]]:
    """The servers' histograms so far, summed (prometheus_client's own parser): name, with its
    labels but ``le``, -> ``le`` -> count, and ``sum`` -> seconds."""
    out: dict[str, dict[str, float]] = {}
    for port in ports:
        text = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=10).text
        for family in text_string_to_metric_families(text):
            if family.type != "histogram":
                continue
            for sample in family.samples:
                if sample.name.endswith("_bucket"):
                    le = sample.labels["le"]
                elif sample.name.endswith("_sum"):
                    le = "sum"
                else:
                    continue
                rest = ",".join(f'{k}="{v}"' for k, v in sample.labels.items() if k != "le")
                key = family.name + (f"{{{rest}}}" if rest else "")
                window = out.setdefault(key, {})
                window[le] = window.get(le, 0.0) + sample.value
    return out


def histogram_window(before: dict[str, dict[str, float]], after: dict[str, dict[str, float]],
                     name: str) -> dict[str, float]:
    """What a histogram gained between two readings: ``count``, ``sum`` and ``p99`` (the upper
    bound of the bucket holding it, in seconds)."""
    gained = {le: n - before.get(name, {}).get(le, 0.0) for le, n in after.get(name, {}).items()}
    count = gained.get("+Inf", 0.0)
    bounds = sorted((float(le), n) for le, n in gained.items() if le not in ("sum", "+Inf"))
    p99 = next((le for le, n in bounds if n >= 0.99 * count), float("inf")) if count else 0.0
    return {"count": count, "sum": gained.get("sum", 0.0), "p99": p99}


def _stop(server: Any) -> None:
    server.terminate()
    server.wait(30)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rooms", type=int, nargs="+", default=[2000])
    p.add_argument("--seats", type=int, default=5)
    p.add_argument("--interval", type=float, default=3.0, help="mean seconds between a room's actions")
    p.add_argument("--bots-every", type=int, default=3, help="every k-th room has two bots (0: none)")
    p.add_argument("--screens-every", type=int, default=10, help="every k-th room has a screen (0: none)")
    p.add_argument("--spread", type=float, default=10.0)
    p.add_argument("--limit", type=float, default=120.0, help="seconds to wait for every welcome")
    p.add_argument("--idle", type=float, default=10.0)
    p.add_argument("--warmup", type=float, default=20.0,
                   help="seconds of play before the measured window (the first deals' bot searches settle)")
    p.add_argument("--duration", type=float, default=30.0)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--processes", type=int, default=1,
                   help="server processes behind the shipped nginx (bench/front.py), sharing --redis")
    p.add_argument("--generator-nice", type=int, default=10,
                   help="the generator's processes this much nicer than the server's (10: the server first, "
                        "as if the phones had machines of their own; 0: the generator preempts the server)")
    p.add_argument("--target-ms", type=float, default=20.0)
    p.add_argument("--redis", default="", help="the Redis URL (empty: the embedded store)")
    p.add_argument("--cluster", action="store_true", help="on a local Redis Cluster (3 + 3 nodes) instead")
    p.add_argument("--json", action="store_true")
    p.add_argument("--set", nargs="*", default=[], metavar="NAME=value", help="server settings")
    return p


def main() -> None:
    args = parser().parse_args()
    results = [one_city(args, n) for n in args.rooms]
    for key, how in (("p99_ms", "as the generator's loop read the replies"),
                     ("stamped_p99_ms", "to the kernel's stamp of the replies")):
        held = [r["rooms"] for r in results if r[key] <= args.target_ms and not r["errors"]]
        print(f"largest N that held p99 <= {args.target_ms:.0f} ms with no error, {how}: "
              f"{max(held) if held else 'none'}")
    if args.json:
        print(json.dumps(results))


if __name__ == "__main__":
    main()
