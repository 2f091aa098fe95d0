"""A storm of connections: ``python -m bench.storm [--rooms 2000 --seats 5 --spread 10]``.

Starts one server (the machine's Redis with ``--redis``, else the embedded store), makes
``--rooms`` rooms of ``--seats`` players, then connects every seat within ``--spread`` seconds
from ``--workers`` generator processes, as phones do (bench/crowd.py: hello, pings, jittered
backoff that honours the server's 1013 hint). Every host then starts its round (acknowledged).
The server is then restarted under them (``--restart term`` or ``kill``; ``none`` skips it) on the
same port and store, and every socket comes back by itself. Printed: how long until every socket
was welcomed, time-to-welcome p50/p99, refusals and failures by kind (a refusal with a retry is
backpressure, not an error), that every acknowledged start survived, server CPU and peak RSS, and
the generator's own CPU.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
import redis

from bench.crowd import Phone, Seat, Tally, Workers, make_rooms, own_cpu_s, raise_open_files
from bench.loadgen import LIFTED_LIMITS, ROOT, _free_port, cpu_seconds, rss_kb

# -- the generator's worker processes ----------------------------------------------------------


def _worker(url: str, seats: list[tuple[str, str, bool]], spread_s: float, start_at: float, seed: int,
            conn: Any) -> None:
    raise_open_files()
    asyncio.run(_work(url, [Seat(c, t, acts=a) for c, t, a in seats], spread_s, start_at, seed, conn))


async def _work(url: str, seats: list[Seat], spread_s: float, start_at: float, seed: int, conn: Any) -> None:
    rng = random.Random(seed)
    tally = Tally()
    phones = [Phone(url, seat, tally, random.Random(rng.random())) for seat in seats]
    loop = asyncio.get_running_loop()

    async def one(phone: Phone) -> None:
        delay = start_at + rng.uniform(0, spread_s) - time.time()
        await asyncio.sleep(max(0.0, delay))
        await phone.keep(time.perf_counter())

    tasks = [asyncio.create_task(one(p)) for p in phones]
    cpu0 = own_cpu_s()
    while True:
        command = await loop.run_in_executor(None, conn.recv)
        if command == "count":
            conn.send(sum(p.welcomed.is_set() for p in phones))
        elif command == "start":  # every host starts its round, acknowledged
            hosts = [p for p in phones if p.seat.view.get("room", {}).get("host") == p.seat.me]
            for host in hosts:
                await host.send({"type": "start"})
            deadline = time.perf_counter() + 30
            while any(h.pending for h in hosts) and time.perf_counter() < deadline:
                await asyncio.sleep(0.05)
            conn.send({"started": sum(1 for h in hosts if h.pending is None), "hosts": len(hosts)})
        elif command == "statuses":
            conn.send({p.seat.code: p.seat.view.get("room", {}).get("status") for p in phones
                       if p.welcomed.is_set()})
        elif command == "tally":
            conn.send(dict(tally.as_dict(), cpu_s=own_cpu_s() - cpu0))
            tally.first_welcome_s.clear()
            tally.rewelcome_s.clear()
            tally.failures.clear()
        elif command == "stop":
            for phone in phones:
                await phone.stop()
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            conn.send("stopped")
            return


def generator(url: str, seats: list[Seat], workers: int, spread_s: float) -> Workers:
    """The crowd split over ``workers`` processes, seat by seat."""
    return Workers(_worker, lambda w, at: (url, [(s.code, s.token, s.acts) for s in seats[w::workers]],
                                           spread_s, at, w), workers)


# -- the server ---------------------------------------------------------------------------------


def start_server(port: int, redis_url: str, store: str, prefix: str,
                 env: dict[str, str]) -> subprocess.Popen[bytes]:
    environ = {**os.environ, **LIFTED_LIMITS, "EMBEDDED_STORE": store, "LOG_LEVEL": "WARNING",
               "KEY_PREFIX": prefix, "PYTHONPATH": str(ROOT), "BOT_WORKERS": "1",
               "DATABASE_URL": f"sqlite+aiosqlite:///{store}.sqlite3", **env}  # (``env`` has the last word)
    if redis_url:
        environ["REDIS_URL"] = redis_url
    else:
        environ.pop("REDIS_URL", None)
    proc = subprocess.Popen([sys.executable, "-m", "app", "serve", "--port", str(port)], env=environ,
                            stdout=subprocess.DEVNULL, cwd=ROOT)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=0.5).status_code == 200:
                return proc
        except httpx.HTTPError:
            pass
        if proc.poll() is not None:
            raise RuntimeError("the server exited at start")
        time.sleep(0.05)
    proc.kill()
    raise RuntimeError("the server did not start")


def forget_keys(redis_url: str, prefix: str) -> int:
    """Unlink the run's keys (``prefix:*``) from a shared Redis, so a later run, or the test suite
    on the same machine, does not pay for a quarter of a million expiring leftovers."""
    if not redis_url:
        return 0  # (the embedded store's file is the run's own)
    gone = 0
    with redis.Redis.from_url(redis_url) as client:
        batch: list[bytes] = []
        for key in client.scan_iter(match=f"{prefix}:*", count=2000):
            batch.append(key)
            if len(batch) >= 2000:
                gone += client.unlink(*batch)
                batch.clear()
        if batch:
            gone += client.unlink(*batch)
    return gone


def children(pid: int) -> list[int]:
    try:
        return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def tree_cpu_s(pid: int) -> float:
    """The CPU seconds of ``pid`` and its live children (the embedded store's server, the bot
    workers)."""
    total = 0.0
    for one in [pid, *children(pid)]:
        with contextlib.suppress(OSError):  # (a child gone meanwhile)
            total += cpu_seconds(one) if one == pid else tree_cpu_s(one)
    return total


def process_rss_kb(pid: int) -> int:
    """The RSS of ``pid`` and its children (the embedded store's server, the bot workers)."""
    total = rss_kb(pid)
    for child in children(pid):
        total += process_rss_kb(child)
    return total


def wait_all(gen: Workers, total: int, limit_s: float, since: float) -> tuple[float | None, int]:
    """Seconds from ``since`` until every socket was welcomed (None: not within ``limit_s``), and
    how many were."""
    count = 0
    while time.perf_counter() - since < limit_s:
        count = gen.welcomed()
        if count >= total:
            return time.perf_counter() - since, count
        time.sleep(0.2)
    return None, count


def summary(tallies: list[dict[str, Any]], key: str) -> str:
    times = sorted(t for tally in tallies for t in tally[key])
    failures: dict[str, int] = {}
    for tally in tallies:
        for kind, n in tally["failures"].items():
            failures[kind] = failures.get(kind, 0) + n
    if not times:
        return f"no welcomes; failures {failures}"
    p99 = times[min(len(times) - 1, int(len(times) * 0.99))]
    return (f"{len(times)} welcomes, time to welcome p50 {statistics.median(times):.2f} s, p99 {p99:.2f} s, "
            f"max {times[-1]:.2f} s; retries by kind {failures or 'none'}")


def run(args: argparse.Namespace) -> dict[str, Any]:
    port = _free_port()
    store = f"{tempfile.gettempdir()}/mercyless-storm-{port}"
    prefix = f"storm{port}"
    env = dict(kv.split("=", 1) for kv in args.set)
    server = start_server(port, args.redis, store, prefix, env)
    url = f"http://127.0.0.1:{port}"
    result: dict[str, Any] = {"rooms": args.rooms, "sockets": args.rooms * args.seats}
    gen = None
    try:
        rooms = asyncio.run(make_rooms(url, args.rooms, args.seats))
        seats = [seat for room in rooms for seat in room]
        total = len(seats)
        cpu0 = cpu_seconds(server.pid)
        gen = generator(url, seats, args.workers, args.spread)
        took, count = wait_all(gen, total, args.limit, gen.start_at - time.time() + time.perf_counter())
        tallies = gen.ask("tally")
        result["storm"] = {"all_welcomed_s": took, "welcomed": count,
                           "server_cpu_s": cpu_seconds(server.pid) - cpu0,
                           "rss_mb": process_rss_kb(server.pid) / 1024}
        print(f"storm: {total} sockets within {args.spread:.0f} s: "
              + (f"all welcomed {took:.1f} s after the first connect" if took is not None
                 else f"{count} of {total} welcomed in {args.limit:.0f} s")
              + f"; {summary(tallies, 'first_welcome_s')}; "
                f"server CPU {result['storm']['server_cpu_s']:.1f} s, "
                f"RSS {result['storm']['rss_mb']:.0f} MB (with the store's process)", flush=True)
        started = gen.ask("start")
        acked = sum(s["started"] for s in started)
        result["started"] = acked
        print(f"rounds started (acknowledged): {acked} of {args.rooms}", flush=True)
        if args.restart != "none":
            server.send_signal(signal.SIGTERM if args.restart == "term" else signal.SIGKILL)
            server.wait(60)
            down = time.perf_counter()
            server = start_server(port, args.redis, store, prefix, env)
            cpu0 = cpu_seconds(server.pid)
            up = time.perf_counter() - down
            took, count = wait_all(gen, total, args.limit, down)
            tallies = gen.ask("tally")
            statuses: dict[str, str] = {}
            for part in gen.ask("statuses"):
                statuses.update(part)
            lost = sum(1 for status in statuses.values() if status == "lobby")
            result["restart"] = {"all_welcomed_s": took, "welcomed": count, "down_s": up, "lost_starts": lost,
                                 "server_cpu_s": cpu_seconds(server.pid) - cpu0,
                                 "rss_mb": process_rss_kb(server.pid) / 1024}
            print(f"restart ({args.restart}): server back in {up:.1f} s; "
                  + (f"all welcomed {took:.1f} s after the stop" if took is not None
                     else f"{count} of {total} welcomed in {args.limit:.0f} s")
                  + f"; {summary(tallies, 'rewelcome_s')}; acknowledged starts lost: {lost}; "
                    f"server CPU {result['restart']['server_cpu_s']:.1f} s", flush=True)
        gen_cpu = sum(t["cpu_s"] for t in gen.ask("tally"))
        result["generator_cpu_s"] = gen_cpu
        print(f"generator: {args.workers} processes, {gen_cpu:.1f} s of CPU in all", flush=True)
    finally:
        if gen is not None:
            gen.stop()
        server.terminate()
        server.wait(30)
        forget_keys(args.redis, prefix)
    return result


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rooms", type=int, default=2000)
    p.add_argument("--seats", type=int, default=5)
    p.add_argument("--spread", type=float, default=10.0, help="seconds over which the sockets first connect")
    p.add_argument("--limit", type=float, default=60.0, help="seconds to wait for every welcome")
    p.add_argument("--workers", type=int, default=2, help="generator processes")
    p.add_argument("--restart", choices=("term", "kill", "none"), default="term")
    p.add_argument("--redis", default="", help="the Redis URL (empty: the embedded store)")
    p.add_argument("--json", action="store_true", help="also print the figures as one JSON line")
    p.add_argument("--set", nargs="*", default=[], metavar="NAME=value", help="server settings")
    return p


def main() -> None:
    args = parser().parse_args()
    result = run(args)
    if args.json:
        print(json.dumps(result))


if __name__ == "__main__":
    main()
