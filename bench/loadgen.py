"""Load generator: ``python -m bench.loadgen [--rooms 250 --clients 4 --rate 1 --duration 20]``.

Starts a server process (real Redis at ``--redis``, limits lifted for one address) or drives
``--url``, fills N rooms with M scripted WebSocket players, and prints for a paced run and a
saturation run: actions/s, p50/p99 latency from sending an action to its patch arriving at every
seat of the room, server CPU-us per action, errors; then the same stack's bare WebSocket echo
(the ceiling) and the idle memory per connection.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
import websockets

from app.core import gc_pacing
from bench.loadgen_table import Stats, setup_rooms, start_rooms, ws_url

ROOT = Path(__file__).resolve().parent.parent
CLK = os.sysconf("SC_CLK_TCK")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK


def rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


async def game_run(url: str | list[str], pid: int | list[int] | None, rooms_n: int, clients: int,
                   rate: float | None, duration: float, spread: bool = True,
                   redis_pids: list[int] | None = None) -> dict[str, Any]:
    """Drive ``rooms_n`` rooms; with several server ``url``s, a room's players are spread over
    them (seat i of room r on server (r + i) mod n, so the rooms' first sockets, and with them
    their homes, are shared out as a balancer that ignores the room shares them; with
    ``spread=False`` room r is on server r mod n), and
    ``pid`` lists every server process (CPU is summed); ``redis_pids``: local redis-servers whose
    CPU per action is reported each (``redis_cpu_us_per_action``)."""
    urls = [url] if isinstance(url, str) else url
    pids = [] if pid is None else [pid] if isinstance(pid, int) else pid
    interval = 0.0 if rate is None else 1.0 / (rate * clients)
    rooms = await setup_rooms(urls[0], rooms_n, clients, interval)
    stats = Stats()
    stop = asyncio.Event()
    for room in rooms:
        stats.seats[room.code] = clients
    tasks = [asyncio.create_task(p.run(urls[(r + i if spread else r) % len(urls)], stats, stop))
             for r, room in enumerate(rooms) for i, p in enumerate(room.players)]
    await start_rooms(rooms)
    drivers = [asyncio.create_task(room.drive()) for room in rooms]
    await asyncio.sleep(2)  # warm-up
    await _pause_own_collector()
    try:
        stats.sent.clear()
        stats.arrivals.clear()
        stats.actions = stats.errors = 0
        stats.error_codes.clear()
        stats.welcomes = stats.received = 0
        cpu0 = sum(map(cpu_seconds, pids))
        redis0 = [cpu_seconds(p) for p in redis_pids or ()]
        own0 = time.process_time()
        t0 = time.perf_counter()
        await asyncio.sleep(duration)
        for room in rooms:
            room.acting = False
            room.changed.set()
        elapsed = time.perf_counter() - t0
        cpu = sum(map(cpu_seconds, pids)) - cpu0
        redis_cpu = [cpu_seconds(p) - c0 for p, c0 in zip(redis_pids or (), redis0, strict=True)]
        own = time.process_time() - own0
        actions, received = stats.actions, stats.received
        await asyncio.sleep(0.5)  # let the last patches land
    finally:
        _resume_own_collector()
    lat = sorted(stats.latencies_ms())
    stop.set()
    await asyncio.gather(*tasks, *drivers, return_exceptions=True)
    return {"actions_per_s": actions / elapsed, "p50": _q(lat, 0.5), "p99": _q(lat, 0.99),
            "cpu_us_per_action": cpu / max(actions, 1) * 1e6, "errors": stats.errors, "actions": actions,
            "error_codes": dict(stats.error_codes), "welcomes": stats.welcomes,
            "frames_per_action": (received + actions) / max(actions, 1),
            "cpu_share": cpu / elapsed,
            "redis_cpu_us_per_action": [c / max(actions, 1) * 1e6 for c in redis_cpu],
            # the generator's own CPU: near 100% it is the bottleneck, and latencies measure it
            "generator_cpu_share": own / elapsed}


async def _pause_own_collector() -> None:
    """Keep the generator's own full collections out of the latencies it measures: over 1000
    sockets one pauses it 70-170 ms (measured with gc.callbacks), which showed as the p99 of a
    server that answered in a few ms. The measured window is short; cycles wait until after it.
    The last collection comes first, and the frames that queued up during it are read before
    the window opens."""
    gc.collect()
    gc.freeze()
    gc.disable()
    await asyncio.sleep(0.2)


def _resume_own_collector() -> None:
    gc.enable()
    gc.unfreeze()


def _q(values: list[float], q: float) -> float:
    return values[min(len(values) - 1, int(len(values) * q))] if values else float("nan")


ECHO, ECHO_FASTAPI = "/ws-echo", "/ws-echo-fastapi"


async def echo_run(url: str, pid: int | None, conns: int, duration: float, path: str = ECHO
                   ) -> dict[str, Any]:
    payload = json.dumps({"type": "play", "id": "x" * 8, "card": "r-7", "uno": False})
    count = 0
    stop = False
    lat: list[float] = []

    async def one() -> None:
        nonlocal count
        async with websockets.connect(f"{ws_url(url)}{path}", compression=None) as ws:
            while not stop:
                t = time.perf_counter()
                await ws.send(payload)
                await ws.recv()
                count += 1
                lat.append((time.perf_counter() - t) * 1000)

    tasks = [asyncio.create_task(one()) for _ in range(conns)]
    await asyncio.sleep(1)
    await _pause_own_collector()
    try:
        count = 0
        lat.clear()
        cpu0 = cpu_seconds(pid) if pid else 0.0
        t0 = time.perf_counter()
        await asyncio.sleep(duration)
        elapsed = time.perf_counter() - t0
        done = count
        cpu = (cpu_seconds(pid) - cpu0) if pid else 0.0
        stop = True
    finally:
        _resume_own_collector()
    await asyncio.gather(*tasks, return_exceptions=True)
    lat.sort()
    return {"msgs_per_s": done / elapsed, "cpu_us_per_msg": cpu / max(done, 1) * 1e6, "p99": _q(lat, 0.99)}


#: Long enough for the server's collector to notice it went idle (app/core/gc_pacing.py).
IDLE_SETTLE_S = gc_pacing.idle_collection_within_s() + 1.0


async def idle_memory(url: str, pid: int, conns: int) -> float:
    rooms = await setup_rooms(url, conns // 4, 4, 0.0)
    # the server idle a moment, before and after: its collector tidies what the runs before
    # left (and the handshakes) once it goes quiet (app/core/gc_pacing.py), as it would between
    # game nights; measured straight after a busy run, the new sockets could not reuse that
    # memory
    await asyncio.sleep(IDLE_SETTLE_S)
    before = rss_kb(pid)
    sockets = []
    for room in rooms:
        for p in room.players:
            ws = await websockets.connect(f"{ws_url(url)}/ws/{room.code}", compression=None)
            await ws.send(json.dumps({"type": "hello", "token": p.token}))
            await ws.recv()
            sockets.append(ws)
    await asyncio.sleep(IDLE_SETTLE_S)
    after = rss_kb(pid)
    for ws in sockets:
        await ws.close()
    return (after - before) / max(len(sockets), 1)


async def print_idle_memory(args: argparse.Namespace, url: str, pid: int, fresh: bool) -> None:
    """On a server process of its own when this run started the servers: one that held more
    sockets before reuses their memory for the new ones (a server that had run the paced
    benchmark read 0.6 KB per connection; a fresh one ~23 KB)."""
    proc = None
    if fresh:
        proc, url = spawn(args.redis)
        pid = proc.pid
    try:
        mem = await idle_memory(url, pid, args.idle)
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait(10)
    where = "a fresh server process" if fresh else "the server given, after the runs above"
    print(f"idle memory: {mem:.1f} KB per connection over {args.idle} connections ({where})")


def settings_env(spec: str) -> dict[str, str]:
    """A benchmark's settings argument (``NAME=value,NAME=value``, or ``-`` for the defaults)
    as the environment :func:`spawn` adds."""
    return dict(kv.split("=", 1) for kv in spec.split(",")) if spec != "-" else {}


#: every per-address and per-socket limit, lifted: a load generator is a thousand users on one
#: address, and a probe pings more often than a phone
LIFTED_LIMITS = {
    "RATE_BURST": "1000000", "RATE_PER_S": "1000000", "SOCKETS_PER_IP": "0",
    "FAILED_JOINS_PER_MIN": "0", "ROOMS_PER_MIN": "0", "JOINS_PER_MIN": "0", "MAX_ROOMS": "0",
    "PING_BURST": "1000000", "PING_PER_S": "1000000",
    "HELLOS_PER_TOKEN_PER_MIN": "0", "HELLOS_PER_IP_PER_MIN": "0",
}


def spawn(redis_url: str, prefix: str | None = None, env: dict[str, str] | None = None,
          root: Path = ROOT) -> tuple[subprocess.Popen[bytes], str]:
    """Start a server process on ``redis_url`` (empty: the embedded store, in a folder of its
    own unless ``env`` names one) with the per-address limits lifted (and ``env``'s settings on
    top), from the checkout at ``root``; returns it and its URL once it answers."""
    port = _free_port()
    environ = dict(os.environ, **LIFTED_LIMITS, REDIS_URL=redis_url,
               EMBEDDED_STORE=f"{tempfile.gettempdir()}/mercyless-load-{port}",
               LOG_LEVEL="WARNING", KEY_PREFIX=prefix or f"load{port}",
               # the caller's path after ours (instrumentation such as a sitecustomize)
               PYTHONPATH=os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH")])),
               # a database file of its own: processes sharing one SQLite file would wait on its lock
               DATABASE_URL=f"sqlite+aiosqlite:///{tempfile.gettempdir()}/mercyless-load-{port}.sqlite3")
    # the echoes come with bench.serve; a checkout older than it served them with BENCH_ECHO
    if (root / "bench" / "serve.py").exists():
        command = [sys.executable, "-m", "bench.serve", "--port", str(port)]
    else:
        command = [sys.executable, "-m", "app", "serve", "--port", str(port)]
        environ["BENCH_ECHO"] = "true"
    environ.update(env or {})
    if not environ["REDIS_URL"]:
        del environ["REDIS_URL"]
    proc = subprocess.Popen(command, env=environ,
                            stdout=subprocess.DEVNULL, cwd=root)
    return proc, wait_until_up(proc, port)


def wait_until_up(proc: subprocess.Popen[bytes], port: int, within_s: float = 30.0) -> str:
    """The URL of the server ``proc`` started on ``port``, once it answers (it is killed if it
    does not within ``within_s`` seconds: a fresh interpreter on a machine busy with a parallel
    test run took over 10 s once)."""
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            break
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(f"{url}/healthz", timeout=0.5).status_code == 200:
                return url
        time.sleep(0.05)
    proc.kill()
    raise RuntimeError("server did not start")


async def main_async(args: argparse.Namespace) -> None:
    proc = None
    url, pid = args.url, args.server_pid
    if url is None:
        proc, url = spawn(args.redis)
        pid = proc.pid
    try:
        paced = await game_run(url, pid, args.rooms, args.clients, args.rate, args.duration)
        print(f"paced   {args.rooms} rooms x {args.clients} clients at {args.rate}/s each: "
              f"{paced['actions_per_s']:.0f} actions/s, p50 {paced['p50']:.1f} ms, "
              f"p99 {paced['p99']:.1f} ms, "
              f"{paced['cpu_us_per_action']:.0f} server CPU-us/action, errors {paced['errors']} "
              f"(server CPU {paced['cpu_share']:.0%}, load generator CPU {paced['generator_cpu_share']:.0%})")
        # the saturated run and the echoes alternate, ``--repeat`` times: this machine's speed
        # drifts by 10-20% within minutes, so a ratio is taken between neighbouring runs and the
        # median of those is the figure
        ratios: list[tuple[float, float, float]] = []
        for _ in range(args.repeat):
            sat = await game_run(url, pid, args.sat_rooms, args.clients, None, args.duration)
            print(f"saturated {args.sat_rooms} rooms x {args.clients}: {sat['actions_per_s']:.0f} actions/s, "
                  f"p50 {sat['p50']:.1f} ms, p99 {sat['p99']:.1f} ms, {sat['cpu_us_per_action']:.0f} "
                  f"server CPU-us/action (server CPU {sat['cpu_share']:.0%}), errors {sat['errors']}")
            echo = await echo_run(url, pid, args.echo_conns, args.duration, ECHO)
            print(f"echo    {args.echo_conns} connections: {echo['msgs_per_s']:.0f} msgs/s, "
                  f"{echo['cpu_us_per_msg']:.1f} server CPU-us/msg, p99 {echo['p99']:.1f} ms")
            routed = await echo_run(url, pid, args.echo_conns, args.duration, ECHO_FASTAPI)
            print(f"echo through FastAPI's router: {routed['msgs_per_s']:.0f} msgs/s, "
                  f"{routed['cpu_us_per_msg']:.1f} server CPU-us/msg, p99 {routed['p99']:.1f} ms")
            if pid:
                # an echo message is two frames (in, out); an action is its message, the ack and
                # a patch for every seat
                per_frame = sat["cpu_us_per_action"] / sat["frames_per_action"]
                ratios.append((echo["cpu_us_per_msg"] / sat["cpu_us_per_action"],
                               echo["cpu_us_per_msg"] / 2 / per_frame,
                               routed["cpu_us_per_msg"] / 2 / per_frame))
        if pid:
            per_action, per_frame, per_routed_frame = map(statistics.median, zip(*ratios, strict=True))
            print(f"saturation throughput per server CPU-second: {per_action:.0%} of the echo ceiling "
                  f"(median of {len(ratios)})")
            print(f"counted in frames: {sat['frames_per_action']:.1f} frames per action -> "
                  f"{per_frame:.0%} of the echo ceiling's frames ({per_routed_frame:.0%} of the "
                  f"FastAPI-routed echo's) (median of {len(ratios)})")
            if args.idle > 0:  # (none: no figure, rather than a difference divided by one)
                await print_idle_memory(args, url, pid, fresh=proc is not None)
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait(10)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--url", default=None, help="drive a running server (with BENCH_ECHO=true)")
    parser.add_argument("--server-pid", type=int, default=None)
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/0")
    parser.add_argument("--rooms", type=int, default=250)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--rate", type=float, default=1.0, help="actions per client per second")
    parser.add_argument("--sat-rooms", type=int, default=50)
    parser.add_argument("--duration", type=float, default=15.0)
    parser.add_argument("--echo-conns", type=int, default=200)
    parser.add_argument("--idle", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=1,
                        help="saturated and echo runs, alternating (the ratios' median is printed)")
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    run_fast(main_async(args))


def run_fast(coro: Any) -> None:
    """``asyncio.run`` on uvloop when it is installed (the loop the server runs on)."""
    try:
        import uvloop

        uvloop.install()
    except ImportError:
        pass
    asyncio.run(coro)


if __name__ == "__main__":  # pragma: no cover
    main()
