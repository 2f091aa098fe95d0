"""Hostile sockets beside a paced game: ``python -m bench.abuse [--rooms 10] [--duration 8]``.

For each server setting (as bench.paced_tail takes them; ``-``, the default: the limits'
defaults) one server process on the real Redis, with every limit at its default unless the
setting says otherwise.
On it, paced rooms (``--rooms`` x 4 scripted players at 1 action per player per second, as
bench.loadgen's paced run) are measured alone and while 1, 4 and 16 hostile sockets flood
(``--flooders``): each says hello in a room of its own, then writes frames as fast as the
server takes them (bad JSON, pings and valid messages in turn, ``--frames`` of them at most),
reading whatever comes back (a reader too slow for its answers would be dropped as a stalled
one); a socket the server closes comes back after ``--reconnect-ms``. The flooders
run in a process of their own, each from a loopback address of its own (127.0.x.y), so the
per-address limits see them as strangers to the paced players (127.0.0.1).

Printed: the paced rooms' action latency p50/p99 (from a message to its patch at every seat of
the room) for each number of flooders, side by side per setting, with what the flooders did
(frames written, sockets closed, handshakes refused). ``--also LABEL=PATH`` adds a row for the
server of another checkout (e.g. ``git archive`` of an older commit; it ignores the settings it
does not know), run with the first setting.

``--side-by-side`` measures instead the paced rooms alone, while ``--creations`` (10,000) rooms
are asked for from rotating addresses of one IPv6 /64 (``X-Forwarded-For``, ``--creations-per-s``
as the issue found them, the run as long as they take), and while ``--silent`` (2,000) TCP
connections are held open without a byte sent (one the server closes is opened again), each on
a fresh server with every limit at its default (``ROOMS_PER_MIN`` and ``JOINS_PER_MIN`` at least
what the paced rooms' setup from 127.0.0.1 takes). Beside each, legitimate players (a new
address each) create a room and join it: printed, how many of each got which status. All of it
goes to 127.0.0.1 only, bounded in count (``MAX_CREATIONS``, ``MAX_SILENT``) and in time.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import json
import multiprocessing
import os
import random
import socket
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx

from bench.loadgen import ROOT, game_run, run_fast, settings_env, spawn

#: every limit at its default (bench.loadgen.spawn lifts them for load runs)
DEFAULT_LIMITS = {"RATE_BURST": "20", "RATE_PER_S": "5", "SOCKETS_PER_IP": "64", "FAILED_JOINS_PER_MIN": "10"}
FRAMES = (b"{not json", b'{"type":"ping"}', b'{"type":"draw","id":"flood"}')


def masked(payload: bytes) -> bytes:
    """A client's text frame (RFC 6455 5.2: masked; payloads under 126 bytes)."""
    mask = os.urandom(4)
    return bytes([0x81, 0x80 | len(payload)]) + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


CHUNK = b"".join(masked(FRAMES[i % len(FRAMES)]) for i in range(600))  # ~16 KB, 600 frames


def _handshake(port: int, code: str, source: str) -> socket.socket | None:
    """A WebSocket to ``/ws/code`` from ``source``; None when refused (or nothing answers)."""
    sock = socket.socket()
    sock.settimeout(5)
    try:
        sock.bind((source, 0))
        sock.connect(("127.0.0.1", port))
        key = base64.b64encode(os.urandom(16)).decode()
        sock.sendall((f"GET /ws/{code} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
                      f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
                      f"Sec-WebSocket-Version: 13\r\n\r\n").encode())
        response = b""
        while b"\r\n\r\n" not in response:
            part = sock.recv(4096)
            if not part:
                break
            response += part
    except OSError:
        sock.close()
        return None
    if b" 101 " not in response.split(b"\r\n", 1)[0]:
        sock.close()
        return None
    return sock


def _flood(port: int, code: str, token: str, source: str, stop: threading.Event, limit: int,
           reconnect_s: float, counts: dict[str, int]) -> None:
    """One hostile socket: hello, then frames as fast as the server takes them, again after a
    close, until ``stop`` (or ``limit`` frames)."""
    hello = masked(json.dumps({"type": "hello", "token": token}).encode())
    while not stop.is_set() and counts["frames"] < limit:
        sock = _handshake(port, code, source)
        if sock is None:
            counts["refused"] += 1
            stop.wait(reconnect_s)
            continue
        threading.Thread(target=_drain, args=(sock,), daemon=True).start()
        try:
            sock.sendall(hello)
            sock.settimeout(1)
            while not stop.is_set() and counts["frames"] < limit:
                sock.sendall(CHUNK)  # blocks while the server does not read: its pace is ours
                counts["frames"] += 600
        except OSError:
            pass
        finally:
            sock.close()
        counts["closed"] += 1
        stop.wait(reconnect_s)


def _drain(sock: socket.socket) -> None:
    """Read (and forget) what the server sends, until the socket is gone."""
    while True:
        try:
            if not sock.recv(65536):
                return
        except TimeoutError:
            continue
        except OSError:
            return


def flooders(port: int, rooms: list[tuple[str, str]], base: int, limit: int, reconnect_s: float,
             stop: Any, out: Any) -> None:
    """The flooding process: a thread per hostile socket (``rooms``: code and token each), the
    n-th from 127.0.``base``.n; ``out`` gets their counts when ``stop`` is set."""
    done = threading.Event()
    counts = [{"frames": 0, "closed": 0, "refused": 0} for _ in rooms]
    threads = [threading.Thread(target=_flood, args=(port, code, token, f"127.0.{base}.{i + 2}", done,
                                                     limit, reconnect_s, counts[i]), daemon=True)
               for i, (code, token) in enumerate(rooms)]
    for thread in threads:
        thread.start()
    stop.wait()
    done.set()
    for thread in threads:
        thread.join(5)
    out.put({k: sum(c[k] for c in counts) for k in ("frames", "closed", "refused")})


async def phase(url: str, pid: int, hostile: int, base: int, args: argparse.Namespace) -> dict[str, Any]:
    """The paced rooms measured while ``hostile`` sockets flood."""
    port = int(url.rsplit(":", 1)[1])
    rooms = []
    async with httpx.AsyncClient(base_url=url, timeout=30) as http:
        for _ in range(hostile):
            made = (await http.post("/api/rooms", json={"name": "Mallory"})).json()
            rooms.append((made["code"], made["token"]))
    ctx = multiprocessing.get_context("spawn")
    stop, out = ctx.Event(), ctx.Queue()
    proc = ctx.Process(target=flooders, args=(port, rooms, base, args.frames, args.reconnect_ms / 1000,
                                              stop, out), daemon=True)
    if hostile:
        proc.start()
    t0 = time.perf_counter()
    try:
        run = await game_run(url, pid, args.rooms, 4, 1.0, args.duration)
    finally:
        elapsed = time.perf_counter() - t0
        counts = {"frames": 0, "closed": 0, "refused": 0}
        if hostile:
            stop.set()
            counts = await asyncio.get_running_loop().run_in_executor(None, out.get, True, 30)
            proc.join(10)
    return {**run, **counts, "frames_per_s": counts["frames"] / elapsed}


def label(spec: str) -> str:
    return "defaults" if spec == "-" else spec


async def main_async(args: argparse.Namespace) -> None:
    results: list[tuple[str, list[dict[str, Any]]]] = []
    base = 1
    rows = [(label(spec), spec, ROOT) for spec in args.settings]
    rows += [(name, args.settings[0], Path(path)) for name, path in (a.split("=", 1) for a in args.also)]
    for name, spec, root in rows:
        env = {**DEFAULT_LIMITS, **settings_env(spec)}
        proc, url = spawn(args.redis, env=env, root=root)
        runs = []
        try:
            for hostile in args.flooders:
                run = await phase(url, proc.pid, hostile, base, args)
                base += 1
                runs.append(run)
                print(f"{name:>20} {hostile:>2} flooding: {run['actions_per_s']:.0f} actions/s, "
                      f"p50 {run['p50']:.1f} ms, p99 {run['p99']:.1f} ms, errors {run['errors']}; "
                      f"flooders: {run['frames']} frames written ({run['frames_per_s']:.0f}/s), "
                      f"{run['closed']} closed, {run['refused']} refused", flush=True)
        finally:
            proc.terminate()
            proc.wait(10)
        results.append((name, runs))
    head = "".join(f"{'alone' if n == 0 else f'{n} flooding':>16}" for n in args.flooders)
    print(f"\npaced {args.rooms} rooms x 4 at 1 action/s each, action latency p50 / p99 (ms)")
    print(f"{'setting':>20}{head}")
    for name, runs in results:
        print(f"{name:>20}" + "".join(f"{r['p50']:>8.1f} /{r['p99']:>6.1f}" for r in runs))


# -- side by side: a flood of creations from one /64, silent connections ---------------------------

FLOOD_NET = "2001:db8:f100:d"  # the /64 the creations come from (a documentation prefix)
MAX_CREATIONS, MAX_SILENT = 20_000, 5_000  # whatever the arguments say
FLOOD_CONNS, SILENT_PER_ADDRESS = 16, 25  # keep-alive connections of the creations; loopback sources
LEGIT_EVERY_S = 0.5  # a legitimate player's new room this often
ATTACK_GRACE_S = 30.0  # an attacker still running this long after its window stops by itself


async def _exchange(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, request: bytes) -> int:
    """One request on a keep-alive connection, its status (raw: httpx's CPU would be the bottleneck)."""
    writer.write(request)
    head = (await reader.readuntil(b"\r\n\r\n")).lower()
    length = next((int(line[15:]) for line in head.split(b"\r\n") if line.startswith(b"content-length:")), 0)
    await reader.readexactly(length)
    if b"connection: close" in head:
        raise ConnectionResetError
    return int(head.split(b" ", 2)[1])


async def _creations(port: int, count: int, seconds: float, counts: Counter[str]) -> None:
    """``count`` room creations paced over ``seconds``, each from a new address of FLOOD_NET."""
    body = b'{"name":"Mallory"}'
    t0, numbers = time.perf_counter(), iter(range(count))

    async def worker() -> None:
        reader = writer = None
        for i in numbers:
            if time.perf_counter() > t0 + seconds + ATTACK_GRACE_S:
                break
            await asyncio.sleep(max(0.0, t0 + i * seconds / count - time.perf_counter()))
            address = f"{FLOOD_NET}:" + ":".join(f"{random.getrandbits(16):x}" for _ in range(4))
            request = (f"POST /api/rooms HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nX-Forwarded-For: {address}"
                       f"\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n").encode()
            try:
                if writer is None:
                    reader, writer = await asyncio.open_connection("127.0.0.1", port)
                counts[str(await _exchange(reader, writer, request + body))] += 1
            except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError) as failed:
                counts[type(failed).__name__] += 1
                if writer is not None:
                    writer.close()
                reader = writer = None
        if writer is not None:
            writer.close()

    await asyncio.gather(*(worker() for _ in range(FLOOD_CONNS)))
    counts["over ms"] = int((time.perf_counter() - t0) * 1000)


async def _silent(port: int, count: int, seconds: float, stop: Any, ready: Any, counts: Counter[str]) -> None:
    """``count`` connections that send nothing, each opened again (five times at most) when the
    server closes it, until ``stop``; ``ready`` once the first ones are all tried."""
    loop = asyncio.get_running_loop()
    held, lifetimes = [0], []

    async def hold(i: int) -> None:
        n = i // SILENT_PER_ADDRESS
        source = f"127.201.{n // 250}.{n % 250 + 2}"
        for _ in range(5):
            sock = socket.socket()
            sock.setblocking(False)
            try:
                sock.bind((source, 0))
                await loop.sock_connect(sock, ("127.0.0.1", port))
            except OSError:
                counts["refused"] += 1
                sock.close()
                continue
            counts["opened"] += 1
            held[0] += 1
            counts["held at once"] = max(counts["held at once"], held[0])
            opened = loop.time()
            try:
                said = await loop.sock_recv(sock, 64)  # the server's answer (408, 503), or its close
                counts[f"closed by the server{': ' + said[9:12].decode() if said else ''}"] += 1
                lifetimes.append(loop.time() - opened)
            except OSError:
                counts["reset"] += 1
            finally:
                held[0] -= 1
                sock.close()

    holders = [asyncio.create_task(hold(i)) for i in range(count)]
    deadline = loop.time() + seconds + ATTACK_GRACE_S
    while not stop.is_set() and loop.time() < deadline:
        if counts["opened"] + counts["refused"] >= count:
            ready.set()
        await asyncio.sleep(0.1)
    for holder in holders:
        holder.cancel()
    await asyncio.gather(*holders, return_exceptions=True)
    if lifetimes:
        counts["closed after, median ms"] = int(sorted(lifetimes)[len(lifetimes) // 2] * 1000)


def attacker(load: str, port: int, args: argparse.Namespace, seconds: float, stop: Any, ready: Any,
             out: Any) -> None:
    """The attacking process (of its own: its CPU is not the measuring loop's)."""
    counts: Counter[str] = Counter()
    if load == "creations":
        ready.set()
        run_fast(_creations(port, min(args.creations, MAX_CREATIONS), seconds, counts))
    else:
        run_fast(_silent(port, min(args.silent, MAX_SILENT), seconds, stop, ready, counts))
    out.put(dict(counts))


async def _legit(url: str, stop: asyncio.Event) -> Counter[str]:
    """Players beside the attack, each from an address of their own: a room made, a friend joins."""
    seen: Counter[str] = Counter()
    async with httpx.AsyncClient(base_url=url, timeout=10) as http:
        for n in range(1, 10_000):
            if stop.is_set():
                break
            host, guest = f"198.51.{100 + n // 250}.{n % 250 + 1}", f"2001:db8:600d:{n:x}::1"
            try:
                made = await http.post("/api/rooms", json={"name": "Ann"}, headers={"X-Forwarded-For": host})
                seen[f"create {made.status_code}"] += 1
                if made.status_code == 201:
                    joined = await http.post(f"/api/rooms/{made.json()['code']}/join", json={"name": "Bob"},
                                             headers={"X-Forwarded-For": guest})
                    seen[f"join {joined.status_code}"] += 1
            except httpx.HTTPError as failed:
                seen[f"failed {type(failed).__name__}"] += 1
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), LEGIT_EVERY_S)
    return seen


async def side_phase(url: str, pid: int, load: str, args: argparse.Namespace) -> dict[str, Any]:
    """The paced rooms and legitimate players under ``load`` (an attacking process, or none)."""
    port = int(url.rsplit(":", 1)[1])
    ctx = multiprocessing.get_context("spawn")
    stop, ready, out = ctx.Event(), ctx.Event(), ctx.Queue()
    duration = args.duration  # the creations, at their pace, go on for as long as the flood takes
    if load == "creations":
        duration = max(duration, min(args.creations, MAX_CREATIONS) / args.creations_per_s - 3)
    seconds = duration + 3  # the paced rooms' setup, warm-up and measured window
    proc = ctx.Process(target=attacker, args=(load, port, args, seconds, stop, ready, out), daemon=True)
    attack: dict[str, Any] = {}
    if load != "alone":
        proc.start()
        await asyncio.get_running_loop().run_in_executor(None, ready.wait, 60)
    legit_stop = asyncio.Event()
    legit = asyncio.create_task(_legit(url, legit_stop))
    try:
        run = await game_run(url, pid, args.rooms, 4, 1.0, duration)
    finally:
        legit_stop.set()
        seen = await legit
        if load != "alone":
            stop.set()
            attack = await asyncio.get_running_loop().run_in_executor(None, out.get, True, 2 * ATTACK_GRACE_S)
            proc.join(10)
    return {**run, "legit": dict(seen), "attack": attack}


async def side_by_side(args: argparse.Namespace) -> None:
    loads = {"alone": "alone", "creations": f"{min(args.creations, MAX_CREATIONS)} creations from one /64",
             "silent": f"{min(args.silent, MAX_SILENT)} silent connections"}
    own = {"ROOMS_PER_MIN": str(max(10, args.rooms)), "JOINS_PER_MIN": str(max(30, 3 * args.rooms)),
           "MAX_ROOMS": "10000", "HELLOS_PER_TOKEN_PER_MIN": "30", "HELLOS_PER_IP_PER_MIN": "300"}
    results: list[tuple[str, dict[str, dict[str, Any]]]] = []
    for spec in args.settings:
        env = {**DEFAULT_LIMITS, **own, **settings_env(spec)}
        runs: dict[str, dict[str, Any]] = {}
        for load in loads:
            proc, url = spawn(args.redis, env=env)  # a fresh server: the last load's rooms and blocks gone
            try:
                run = runs[load] = await side_phase(url, proc.pid, load, args)
            finally:
                proc.terminate()
                proc.wait(10)
            print(f"{label(spec):>20} {loads[load]:>34}: {run['actions_per_s']:.0f} actions/s, "
                  f"p50 {run['p50']:.1f} ms, p99 {run['p99']:.1f} ms, errors {run['errors']}", flush=True)
            for who in ("attack", "legit"):
                if run[who]:
                    print(f"{'':>56}{who}: " + ", ".join(f"{k} x{v}" for k, v in sorted(run[who].items())),
                          flush=True)
        results.append((label(spec), runs))
    print(f"\npaced {args.rooms} rooms x 4 at 1 action/s each, action latency p50 / p99 (ms); "
          "the target: p99 under 20 ms")
    print(f"{'setting':>20}" + "".join(f"{name:>36}" for name in loads.values()))
    for name, runs in results:
        print(f"{name:>20}" + "".join(f"{r['p50']:>27.1f} /{r['p99']:>6.1f}" for r in runs.values()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("settings", nargs="*", default=["-"])
    parser.add_argument("--rooms", type=int, default=10)
    parser.add_argument("--duration", type=float, default=8.0)
    parser.add_argument("--flooders", type=lambda s: [int(n) for n in s.split(",")], default=[0, 1, 4, 16])
    parser.add_argument("--frames", type=int, default=2_000_000, help="at most, per flooding socket")
    parser.add_argument("--reconnect-ms", type=float, default=50.0)
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/0")
    parser.add_argument("--also", action="append", default=[], metavar="LABEL=PATH",
                        help="a row for the server of another checkout")
    parser.add_argument("--side-by-side", action="store_true",
                        help="alone, beside a flood of creations from one /64, beside silent connections")
    parser.add_argument("--creations", type=int, default=10_000)
    parser.add_argument("--creations-per-s", type=float, default=213.0, help="the issue's: 10,000 in 47 s")
    parser.add_argument("--silent", type=int, default=2_000)
    args = parser.parse_args()
    run_fast(side_by_side(args) if args.side_by_side else main_async(args))


if __name__ == "__main__":
    main()
