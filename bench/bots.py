"""What bots cost the rest of the process: ``python -m bench.bots [--root CHECKOUT]``.

For each bot level (``normal``, ``hard``) and room count (5, 25, 100) it starts one server
process on the embedded defaults (no ``REDIS_URL``; only the per-address limits are lifted),
fills the rooms with one scripted human (who acts about every half second on their turn, and
asks for the rematch) and three bots of the level, and opens one more socket in a room of its
own that pings every 50 ms, from a process of its own (not the load generator's loop). It
prints the probe's round trips (p50/p99/max): every room of the process waits while a bot
thinks on the event loop, and a ping waits with them. Loopback only;
each run is bounded by ``--duration``. ``--root`` serves another checkout with this script (a
"before" figure). ``--paced 250`` also runs ``bench.loadgen``'s paced benchmark (250 rooms of four
scripted humans at one action a second each) in the same process, beside the bot rooms, and
prints its latencies.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import multiprocessing
import os
import subprocess
import sys
import tempfile
import time
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import httpx
import websockets

from bench.loadgen import LIFTED_LIMITS, ROOT, _free_port, _q, cpu_seconds, game_run, run_fast, wait_until_up
from bench.loadgen_table import Room, Stats, setup_rooms, start_rooms, ws_url

LEVELS = ("normal", "hard")
ROOM_COUNTS = (5, 25, 100)
HUMAN_INTERVAL_S = 0.5  # the scripted human's mean pace on their turn
PING_EVERY_S = 0.05


def spawn_embedded(root: Path, env: dict[str, str]) -> tuple[subprocess.Popen[bytes], str]:
    """A server process from the checkout at ``root`` on the embedded store, limits lifted."""
    port = _free_port()
    tmp = tempfile.gettempdir()
    environ = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
    # a key prefix of its own: with a REDIS_URL (--set), the rooms an earlier run left would be
    # due to this server (a dead process's rooms), and it would play their bots as well
    environ.update(LIFTED_LIMITS, LOG_LEVEL="WARNING", PYTHONPATH=str(root), KEY_PREFIX=f"bench-bots-{port}",
                   EMBEDDED_STORE=f"{tmp}/mercyless-bots-{port}",
                   DATABASE_URL=f"sqlite+aiosqlite:///{tmp}/mercyless-bots-{port}.sqlite3")
    environ.update(env)
    # (its log is left out: a loaded server stopped mid-play logs every socket it cancels)
    proc = subprocess.Popen([sys.executable, "-m", "app", "serve", "--port", str(port)],
                            env=environ, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=root)
    return proc, wait_until_up(proc, port)


async def probe(url: str, control: Connection) -> None:
    """A socket in a room of its own that pings every 50 ms. ``control`` says ``measure`` (its
    round trips count from then), then ``stop``; the round trips go back the same way."""
    rtts: list[float] = []
    measuring = False
    async with httpx.AsyncClient(base_url=url, timeout=30) as http:
        host = (await http.post("/api/rooms", json={"name": "Probe"})).json()
    async with websockets.connect(f"{ws_url(url)}/ws/{host['code']}", compression=None) as ws:
        await ws.send(json.dumps({"type": "hello", "token": host["token"]}))
        while json.loads(await ws.recv())["type"] != "welcome":
            pass
        next_at = time.perf_counter()
        while True:
            while control.poll():
                said = control.recv()
                if said == "stop":
                    control.send(rtts)
                    return
                measuring = said == "measure"
            sent = time.perf_counter()
            await ws.send('{"type":"ping"}')
            while json.loads(await ws.recv())["type"] != "pong":
                pass
            if measuring:
                rtts.append((time.perf_counter() - sent) * 1000)
            next_at += PING_EVERY_S
            await asyncio.sleep(max(0.0, next_at - time.perf_counter()))


def _probe_process(url: str, control: Connection) -> None:
    # a process of its own: in the generator's loop, the probe's round trips also measured how
    # late that loop ran under a thousand scripted clients
    asyncio.run(probe(url, control))


async def add_bots(rooms: list[Room], level: str) -> None:
    for room in rooms:
        host = room.players[0]
        while not host.me:
            await asyncio.sleep(0.01)
        for i in range(3):
            await host.ws.send(json.dumps({"type": "add_bot", "id": f"bot{i}", "level": level}))
    for room in rooms:  # every bot seated before the start
        host = room.players[0]
        while len(host.view.get("players", [])) < 4:
            room.changed.clear()
            await asyncio.wait_for(room.changed.wait(), 30)


async def one_run(url: str, pid: int, level: str, rooms_n: int, duration: float,
                  paced: int = 0) -> dict[str, Any]:
    rooms = await setup_rooms(url, rooms_n, 1, HUMAN_INTERVAL_S)
    stats = Stats()
    stop = asyncio.Event()
    tasks = [asyncio.create_task(room.players[0].run(url, stats, stop)) for room in rooms]
    await add_bots(rooms, level)
    await start_rooms(rooms)
    drivers = [asyncio.create_task(room.drive()) for room in rooms]
    control, theirs = multiprocessing.get_context("spawn").Pipe()
    pinger = multiprocessing.get_context("spawn").Process(target=_probe_process, args=(url, theirs))
    pinger.start()
    theirs.close()  # a probe that dies is then an end of file here, not a wait for ever
    await asyncio.sleep(3)  # warm-up: bots at their pace, workers started
    received0, cpu0, t0 = stats.received, cpu_seconds(pid), time.perf_counter()
    control.send("measure")
    humans = None
    if paced:  # the paced human benchmark in the same process, beside the bot rooms
        humans = await game_run(url, pid, paced, 4, 1.0, duration)
    else:
        await asyncio.sleep(duration)
    control.send("stop")
    elapsed = time.perf_counter() - t0
    cpu = cpu_seconds(pid) - cpu0
    frames = stats.received - received0
    for room in rooms:
        room.acting = False
        room.changed.set()
    stop.set()
    try:
        rtts: list[float] = sorted(await asyncio.to_thread(control.recv))
    except EOFError:
        rtts = []  # the probe died: no figure rather than a made-up one
    pinger.join(10)
    await asyncio.gather(*tasks, *drivers, return_exceptions=True)
    return {"p50": _q(rtts, 0.5), "p99": _q(rtts, 0.99), "max": rtts[-1] if rtts else float("nan"),
            "pings": len(rtts), "frames_per_s": frames / elapsed, "cpu_share": cpu / elapsed,
            "humans": humans}


async def main_async(args: argparse.Namespace) -> None:
    root = Path(args.root).resolve() if args.root else ROOT
    env = dict(kv.split("=", 1) for kv in args.set)
    print(f"checkout {root} ({_head(root)}), {os.cpu_count()} CPUs, {args.duration:.0f} s a run"
          + (f", {' '.join(args.set)}" if args.set else ""), flush=True)
    for level in args.levels:
        for rooms_n in args.rooms:
            proc, url = spawn_embedded(root, env)
            try:
                r = await one_run(url, proc.pid, level, rooms_n, args.duration, args.paced)
            finally:
                _stop(proc)
            print(f"{level:>6} x {rooms_n:>3} rooms: probe ping p50 {r['p50']:.1f} ms, "
                  f"p99 {r['p99']:.1f} ms, max {r['max']:.1f} ms ({r['pings']} pings); "
                  f"host frames {r['frames_per_s']:.0f}/s, "
                  f"server process CPU {r['cpu_share']:.0%}", flush=True)
            if r["humans"] is not None:
                h = r["humans"]
                print(f"    beside them, paced {args.paced} rooms x 4 humans at 1.0/s each: "
                      f"{h['actions_per_s']:.0f} actions/s, p50 {h['p50']:.1f} ms, "
                      f"p99 {h['p99']:.1f} ms, errors {h['errors']}", flush=True)


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """A server whose loop is saturated may not finish its graceful stop: it is killed then."""
    proc.terminate()
    try:
        proc.wait(20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(10)


def _head(root: Path) -> str:
    with contextlib.suppress(OSError, subprocess.CalledProcessError):
        return subprocess.check_output(["git", "-C", str(root), "rev-parse", "--short", "HEAD"],
                                       text=True).strip()
    return "?"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.bots", description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=None, help="serve this checkout (default: this one)")
    parser.add_argument("--levels", nargs="+", default=list(LEVELS))
    parser.add_argument("--rooms", nargs="+", type=int, default=list(ROOM_COUNTS))
    parser.add_argument("--duration", type=float, default=15.0)
    parser.add_argument("--paced", type=int, default=0, metavar="ROOMS",
                        help="also run the paced human benchmark (ROOMS x 4 at 1/s) beside the bots")
    parser.add_argument("--set", nargs="*", default=[], metavar="NAME=value",
                        help="settings for the server process")
    run_fast(main_async(parser.parse_args(argv)))


if __name__ == "__main__":
    main()
